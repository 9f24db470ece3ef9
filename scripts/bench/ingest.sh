#!/usr/bin/env bash
# One measured ingest run of the collector: what every ingest figure in BENCHMARKS.md comes from.
#
#   scripts/bench/ingest.sh BIN STORE SEED [EVENTS]
#
#   BIN     a release `touchpoint` (scripts/bench/build.sh makes one per commit)
#   STORE   fresh:DIR | DIR | pgfresh:URL | postgres://… (see common.sh)
#   SEED    loadgen's --seed for the run (the warm-up uses SEED + 5000)
#   EVENTS  events of the measured run (default 200000)
#
# Starts `BIN serve` on STORE, sends a warm-up of WARMUP events (default 2000, 2 clients), waits
# PAUSE seconds (default 20: a store that holds message keys builds its key filter then), then
# runs `BIN loadgen` with EVENTS web events (random ids; CLIENTS x BATCH, default 8 x 100) and
# prints:
#   - events/s, p50, p99 and the slowest request, events lost and stored twice (loadgen's report);
#   - the collector's CPU an event (all its threads; PostgreSQL's own processes are not counted),
#     and per thread: on a CPU, waiting for one, and bytes read from disk, µs or bytes an event
#     (/proc/PID/task/*/schedstat and io); the writer is taken to be the busiest thread of
#     SQLite's (`TP-*` threads);
#   - the machine's idle and I/O-wait share over the run (/proc/stat);
#   - SQLite's writer by step, µs an event, and the share of new message keys looked up in
#     `message_keys` and of requests whose look-ahead was skipped (from /metrics, when served);
#   - the collector's peak resident size.
# Environment: WARMUP, PAUSE, CLIENTS, BATCH, LOADGEN_ARGS (e.g. --v7-ids), WARM_CACHE=N (read an
# existing SQLite store N times into the page cache first and report how much of it is cached),
# RESULT=FILE (append one line of key=value results, as ab.sh reads them).
set -euo pipefail
source "$(dirname "$0")/common.sh"

[ $# -ge 3 ] || bench_die "usage: $0 BIN STORE SEED [EVENTS]"
bin=$1 store=$2 seed=$3 events=${4:-200000}
warmup=${WARMUP:-2000} pause=${PAUSE:-20} warm_cache=${WARM_CACHE:-0}
tmp=$(mktemp -d)

cached_before=- cached_after=-
case "$store" in
    fresh:* | pgfresh:* | postgres://* | postgresql://*) ;;
    *)
        if [ -f "$store/touchpoint.sqlite" ] && [ "$warm_cache" -gt 0 ]; then
            for _ in $(seq "$warm_cache"); do cat "$store/touchpoint.sqlite" >/dev/null; done
        fi
        [ -f "$store/touchpoint.sqlite" ] && cached_before=$(bench_cached_gb "$store/touchpoint.sqlite")
        ;;
esac

bench_serve "$bin" "$store"
echo "== $bin on $store ($SERVE_URL, /health after $SERVE_START_SECONDS s)"
if [ "$warmup" -gt 0 ]; then
    CLIENTS=2 bench_loadgen "$bin" "$warmup" $((seed + 5000)) >/dev/null
fi
sleep "$pause"

bench_metrics "$tmp/m0"
bench_threads "$tmp/t0"
bench_cpu_stat "$tmp/c0"
bench_loadgen "$bin" "$events" "$seed"
bench_cpu_stat "$tmp/c1"
bench_threads "$tmp/t1"
bench_metrics "$tmp/m1"
peak=$(bench_peak_rss)
[ -n "$SERVE_DB" ] && [ -f "$SERVE_DB" ] && cached_after=$(bench_cached_gb "$SERVE_DB")
bench_stop
stored=-
if [ -n "$SERVE_DB" ] && command -v sqlite3 >/dev/null; then
    stored=$(sqlite3 -readonly "$SERVE_DB" "SELECT COALESCE(SUM(events), 0) FROM source_counts" 2>/dev/null || echo -)
fi

# Per thread, µs an event on a CPU and waiting for one, bytes an event read from disk.
join <(sort "$tmp/t0") <(sort "$tmp/t1") | awk -v n="$events" '{
        run = ($7 - $3) / n / 1000; wait = ($8 - $4) / n / 1000; io = ($9 - $5) / n
        printf "%s %s %.2f %.2f %.0f\n", $1, $2, run, wait, io }' | sort -k3 -g -r >"$tmp/threads"
