#!/usr/bin/env bash
# Formats the sources in place, then checks that nothing is left for the linter to report.
set -euo pipefail
cd "$(dirname "$0")/.."
dirs=(Sources Tests Benchmarks/Benchmarks Package.swift)
swift format format --in-place --recursive --parallel "${dirs[@]}"
swift format lint --strict --recursive --parallel "${dirs[@]}"
