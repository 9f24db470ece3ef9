#!/usr/bin/env bash
# Instructions per scenario-store write (callgrind), which stay exact on a busy machine.
#
#   scripts/bench/store-instructions.sh [MODE…]
#
#   MODE  plain | unrelated | affected | chain | chain-read (default: all five); see
#         Benchmarks/Benchmarks/StoreInstructionCounts/main.swift
#
# Builds StoreInstructionCounts (release) in Benchmarks/, runs each MODE under valgrind's
# callgrind with 1,000 and with 3,000 writes, and prints (instructions of the second - the first)
# / 2,000: the cost of one write with the setup taken out. Swift's per-process hash seed moves
# such counts by a few hundred, so SWIFT_DETERMINISTIC_HASHING=1 is set.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
command -v valgrind >/dev/null || { echo "error: valgrind is needed (apt-get install valgrind)" >&2; exit 2; }
modes=("$@")
[ ${#modes[@]} -gt 0 ] || modes=(plain unrelated affected chain chain-read)
cd "$root/Benchmarks"
swift build -c release --product StoreInstructionCounts >&2
binary=$(swift build -c release --show-bin-path)/StoreInstructionCounts
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
instructions() { # instructions MODE COUNT
    SWIFT_DETERMINISTIC_HASHING=1 valgrind --tool=callgrind --callgrind-out-file="$tmp/out" \
        "$binary" "$1" "$2" >/dev/null 2>&1
    awk '/^summary:/ { print $2 }' "$tmp/out"
}
for mode in "${modes[@]}"; do
    a=$(instructions "$mode" 1000)
    b=$(instructions "$mode" 3000)
    per=$(((b - a) / 2000))
    case "$mode" in
        chain | chain-read) echo "$mode: $per instructions a write, $((per / 50)) a node of the 50" ;;
        *) echo "$mode: $per instructions a write" ;;
    esac
done
