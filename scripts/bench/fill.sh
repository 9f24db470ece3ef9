#!/usr/bin/env bash
# Fills a store with past traffic (the stores of the "at 50 M events" and analytics figures).
#
#   scripts/bench/fill.sh BIN STORE EVENTS [SEED]
#
#   BIN     a release `touchpoint`
#   STORE   fresh:DIR (a new SQLite store), DIR (add to an existing one), pgfresh:URL or
#           postgres://… (see common.sh; a pgfresh database is dropped at the end, so fill a
#           named one to keep it)
#   EVENTS  events of past traffic (`loadgen --fill`: 100 events a user over 90 days, batches of
#           500, 8 clients, random ids); 50000000 for the 50 M store, 10000000 for analytics
#   SEED    loadgen's --seed (default 7)
#
# Prints the fill's time, events/s and p99, then, for SQLite, waits until the merges of keys into
# `message_keys` and `session_keys` have caught up (keys held in memory unchanged for CATCH_UP
# seconds, default 120; 0 skips it; the 2,000 web events written to start the merges are counted),
# stops the collector and prints the file's size and bytes an event (PostgreSQL: the database's
# size). A store read by later runs should be caught up first, or its first runs pay for merges.
set -euo pipefail
source "$(dirname "$0")/common.sh"

[ $# -ge 3 ] || bench_die "usage: $0 BIN STORE EVENTS [SEED]"
bin=$1 store=$2 events=$3 seed=${4:-7}
catch_up=${CATCH_UP:-120}
tmp=$(mktemp)

bench_serve "$bin" "$store"
echo "== filling $store with $events events of past traffic (seed $seed)"
started=$(date +%s)
bench_loadgen "$bin" "$events" "$seed" --fill "$events"
echo "-- fill: $(($(date +%s) - started)) s; peak resident $(bench_peak_rss) MB"

if [ -n "$SERVE_DB" ] && [ "$catch_up" -gt 0 ]; then
    # Merges run between writes: a small write starts one that is due.
    CLIENTS=2 bench_loadgen "$bin" 2000 $((seed + 5000)) >/dev/null
    last='' unchanged_since=$(date +%s)
    while [ $(($(date +%s) - unchanged_since)) -lt "$catch_up" ]; do
        bench_metrics "$tmp"
        now="$(bench_metric "$tmp" touchpoint_message_keys_in_memory) $(bench_metric "$tmp" touchpoint_session_keys_in_memory)"
        if [ "$now" != "$last" ]; then
            echo "   keys in memory (message, session): $now"
            last=$now unchanged_since=$(date +%s)
        fi
        sleep 2
    done
fi
if [ -n "$SERVE_DATABASE_URL" ]; then
    echo "== the database: $(psql -Atq "$SERVE_DATABASE_URL" -c 'SELECT pg_database_size(current_database())' \
        | awk '{ printf "%.2f", $1 / 1e9 }') GB"
fi
bench_stop
rm -f "$tmp"
if [ -n "$SERVE_DB" ]; then
    stored=$(sqlite3 -readonly "$SERVE_DB" "SELECT SUM(events) FROM source_counts")
    echo "== $stored events, $(bench_file_gb "$SERVE_DB") GB:" \
        "$(stat -c %s "$SERVE_DB" | awk -v n="$stored" '{ printf "%.0f", $1 / n }') bytes an event"
fi
