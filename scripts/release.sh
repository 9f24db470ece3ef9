#!/usr/bin/env bash
# Builds the `touchpoint` release binary with the Swift runtime and Foundation linked in
# statically, so it runs on a Linux machine without Swift, and checks that it does:
#   scripts/release.sh            # writes dist/touchpoint and prints its size
# The check runs the binary with no Swift library reachable (an empty environment, no
# LD_LIBRARY_PATH, and `ldd` must list no libswift*/libFoundation*), then starts `serve` on a free
# port and asks /health/ready. deploy/ holds a systemd unit and a Dockerfile that use the binary.
set -euo pipefail
cd "$(dirname "$0")/.."

# Foundation's networking, linked in statically, calls libcurl: link the system's libcurl.so.4
# (Debian's libcurl4, on every server) without needing its -dev package.
libcurl=$(ldconfig -p | awk '/libcurl\.so\.4 .*x86-64|libcurl\.so\.4 .*AArch64/ && !/gnutls|nss/ { print $NF; exit }')
[ -n "$libcurl" ] || { echo "error: libcurl.so.4 not found (apt-get install libcurl4)" >&2; exit 1; }
links=.build-release/link
mkdir -p "$links" && ln -sf "$libcurl" "$links/libcurl.so"
swift build -c release --package-path Server --product touchpoint --static-swift-stdlib \
    -Xlinker -L"$PWD/$links" --scratch-path .build-release
mkdir -p dist
cp .build-release/release/touchpoint dist/touchpoint
strip dist/touchpoint 2>/dev/null || true
size=$(stat -c %s dist/touchpoint)
echo "dist/touchpoint: $size bytes ($(( size / 1024 / 1024 )) MiB)"

# No Swift library may be needed at run time.
if ldd dist/touchpoint | grep -Ei 'libswift|libFoundation|libdispatch|libBlocksRuntime'; then
    echo "error: dist/touchpoint still needs the Swift libraries above" >&2
    exit 1
fi
echo "shared libraries it needs (all from the operating system):"
ldd dist/touchpoint | sed 's/^/  /'

# It runs with nothing of Swift reachable: an empty environment, from another directory.
data=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$data"' EXIT
env -i HOME="$data" PATH=/usr/bin:/bin "$PWD/dist/touchpoint" --help > /dev/null
env -i HOME="$data" PATH=/usr/bin:/bin "$PWD/dist/touchpoint" serve --port 18473 --data "$data/touchpoint-data" \
    --log-level warning > "$data/serve.log" 2>&1 &
pid=$!
for _ in $(seq 1 100); do
    if curl -fsS http://127.0.0.1:18473/health/ready > "$data/ready.json" 2>/dev/null; then break; fi
    sleep 0.1
done
grep -q '"status":"ready"' "$data/ready.json" || { cat "$data/serve.log" >&2; echo "error: not ready" >&2; exit 1; }
echo "dist/touchpoint serves without Swift installed: $(cat "$data/ready.json")"
