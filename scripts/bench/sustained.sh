#!/usr/bin/env bash
# One long ingest run that meets merges of keys: sustained throughput, p99 and the slowest request.
#
#   scripts/bench/sustained.sh BIN STORE EVENTS [SEED]
#
#   BIN     a release `touchpoint`
#   STORE   fresh:DIR or DIR (SQLite; see common.sh)
#   EVENTS  events of the run; 4000000 meets a merge of 4 M message keys on a 50 M store
#   SEED    loadgen's --seed (default 91)
#
# A 2,000-event warm-up, PAUSE seconds (default 20), then one loadgen run of EVENTS web events
# (random ids, 8 x 100) while the keys held in memory (/metrics) are read every 2 s: each fall is
# a merge into `message_keys` or `session_keys`, listed with its time into the run. WARM_CACHE=N
# reads an existing store N times into the page cache first.
set -euo pipefail
source "$(dirname "$0")/common.sh"

[ $# -ge 3 ] || bench_die "usage: $0 BIN STORE EVENTS [SEED]"
bin=$1 store=$2 events=$3 seed=${4:-91}
pause=${PAUSE:-20}
tmp=$(mktemp -d)

if [ -f "$store/touchpoint.sqlite" ] && [ "${WARM_CACHE:-0}" -gt 0 ]; then
    for _ in $(seq "$WARM_CACHE"); do cat "$store/touchpoint.sqlite" >/dev/null; done
    echo "-- store in the page cache: $(bench_cached_gb "$store/touchpoint.sqlite") GB"
fi
bench_serve "$bin" "$store"
CLIENTS=2 bench_loadgen "$bin" 2000 $((seed + 5000)) >/dev/null
sleep "$pause"

started=$(date +%s)
bench_loadgen "$bin" "$events" "$seed" >"$tmp/report" &
loadgen=$!
while kill -0 "$loadgen" 2>/dev/null; do
    bench_metrics "$tmp/m"
    echo "$(($(date +%s) - started)) $(bench_metric "$tmp/m" touchpoint_message_keys_in_memory)" \
        "$(bench_metric "$tmp/m" touchpoint_session_keys_in_memory)" >>"$tmp/keys"
    sleep 2
done
wait "$loadgen"
peak=$(bench_peak_rss)
bench_stop

grep -E '^(throughput|latency|stored|failure)' "$tmp/report"
echo "-- peak resident: $peak MB; merges (the keys held in memory falling, s into the run):"
# Consecutive falls are one merge (its keys are freed in slices).
awk 'function report(kind, from, to, top, bottom) { printf "   %s keys, %d-%d s: %d -> %d\n", kind, from, to, top, bottom }
     NR > 1 && $2 < m { if (!mf) { mf = 1; m0 = p; mtop = m } ; mend = $1; mlow = $2 }
     NR > 1 && $2 >= m && mf { report("message", m0, mend, mtop, mlow); mf = 0 }
     NR > 1 && $3 < s { if (!sf) { sf = 1; s0 = p; stop = s } ; send = $1; slow = $3 }
     NR > 1 && $3 >= s && sf { report("session", s0, send, stop, slow); sf = 0 }
     { m = $2; s = $3; p = $1 }
     END { if (mf) report("message", m0, mend, mtop, mlow); if (sf) report("session", s0, send, stop, slow) }' "$tmp/keys"
rm -rf "$tmp"
