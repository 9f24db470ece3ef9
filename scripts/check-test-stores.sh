#!/usr/bin/env bash
# Fails when a test's arguments name a server-backed store literally (`[StorageKind.sqlite,
# .postgres]`): such a test fails on a fresh clone without PostgreSQL or ClickHouse configured,
# which CI, always configuring them, never sees. A test's stores are one of the lists that follow
# the environment (`StorageKind.available`, `StorageKind.insightStores`); a test of one server store
# is guarded by `.enabled(if: PostgresTestEnvironment.enabled)` (or ClickHouse's) instead.
set -euo pipefail
cd "$(dirname "$0")/.."
found=$(grep -rnE 'arguments: *\[[^]]*(\.postgres|\.clickhouse)\b' Server/Tests Tests || true)
if [ -n "$found" ]; then
    echo "A test names a server-backed store in its arguments; use StorageKind.available or .insightStores:" >&2
    echo "$found" >&2
    exit 1
fi
echo "no test names a server-backed store literally"