cpu=$(awk '{ s += $3 } END { printf "%.2f", s }' "$tmp/threads")
read_bytes=$(awk '{ s += $5 } END { printf "%.0f", s }' "$tmp/threads")
writer=$(awk '$2 ~ /^TP-/ { printf "%.2f", $3; exit }' "$tmp/threads")
writer_wait=$(awk '$2 ~ /^TP-/ { printf "%.2f", $4; exit }' "$tmp/threads")
idle=$(paste "$tmp/c0" "$tmp/c1" | awk '{ t = ($4 - $1) + ($5 - $2) + ($6 - $3)
        if (t > 0) printf "%.0f %.0f", 100 * ($5 - $2) / t, 100 * ($6 - $3) / t; else print "- -" }')

echo "-- collector CPU: $cpu µs an event (writer ${writer:--} on a CPU, ${writer_wait:--} waiting for one);" \
    "read from disk: $read_bytes B an event; machine idle / I/O wait: ${idle% *} % / ${idle#* } %;" \
    "peak resident: $peak MB"
echo "-- busiest threads (tid name: µs an event on a CPU, waiting for one; bytes read an event):"
head -n 6 "$tmp/threads" | awk '{ printf "   %s %s: %s, %s; %s B\n", $1, $2, $3, $4, $5 }'
[ "$cached_before" = - ] || echo "-- store in the page cache: $cached_before GB before, $cached_after GB after"

# SQLite's writer by step (counters of /metrics), µs an event written.
rows=$(($(bench_metric "$tmp/m1" touchpoint_sqlite_write_rows_total | cut -d. -f1) - $(bench_metric "$tmp/m0" touchpoint_sqlite_write_rows_total | cut -d. -f1)))
steps_total=-
if [ "$rows" -gt 0 ]; then
    steps=$(grep -h '^touchpoint_sqlite_writer_seconds_total{' "$tmp/m1" | while read -r name value; do
        before=$(bench_metric "$tmp/m0" "$name")
        step=${name#*step=\"} step=${step%%\"*}
        echo "$step $(echo "$before $value $rows" | awk '{ printf "%.2f", ($2 - $1) / $3 * 1e6 }')"
    done)
    steps_total=$(echo "$steps" | awk '{ s += $2 } END { printf "%.2f", s }')
    echo "-- the writer by step, µs an event: $(echo "$steps" | tr '\n' ' ' | sed 's/ $//') (all $steps_total)"
    lookups=$(echo "$(bench_metric "$tmp/m0" touchpoint_message_key_table_lookups_total) $(bench_metric "$tmp/m1" touchpoint_message_key_table_lookups_total) $rows" \
        | awk '{ printf "%.2f", 100 * ($2 - $1) / $3 }')
    skipped=$(echo "$(bench_metric "$tmp/m0" 'touchpoint_sqlite_look_aheads_total{result="skipped"}') $(bench_metric "$tmp/m1" 'touchpoint_sqlite_look_aheads_total{result="skipped"}') $(bench_metric "$tmp/m0" 'touchpoint_sqlite_look_aheads_total{result="read"}') $(bench_metric "$tmp/m1" 'touchpoint_sqlite_look_aheads_total{result="read"}')" \
        | awk '{ s = $2 - $1; t = s + $4 - $3; if (t > 0) printf "%.1f", 100 * s / t; else print "-" }')
    echo "-- message keys looked up in message_keys: $lookups % of rows; look-aheads skipped: $skipped % of requests"
fi

line="bin=$bin store=$store eps=$LG_EPS p50=$LG_P50 p99=$LG_P99 max=$LG_MAX lost=${LG_LOST:-?} dup=${LG_DUP:-?}"
line+=" cpu=$cpu writer=${writer:--} writer_wait=${writer_wait:--} steps=$steps_total read_bytes=$read_bytes"
line+=" idle=${idle% *} iowait=${idle#* } peak_mb=$peak cached_gb=$cached_after stored=$stored"
echo "result $line"
[ -z "${RESULT:-}" ] || echo "$line" >>"$RESULT"
rm -rf "$tmp"
