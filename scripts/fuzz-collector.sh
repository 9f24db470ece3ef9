#!/usr/bin/env bash
# Fuzzes the collector's request-body readers (BatchDecoder, BodyInflater) with libFuzzer.
#   scripts/fuzz-collector.sh [runs]      (default 1,000,000 runs; the binary stays in .build/fuzz-collector)
# SwiftPM executables bring their own main and cannot link libFuzzer's, so this builds with swiftc:
# TouchpointCore and swift-http-types as static modules, then the decoder sources with the entry point.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-1000000}
work=.build/fuzz-collector
mkdir -p "$work/corpus"
[ -d Server/.build/checkouts/swift-http-types ] || swift package --package-path Server resolve
flags=(-sanitize=fuzzer,address -parse-as-library -O -g)

# swift-log, which TouchpointCore imports (the decoder itself does not log).
mapfile -t logging < <(find Server/.build/checkouts/swift-log/Sources/Logging -name '*.swift' | sort)
swiftc "${flags[@]}" -package-name swift_log -module-name Logging -emit-module -emit-module-path "$work/Logging.swiftmodule" \
    -emit-library -static -o "$work/libLogging.a" "${logging[@]}"

# TouchpointCore.
mapfile -t core < <(find Sources/TouchpointCore -name '*.swift' | sort)
swiftc "${flags[@]}" -I "$work" -I Sources/CZlib -module-name TouchpointCore -emit-module -emit-module-path "$work/TouchpointCore.swiftmodule" \
    -emit-library -static -o "$work/libTouchpointCore.a" "${core[@]}"
mapfile -t http < <(find Server/.build/checkouts/swift-http-types/Sources/HTTPTypes -name '*.swift' | sort)
macros=()
for version in 1.0 1.1 1.2 1.3 1.6 1.7; do
    macros+=(-enable-experimental-feature "AvailabilityMacro=HTTPTypes $version: macOS 10.0")
done
swiftc "${flags[@]}" "${macros[@]}" -enable-upcoming-feature InternalImportsByDefault -module-name HTTPTypes -emit-module -emit-module-path "$work/HTTPTypes.swiftmodule" \
    -emit-library -static -o "$work/libHTTPTypes.a" "${http[@]}"

ingest=Server/Sources/TouchpointCollector/Ingest
swiftc "${flags[@]}" -module-name FuzzCollectorDecoder -I "$work" -I Sources/CZlib \
    "$ingest/BatchDecoder.swift" "$ingest/MessageReader.swift" "$ingest/IngestMessage.swift" \
    "$ingest/MessageType.swift" "$ingest/IngestLimits.swift" "$ingest/IngestRejection.swift" \
    "$ingest/TimestampCorrection.swift" "$ingest/BodyInflater.swift" "$ingest/BatchSpans.swift" \
    "$ingest/StreamingBatchReader.swift" "$ingest/IngestOutcome.swift" \
    Server/Sources/TouchpointCollector/Errors/CollectorError.swift Fuzz/CollectorDecoder/Entry.swift \
    "$work/libTouchpointCore.a" "$work/libHTTPTypes.a" "$work/libLogging.a" -lz -o "$work/fuzz-collector-decoder"

# Seeds: a realistic batch, a single message, and a gzip stream.
printf '%s' '{"batch":[{"type":"track","event":"checkout","messageId":"m1","anonymousId":"a","timestamp":"2026-01-01T00:00:00.000Z","properties":{"amount":12.5},"context":{"sessionId":"s"}},{"type":"identify","messageId":"m2","userId":"u","traits":{"plan":"pro"}}],"sentAt":"2026-01-01T00:00:01Z","writeKey":"k"}' > "$work/corpus/batch.json"
printf '%s' '{"messageId":"m","userId":"u","event":"e","writeKey":"k"}' > "$work/corpus/single.json"
gzip -c "$work/corpus/batch.json" > "$work/corpus/batch.json.gz"

"$work/fuzz-collector-decoder" -runs="$runs" -max_len=4096 -print_final_stats=1 "$work/corpus"
