#!/usr/bin/env bash
# Builds the release `touchpoint` of a commit into a folder, to compare commits with ab.sh.
#
#   scripts/bench/build.sh REV OUT
#
#   REV  a commit, branch or tag of this repository; `worktree` builds the checkout as it is
#   OUT  a folder for the binaries; the commit's sources and build products are kept in
#        OUT/src, so that building the next commit there only recompiles what differs
#
# Prints the binary's path: OUT/touchpoint-<short hash> (or OUT/touchpoint-worktree). The
# commit's tree is exported with `git archive`, so neither the checkout nor its worktrees change.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 REV OUT" >&2; exit 2; }
rev=$1
out=$(mkdir -p "$2" && cd "$2" && pwd)
root=$(cd "$(dirname "$0")/../.." && pwd)

if [ "$rev" = worktree ]; then
    swift build -c release --package-path "$root/Server" --product touchpoint >&2
    cp "$root/Server/.build/release/touchpoint" "$out/touchpoint-worktree"
    echo "$out/touchpoint-worktree"
    exit 0
fi

hash=$(git -C "$root" rev-parse --short "$rev^{commit}")
mkdir -p "$out/src"
find "$out/src" -mindepth 1 -maxdepth 1 ! -name Server -exec rm -rf {} +
if [ -d "$out/src/Server" ]; then
    find "$out/src/Server" -mindepth 1 -maxdepth 1 ! -name .build -exec rm -rf {} +
fi
git -C "$root" archive "$hash" | tar -x -C "$out/src"
echo "== swift build -c release --package-path Server (at $hash)" >&2
swift build -c release --package-path "$out/src/Server" --product touchpoint >&2
cp "$out/src/Server/.build/release/touchpoint" "$out/touchpoint-$hash"
echo "$out/touchpoint-$hash"
