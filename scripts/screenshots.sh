#!/usr/bin/env bash
# Takes a PNG of each dashboard page, for README's dashboard section.
#
# Runs `touchpoint demo` on a free port over a fresh data directory, saves a cohort, a few
# insights and a dashboard of them through the API, then drives headless Chromium over its
# DevTools pipe (no other tools than bash, jq and base64): signs in with the admin token through
# the sign-in form and captures every page, whole, into docs/screenshots/ (or the directory given).
#
#   scripts/screenshots.sh [directory]
#
# CHROMIUM names the browser (default: chromium); USERS and SEED the demo's.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs/screenshots}
chromium=${CHROMIUM:-chromium}
users=${USERS:-20}
seed=${SEED:-7}
for tool in "$chromium" jq base64 curl; do
    command -v "$tool" >/dev/null || { echo "screenshots: $tool is missing" >&2; exit 1; }
done
mkdir -p "$out"
work=$(mktemp -d)
demo_pid=""
browser_pid=""
cleanup() {
    [ -n "$browser_pid" ] && kill "$browser_pid" 2>/dev/null || true
    [ -n "$demo_pid" ] && kill "$demo_pid" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

echo "== building touchpoint"
swift build --package-path Server --product touchpoint >/dev/null
touchpoint="$(swift build --package-path Server --show-bin-path)/touchpoint"

echo "== touchpoint demo ($users users, seed $seed)"
"$touchpoint" demo --port 0 --data "$work/data" --users "$users" --seed "$seed" >"$work/demo.log" 2>&1 &
demo_pid=$!
for _ in $(seq 600); do
    grep -q '^Sign in with the admin token: ' "$work/demo.log" && break
    kill -0 "$demo_pid" 2>/dev/null || { cat "$work/demo.log" >&2; exit 1; }
    sleep 0.5
done
base=$(sed -n 's/^Collector listening on \(http[^ ]*\) .*/\1/p' "$work/demo.log")
token=$(sed -n 's/^Sign in with the admin token: //p' "$work/demo.log")
[ -n "$base" ] && [ -n "$token" ] || { echo "screenshots: the demo did not say where it listens" >&2; exit 1; }
echo "   $base"

# The API, with the admin token.
api() { # method path [body]
    curl -sf -X "$1" -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
        ${3:+--data "$3"} "$base$2"
}
cohort=$(api POST /v1/cohorts \
    '{"name":"Buyers this week","conditions":[{"event":"checkout_success","atLeast":1,"days":7}]}' | jq .id)
funnel=$(api POST /v1/insights '{"name":"From opening the app to a checkout","kind":"funnels",
    "parameters":{"steps":"app_opened,add_to_cart,checkout_success","window":"1h"}}' | jq .id)
trend=$(api POST /v1/insights '{"name":"Checkouts per hour","kind":"trends",
    "parameters":{"event":"checkout_success","interval":"hour"}}' | jq .id)
paths=$(api POST /v1/insights '{"name":"After opening the app","kind":"paths",
    "parameters":{"start":"app_opened","steps":"3","top":"4"}}' | jq .id)
buyers=$(api POST /v1/insights "{\"name\":\"Buyers' screens\",\"kind\":\"trends\",
    \"parameters\":{\"event\":\"screen_viewed\",\"interval\":\"hour\",\"cohort\":\"$cohort\"}}" | jq .id)
board=$(api POST /v1/dashboards \
    "{\"name\":\"Shop\",\"insights\":[$funnel,$trend,$paths,$buyers]}" | jq .id)

echo "== headless Chromium"
mkfifo "$work/to-browser" "$work/from-browser"
"$chromium" --headless --no-sandbox --disable-gpu --remote-debugging-pipe --no-first-run \
    --no-default-browser-check --hide-scrollbars --user-data-dir="$work/profile" --window-size=1280,900 \
    about:blank 3<"$work/to-browser" 4>"$work/from-browser" 2>/dev/null &
browser_pid=$!
exec 5>"$work/to-browser" 6<"$work/from-browser"

# One DevTools command (JSON messages ended by NUL on the pipe); prints its result.
next_id=0
cdp() { # method [params] [session]
    next_id=$((next_id + 1))
    jq -cjn --argjson id "$next_id" --arg method "$1" --argjson params "${2:-"{}"}" --arg session "${3:-}" \
        '{id: $id, method: $method, params: $params} + (if $session == "" then {} else {sessionId: $session} end)' >&5
    printf '\0' >&5
    local answer
    while IFS= read -r -d '' answer <&6; do
        [ "$(jq -r '.id // empty' <<<"$answer")" = "$next_id" ] || continue
        if jq -e '.error' <<<"$answer" >/dev/null; then echo "DevTools $1: $answer" >&2; return 1; fi
        jq -c '.result' <<<"$answer"
        return 0
    done
    echo "DevTools $1: the browser closed its pipe" >&2
    return 1
}
target=$(cdp Target.createTarget '{"url":"about:blank"}' | jq -r .targetId)
session=$(cdp Target.attachToTarget "{\"targetId\":\"$target\",\"flatten\":true}" | jq -r .sessionId)
page() { cdp "$1" "${2:-"{}"}" "$session"; }
page Emulation.setDeviceMetricsOverride '{"width":1280,"height":900,"deviceScaleFactor":1,"mobile":false}' >/dev/null
evaluate() {
    page Runtime.evaluate "$(jq -cn --arg e "$1" '{expression: $e, returnByValue: true, awaitPromise: true}')" |
        jq -c '.result.value'
}
# Waits (up to 30 s) until the page that replaced the current one has loaded.
wait_for_page() {
    for _ in $(seq 300); do
        [ "$(evaluate '!window.leaving && document.readyState === "complete" && location.href !== "about:blank"')" = true ] &&
            return 0
        sleep 0.1
    done
    echo "screenshots: $(evaluate 'location.href') did not load" >&2
    return 1
}
open() {
    evaluate 'window.leaving = true' >/dev/null
    page Page.navigate "$(jq -cn --arg u "$base$1" '{url: $u}')" >/dev/null
    wait_for_page
}
# The whole page (up to 2,400 pixels tall) as $out/$1.png.
shoot() {
    local height
    height=$(evaluate 'Math.min(Math.max(document.documentElement.scrollHeight, 900), 2400)')
    page Page.captureScreenshot \
        "{\"format\":\"png\",\"captureBeyondViewport\":true,\"clip\":{\"x\":0,\"y\":0,\"width\":1280,\"height\":$height,\"scale\":1}}" |
        jq -r .data | base64 -d >"$out/$1.png"
    echo "   $out/$1.png"
}

# Signing in through the form, as a person does.
open /dashboard/sign-in
evaluate "document.getElementById('token').value = $(jq -n --arg t "$token" '$t'); window.leaving = true;
    document.querySelector('form').requestSubmit(); true" >/dev/null
wait_for_page
[ "$(evaluate 'location.pathname')" = '"/dashboard"' ] || { echo "screenshots: signing in failed" >&2; exit 1; }

shot() { open "$2" && shoot "$1"; }
shot overview /dashboard
shot sessions /dashboard/sessions
shot people /dashboard/people
shot surveys /dashboard/surveys
shot trends "/dashboard/trends?event=checkout_success&interval=hour"
shot funnels "/dashboard/funnels?steps=app_opened%2Cadd_to_cart%2Ccheckout_success%5Bamount%3E20%5D&window=1h"
shot retention "/dashboard/retention?start=app_opened&return=checkout_success&interval=day&periods=7"
shot stickiness "/dashboard/stickiness?event=app_opened&interval=week"
shot lifecycle "/dashboard/lifecycle?event=app_opened&interval=day"
shot paths "/dashboard/paths?start=app_opened&steps=3&top=4"
shot cohorts /dashboard/cohorts
shot cohort "/dashboard/cohorts/$cohort"
shot dashboards /dashboard/boards
shot dashboard "/dashboard/boards/$board"
shot insight "/dashboard/insights/$funnel"
echo "== done"
