#!/usr/bin/env bash
# Fails when a test's arguments name a server-backed store literally (`[StorageKind.sqlite,
# .postgres]`, on one line or several): such a test fails on a fresh clone without PostgreSQL or
# ClickHouse configured, which CI, always configuring them, never sees. A test's stores are one of
# the lists that follow the environment (`StorageKind.available`, `StorageKind.insightStores`); a
# test of one server store is guarded by `.enabled(if: PostgresTestEnvironment.enabled)` (or
# ClickHouse's) and calls `withStorage(.postgres)` in its body instead.
set -euo pipefail
cd "$(dirname "$0")/.."
found=$(find Server/Tests Tests -name '*.swift' -print0 | xargs -0 perl -0ne \
    'while (/arguments:\s*\[[^\]]*?\.(postgres|clickhouse)\b/g) { my $line = 1 + (() = substr($_, 0, pos) =~ /\n/g); print "$ARGV:$line\n" }')
if [ -n "$found" ]; then
    echo "A test names a server-backed store in its arguments; use StorageKind.available or .insightStores:" >&2
    echo "$found" >&2
    exit 1
fi
echo "no test names a server-backed store literally"
