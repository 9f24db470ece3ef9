#!/usr/bin/env bash
# Formats the sources in place, then checks that nothing is left for the linter to report.
#   scripts/format.sh          format, then lint
#   scripts/format.sh --lint   lint only (what .ci/run does): exits non-zero on any finding
set -euo pipefail
cd "$(dirname "$0")/.."
dirs=(Sources Tests Package.swift Server/Sources Server/Tests Server/Package.swift Benchmarks/Benchmarks Benchmarks/Package.swift Fuzz)
if [ "${1:-}" != "--lint" ]; then
    swift format format --in-place --recursive --parallel "${dirs[@]}"
fi
swift format lint --strict --recursive --parallel "${dirs[@]}"
