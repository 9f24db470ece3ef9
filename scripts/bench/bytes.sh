#!/usr/bin/env bash
# Bytes on disk per event of the SQLite store, against the JSON the events arrived as.
#
#   scripts/bench/bytes.sh BIN DIR [web|past|stored] [EVENTS] [SEED]
#
#   BIN     a release `touchpoint`
#   DIR     a folder for a fresh store (removed first), or with `stored` an existing store
#   web     loadgen's web traffic (default): EVENTS (default 200000) in 8 x 100, 128 browsers
#   past    loadgen --fill EVENTS (default 300000): past traffic, 100 events a user over 90 days
#   stored  no load: the store in DIR as it is (BIN serves it only for JSON=1)
#   SEED    loadgen's --seed (default 1 for web, 7 for past)
#
# Stops the collector (its WAL checkpointed, the key filter saved beside the file) and prints the
# file's size over the events stored, then per table and index (SQLite's dbstat) bytes an event
# (dbstat reads the whole file: minutes at 50 M).
# With JSON=1 it also exports every event (GET /v1/query/export) and prints the mean size of a
# message (as stored and given back) written compactly, which the figure is compared with (slow on
# large stores).
set -euo pipefail
source "$(dirname "$0")/common.sh"

[ $# -ge 2 ] || bench_die "usage: $0 BIN DIR [web|past] [EVENTS] [SEED]"
bin=$1 dir=$2 kind=${3:-web}
case "$kind" in
    web) events=${4:-200000} seed=${5:-1} ;;
    past) events=${4:-300000} seed=${5:-7} ;;
    stored) [ -f "$dir/touchpoint.sqlite" ] || bench_die "$dir holds no touchpoint.sqlite" ;;
    *) bench_die "$kind: expected web, past or stored" ;;
esac
command -v sqlite3 >/dev/null || bench_die "sqlite3 is needed for dbstat (apt-get install sqlite3)"

case "$kind" in
    web)
        bench_serve "$bin" "fresh:$dir"
        bench_loadgen "$bin" "$events" "$seed" | grep -E '^(throughput|stored)'
        ;;
    past)
        bench_serve "$bin" "fresh:$dir"
        bench_loadgen "$bin" "$events" "$seed" --fill "$events" | grep -E '^(throughput|stored)'
        ;;
    stored)
        [ "${JSON:-0}" != 1 ] || bench_serve "$bin" "$dir"
        ;;
esac
if [ "${JSON:-0}" = 1 ]; then
    # The export streams every stored message, one a line; each is re-written compactly.
    json=$(curl -fs -H "Authorization: Bearer $ADMIN_TOKEN" "$SERVE_URL/v1/query/export" | python3 -c '
import json, sys
total = count = 0
for line in sys.stdin:
    if line.strip():
        message = json.loads(line)["message"]  # each line: {"timestamp", "receivedAt", "message"}
        total += len(json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode())
        count += 1
print(f"{total / max(count, 1):.0f} {count}")')
fi
bench_stop

db=$dir/touchpoint.sqlite
stored=$(sqlite3 -readonly "$db" "SELECT SUM(events) FROM source_counts" 2>/dev/null) \
    || stored=$(sqlite3 -readonly "$db" "SELECT COUNT(*) FROM events")
size=$(stat -c %s "$db")
echo "== $stored events, $(bench_file_gb "$db") GB: $(echo "$size $stored" | awk '{ printf "%.0f", $1 / $2 }') bytes an event"
if [ -n "${json:-}" ]; then
    echo "   the JSON: ${json% *} bytes an event over ${json#* } exported messages;" \
        "$(echo "$size $stored ${json% *}" | awk '{ printf "%.2f", $1 / $2 / $3 }') x"
fi
[ ! -f "$db-keyfilter" ] || echo "   beside it, the key filter: $(stat -c %s "$db-keyfilter" | awk '{ printf "%.1f", $1 / 1e6 }') MB"
echo "-- per table and index, bytes an event (dbstat):"
# Tables and indexes of more than two pages.
sqlite3 -readonly "$db" "SELECT name, ROUND(SUM(pgsize) * 1.0 / $stored, 1) FROM dbstat GROUP BY name
    HAVING SUM(pgsize) > 2 * (SELECT page_size FROM pragma_page_size()) ORDER BY 2 DESC" \
    | awk -F'|' '{ printf "   %-32s %s\n", $1, $2 }'
