# shellcheck shell=bash disable=SC2034  # the variables set here are read by the scripts that source it
# Shared helpers of the collector's benchmark scripts: sourced, never run.
#
# Starts `touchpoint serve` on a free port, drives `touchpoint loadgen`, reads /metrics and the
# collector's threads from /proc, and computes medians. Every helper works on the one collector
# this script started (SERVE_PID); the EXIT trap stops it if the script ends early.
#
# Stores are named in one of four ways:
#   fresh:DIR        DIR removed, then a new SQLite store in it
#   DIR              an existing SQLite store (created if absent), kept as it is
#   pgfresh:URL      a new PostgreSQL database on URL's server (dropped afterwards)
#   postgres://…     an existing PostgreSQL database
# With a PostgreSQL store, SERVE_EVENTS=clickhouse://host:8123/db keeps the events in ClickHouse as
# well (`--events`).

# The load every script sends unless told otherwise (loadgen's web traffic, random ids).
WRITE_KEY=${WRITE_KEY:-loadgen-write-key-0001}
ADMIN_TOKEN=${ADMIN_TOKEN:-loadgen-admin-token-0001}
CLIENTS=${CLIENTS:-8}
BATCH=${BATCH:-100}
# Extra options for every loadgen run, e.g. LOADGEN_ARGS=--v7-ids.
LOADGEN_ARGS=${LOADGEN_ARGS:-}

SERVE_PID=
SERVE_URL=
SERVE_LOG=
SERVE_DATA=
SERVE_DB=
SERVE_DATABASE_URL=
SERVE_START_SECONDS=
PG_DROP_URL=
PG_DROP_NAME=
SERVE_SCRATCH=

bench_die() {
    echo "error: $*" >&2
    exit 2
}

# The repository's root, from this file's place in scripts/bench/.
bench_root() {
    cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd
}

# The release `touchpoint` of this checkout, built if absent.
bench_default_binary() {
    local root
    root=$(bench_root)
    if [ ! -x "$root/Server/.build/release/touchpoint" ]; then
        echo "== swift build -c release --package-path Server --product touchpoint" >&2
        swift build -c release --package-path "$root/Server" --product touchpoint >&2
    fi
    echo "$root/Server/.build/release/touchpoint"
}

bench_check_binary() {
    [ -x "$1" ] || bench_die "$1 is not an executable touchpoint binary (build one with scripts/bench/build.sh)"
}

# The median of the numbers on standard input (one a line); empty input gives "-".
bench_median() {
    sort -g | awk '{ v[NR] = $1 } END {
        if (NR == 0) { print "-"; exit }
        if (NR % 2) { m = v[(NR + 1) / 2] } else { m = (v[NR / 2] + v[NR / 2 + 1]) / 2 }
        printf "%.7g\n", m }'
}

# "min–max" of the numbers on standard input.
bench_range() {
    sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { if (NR == 0) print "-"; else print lo "–" hi }'
}

# Stops the collector this script started (SIGTERM: it closes its store and saves the key filter
# as in production) and drops a database made for the run.
bench_stop() {
    if [ -n "$SERVE_PID" ]; then
        kill -TERM "$SERVE_PID" 2>/dev/null || true
        wait "$SERVE_PID" 2>/dev/null || true
        SERVE_PID=
    fi
    if [ -n "$PG_DROP_NAME" ]; then
        psql -q "$PG_DROP_URL" -c "DROP DATABASE IF EXISTS \"$PG_DROP_NAME\"" >/dev/null 2>&1 || true
        PG_DROP_NAME=
    fi
    [ -z "$SERVE_LOG" ] || rm -f "$SERVE_LOG"
    [ -z "$SERVE_SCRATCH" ] || rm -rf "$SERVE_SCRATCH"
    SERVE_LOG='' SERVE_SCRATCH=''
}
trap bench_stop EXIT

