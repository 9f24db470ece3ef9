#!/usr/bin/env bash
# The whole test suite: the SDK package (this folder), then the collector and the tool (Server/).
#   scripts/test.sh                    every test
#   scripts/test.sh --filter Store     the same arguments go to both `swift test` runs
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== SDK tests (Package.swift)"
swift test "$@"
echo "== collector and tool tests (Server/Package.swift)"
swift test --package-path Server "$@"
