#!/usr/bin/env bash
# Fuzzes the survey config decoder with libFuzzer (+ AddressSanitizer):
# swift-log, TouchpointCore and the survey config sources are compiled with swiftc directly,
# into a scratch folder, never into the repository.
#   scripts/fuzz-survey-config.sh [seconds]      (default 120; needs a prior `swift build`)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-120}"
out="${FUZZ_DIR:-/tmp/touchpoint-fuzz-survey-config}"
mkdir -p "$out/corpus"
flags=(-O -parse-as-library -sanitize=fuzzer,address)
logging=.build/checkouts/swift-log/Sources/Logging
[ -d "$logging" ] || { echo "run swift build first (it checks out swift-log)"; exit 1; }

swiftc -module-name Logging -package-name swift_log "${flags[@]}" -swift-version 5 \
    -emit-module -emit-module-path "$out/Logging.swiftmodule" -emit-library -static -o "$out/libLogging.a" \
    $(find "$logging" -name '*.swift')
swiftc -module-name TouchpointCore "${flags[@]}" -swift-version 6 -I "$out" \
    -emit-module -emit-module-path "$out/TouchpointCore.swiftmodule" -emit-library -static -o "$out/libTouchpointCore.a" \
    $(find Sources/TouchpointCore -name '*.swift')
swiftc -module-name SurveysFuzz "${flags[@]}" -swift-version 6 -I "$out" -L "$out" -lTouchpointCore -lLogging \
    $(ls Sources/TouchpointSurveys/Config/*.swift | grep -v SurveySchema) \
    Sources/TouchpointSurveys/Matching/PropertyMatcher.swift Sources/TouchpointSurveys/Matching/PropertyMatcher+Operator.swift \
    Sources/TouchpointSurveys/Presentation/SurveyTextValidation.swift Fuzz/SurveyConfig/Entry.swift \
    -o "$out/fuzz-survey-config" 2> >(grep -v "Cannot export local symbol" >&2)

cp Tests/TouchpointSurveysTests/Fixtures/seed-survey.json Fuzz/SurveyConfig/extended.json "$out/corpus/"
cd "$out" && ./fuzz-survey-config -max_total_time="$seconds" -print_final_stats=1 -timeout=10 corpus