# bench_serve BIN STORE: starts `BIN serve` on STORE and waits until /health answers.
# Sets SERVE_PID, SERVE_URL, SERVE_DATA (the data directory), SERVE_DB (the SQLite file, or empty),
# SERVE_DATABASE_URL (the PostgreSQL database, or empty) and SERVE_START_SECONDS (from the start until /health answered: an upgrade's migrations included).
bench_serve() {
    local bin=$1 store=$2 args=() started now
    bench_check_binary "$bin"
    SERVE_DB='' SERVE_DATABASE_URL=''
    case "$store" in
        fresh:*)
            SERVE_DATA=${store#fresh:}
            rm -rf "$SERVE_DATA"
            mkdir -p "$SERVE_DATA"
            SERVE_DB=$SERVE_DATA/touchpoint.sqlite
            ;;
        pgfresh:*)
            local url=${store#pgfresh:} name
            name=tp_bench_$$_$RANDOM
            psql -q "$url" -c "CREATE DATABASE \"$name\"" >/dev/null || bench_die "cannot create a database on $url"
            PG_DROP_URL=$url
            PG_DROP_NAME=$name
            SERVE_DATA=$(mktemp -d)
            SERVE_SCRATCH=$SERVE_DATA
            SERVE_DATABASE_URL=${url%/*}/$name
            args=(--database "$SERVE_DATABASE_URL")
            ;;
        postgres://* | postgresql://*)
            SERVE_DATA=$(mktemp -d)
            SERVE_SCRATCH=$SERVE_DATA
            SERVE_DATABASE_URL=$store
            args=(--database "$store")
            ;;
        *)
            SERVE_DATA=$store
            mkdir -p "$SERVE_DATA"
            SERVE_DB=$SERVE_DATA/touchpoint.sqlite
            ;;
    esac
    # SERVE_EVENTS=clickhouse://… keeps the events in ClickHouse as well (with a PostgreSQL store).
    [ -z "${SERVE_EVENTS:-}" ] || args+=(--events "$SERVE_EVENTS")
    SERVE_LOG=$(mktemp)
    started=$(date +%s.%N)
    "$bin" serve --port 0 --data "$SERVE_DATA" --write-key "$WRITE_KEY" --admin-token "$ADMIN_TOKEN" \
        --log-level "${LOG_LEVEL:-warning}" ${args[@]+"${args[@]}"} >"$SERVE_LOG" 2>&1 &
    SERVE_PID=$!
    SERVE_URL=
    while [ -z "$SERVE_URL" ]; do
        kill -0 "$SERVE_PID" 2>/dev/null || { cat "$SERVE_LOG" >&2; bench_die "touchpoint serve exited"; }
        SERVE_URL=$(sed -n 's/.*listening on \(https*:\/\/[^ ]*\).*/\1/p' "$SERVE_LOG")
        [ -n "$SERVE_URL" ] || sleep 0.1
    done
    until curl -fs -o /dev/null "$SERVE_URL/health"; do
        kill -0 "$SERVE_PID" 2>/dev/null || { cat "$SERVE_LOG" >&2; bench_die "touchpoint serve exited"; }
        sleep 0.1
    done
    now=$(date +%s.%N)
    SERVE_START_SECONDS=$(echo "$started $now" | awk '{ printf "%.1f", $2 - $1 }')
}

# bench_loadgen BIN EVENTS SEED [loadgen options…]: one loadgen run against the collector, its
# report on standard output. Sets LG_EPS (events/s), LG_P50, LG_P99, LG_MAX (ms), LG_LOST, LG_DUP.
bench_loadgen() {
    local bin=$1 events=$2 seed=$3 out extra
    shift 3
    read -r -a extra <<<"$LOADGEN_ARGS"
    out=$("$bin" loadgen --collector "$SERVE_URL" --write-key "$WRITE_KEY" --admin-token "$ADMIN_TOKEN" \
        --events "$events" --clients "$CLIENTS" --batch "$BATCH" --seed "$seed" ${extra[@]+"${extra[@]}"} "$@") \
        || { echo "$out" >&2; bench_die "loadgen failed"; }
    echo "$out"
    LG_EPS=$(echo "$out" | awk '/^throughput:/ { print $2 }')
    LG_P50=$(echo "$out" | awk '/^latency/ { print $4 }')
    LG_P99=$(echo "$out" | awk '/^latency/ { print $8 }')
    LG_MAX=$(echo "$out" | awk '/^latency/ { print $10 }')
    LG_LOST=$(echo "$out" | sed -n 's/.*lost \([0-9]*\).*/\1/p')
    LG_DUP=$(echo "$out" | sed -n 's/.*duplicates stored \([0-9]*\).*/\1/p')
    [ -n "$LG_EPS" ] || bench_die "no throughput in loadgen's report"
}

# bench_metrics FILE: the collector's /metrics, one "name{labels} value" a line, into FILE.
bench_metrics() {
    curl -fs "$SERVE_URL/metrics" | grep -v '^#' >"$1" || : >"$1"
}

# bench_metric FILE NAME: the value of NAME (with its labels, exactly) in FILE; 0 when absent.
bench_metric() {
    awk -v name="$2" '$1 == name { print $2; found = 1 } END { if (!found) print 0 }' "$1"
}

# bench_threads FILE: per thread of the collector "tid comm run_ns wait_ns read_bytes" into FILE
# (schedstat: time on a CPU and time runnable but waiting for one; io: bytes read from disk).
bench_threads() {
    local task tid comm sched io
    : >"$1"
    for task in /proc/"$SERVE_PID"/task/*; do
        tid=${task##*/}
        comm=$(tr ' ' '_' <"$task/comm" 2>/dev/null) || continue
        sched=$(awk '{ print $1, $2 }' "$task/schedstat" 2>/dev/null) || continue
        io=$(awk '/^read_bytes:/ { print $2 }' "$task/io" 2>/dev/null) || io=0
        echo "$tid $comm $sched ${io:-0}" >>"$1"
    done
}

# bench_cpu_stat FILE: the machine's "busy idle iowait" jiffies (/proc/stat) into FILE.
bench_cpu_stat() {
    awk '/^cpu / { busy = $2 + $3 + $4 + $7 + $8 + $9; print busy, $5, $6 }' /proc/stat >"$1"
}

# bench_peak_rss: the collector's peak resident size so far, in MB.
bench_peak_rss() {
    awk '/^VmHWM:/ { printf "%d\n", $2 / 1024 }' /proc/"$SERVE_PID"/status
}

# bench_rss: the collector's resident size now, in MB.
bench_rss() {
    awk '/^VmRSS:/ { printf "%d\n", $2 / 1024 }' /proc/"$SERVE_PID"/status
}

# bench_cached_gb FILE: how much of FILE is in the page cache, in GB (fincore).
bench_cached_gb() {
    if command -v fincore >/dev/null; then
        fincore --bytes --noheadings --output RES "$1" | awk '{ printf "%.1f\n", $1 / 1e9 }'
    else
        echo "?"
    fi
}

# bench_file_gb FILE: FILE's size in GB.
bench_file_gb() {
    stat -c %s "$1" | awk '{ printf "%.1f\n", $1 / 1e9 }'
}
