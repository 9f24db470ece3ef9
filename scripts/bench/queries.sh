#!/usr/bin/env bash
# Times the query API's analytics on a filled store, for one build or several alternating.
#
#   scripts/bench/queries.sh ROUNDS STORE BIN [BIN…]
#
#   ROUNDS  how many times each BIN is started
#   STORE   an existing store: DIR (SQLite) or postgres://… (see common.sh), filled with
#           `scripts/bench/fill.sh BIN fresh:DIR 10000000 7` (100,000 people over 90 days; on
#           PostgreSQL run VACUUM ANALYZE after the fill)
#   BIN     a release `touchpoint`
#
# Each round starts each BIN in turn on STORE, asks every query once to warm it, then REPEAT times
# (default 3) timed with curl (time_total), and stops it. Prints, per query and BIN, the median and
# range over all timed requests, in seconds, and checks that every answer was a 200.
# QUERIES (space-separated paths under /v1/query/) replaces the default list below; "now" is the
# time of the request, so a store is asked about its last 30 days or 12 weeks only while the fill is
# recent (fill it again after about a month).
set -euo pipefail
source "$(dirname "$0")/common.sh"

[ $# -ge 3 ] || bench_die "usage: $0 ROUNDS STORE BIN [BIN…]"
rounds=$1 store=$2
shift 2
bins=("$@")
repeat=${REPEAT:-3}
queries=${QUERIES:-"trends?event=app_opened&interval=day&breakdown=plan trends?event=checkout_completed&interval=day funnel?steps=product_viewed,cart_added,checkout_completed&window=1d retention?start=signup&return=app_opened&interval=week&periods=12 users/user-3-10 users?limit=50 users?search=person1234@ counts"}
times=$(mktemp)

ask() { # ask QUERY: prints "status seconds"
    curl -s -o /dev/null -w '%{http_code} %{time_total}\n' -H "Authorization: Bearer $ADMIN_TOKEN" \
        "$SERVE_URL/v1/query/$1"
}

for round in $(seq "$rounds"); do
    for index in "${!bins[@]}"; do
        bench_serve "${bins[$index]}" "$store"
        echo "== round $round, ${bins[$index]} (/health after $SERVE_START_SECONDS s)"
        for query in $queries; do
            read -r status _ < <(ask "$query")
            [ "$status" = 200 ] || bench_die "$query answered $status"
            for _ in $(seq "$repeat"); do
                read -r status seconds < <(ask "$query")
                [ "$status" = 200 ] || bench_die "$query answered $status"
                printf '%s %s %.4g\n' "$index" "$query" "$seconds" >>"$times"
            done
        done
        echo "   peak resident $(bench_peak_rss) MB"
        bench_stop
    done
done

echo
echo "== seconds, median (range) of $((rounds * repeat)) requests"
for query in $queries; do
    line="$query:"
    for index in "${!bins[@]}"; do
        values=$(awk -v i="$index" -v q="$query" '$1 == i && $2 == q { print $3 }' "$times")
        line+="  [$((index + 1))] $(echo "$values" | bench_median) ($(echo "$values" | bench_range))"
    done
    echo "$line"
done
for index in "${!bins[@]}"; do echo "[$((index + 1))] ${bins[$index]}"; done
rm -f "$times"
