#!/usr/bin/env bash
# What adding the SDK costs an app: the packages SwiftPM resolves, and the time to resolve and build.
#
#   scripts/bench/consumer.sh [DIR]
#
#   DIR  where to create the consumer package (default: a temporary folder, removed afterwards)
#
# Creates an app-like package (one executable target that depends on the `Touchpoint` product of
# this checkout by path, imports it and records one event), then from an empty .build times
# `swift package resolve` and (unless BUILD=0) a debug `swift build`, and lists the packages
# resolved. The packages come from wherever SwiftPM fetches them here (a mirror or the network),
# so the times are for comparing two checkouts on one machine; the count is the figure.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=${1:-}
if [ -z "$dir" ]; then
    dir=$(mktemp -d)
    trap 'rm -rf "$dir"' EXIT
fi
mkdir -p "$dir/Sources/Consumer"
identity=$(basename "$root" | tr '[:upper:]' '[:lower:]')
cat >"$dir/Package.swift" <<EOF
// swift-tools-version:6.2
import PackageDescription

let package = Package(
    name: "Consumer",
    platforms: [.macOS(.v14), .iOS(.v17)],
    dependencies: [.package(path: "$root")],
    targets: [
        .executableTarget(name: "Consumer", dependencies: [.product(name: "Touchpoint", package: "$identity")])
    ]
)
EOF
cat >"$dir/Sources/Consumer/main.swift" <<'EOF'
import Touchpoint

EventRecorder.shared.record("app_opened")
EOF

cd "$dir"
rm -rf .build Package.resolved
seconds() { # seconds COMMAND…: runs COMMAND quietly (its output shown if it fails), prints its wall time
    local started
    started=$(date +%s.%N)
    "$@" >"$dir/.log" 2>&1 || { cat "$dir/.log" >&2; exit 1; }
    echo "$started $(date +%s.%N)" | awk '{ printf "%.1f", $2 - $1 }'
}
resolve=$(seconds swift package resolve)
echo "swift package resolve: $resolve s"
if [ -f Package.resolved ]; then
    pins=$(python3 -c 'import json; print(" ".join(p["identity"] for p in json.load(open("Package.resolved"))["pins"]))')
else
    pins=
fi
echo "packages resolved: $(echo "$pins" | wc -w) ($pins)"
if [ "${BUILD:-1}" != 0 ]; then
    build=$(seconds swift build)
    echo "swift build (debug): $build s"
fi
