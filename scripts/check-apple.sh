#!/usr/bin/env bash
# Type-checks the SDK's Apple-only code (SwiftUI, UIKit, StoreKit, Network) on Linux, once per
# platform Package.swift declares, against the real Touchpoint modules and the interface stubs in
# Tests/AppleInterfaces (just the Apple declarations the code uses, each left out where Apple does
# not offer it).
#
# For each platform it builds the stub modules with -D APPLE_<PLATFORM>, copies the sources of the
# SDK modules that hold Apple-only code, rewrites `os(...)` in the Apple-only files to that
# platform's answer, and compiles those modules in dependency order (a full compile, so flow
# diagnostics run too) with the package's settings: Swift 6, warnings as errors. The seeds' SwiftUI
# samples (test files) are type-checked against the result. Needs `swift build` first (the other
# SDK modules are imported from its build directory). Fails first when a file that uses an Apple
# framework is outside what it compiles, so no Apple-only code goes unchecked.
#
#   scripts/check-apple.sh            # every platform
#   scripts/check-apple.sh ios tvos   # some
set -euo pipefail
cd "$(dirname "$0")/.."

bin=$(swift build --show-bin-path)
platforms=("$@")
[ ${#platforms[@]} -gt 0 ] || platforms=(ios macos tvos watchos visionos)

# The SDK modules holding Apple-only code, in dependency order (each is compiled from source here;
# the others come from $bin/Modules).
modules=(TouchpointEvents TouchpointDelivery TouchpointUI Touchpoint)
apple_pattern='canImport\((UIKit|SwiftUI|StoreKit|Network)\)'
# The seeds' SwiftUI samples and the README's setup sample, as an app would write them.
sample_files=(
    Tests/TouchpointSurveysTests/SeedSwiftUISamples.swift Tests/TouchpointSurveysTests/ReadmeSetupSample.swift
    Tests/TouchpointTests/UIGettingStartedSample.swift Tests/TouchpointTests/ReadmeScreenSample.swift
    Tests/TouchpointPromoTests/SeedSampleViews.swift
)

# Nothing Apple-only goes unchecked: every file that uses an Apple framework is in one of the
# modules or samples above, and every framework it uses has a stub.
unchecked=()
while IFS= read -r file; do
    covered=false
    for module in "${modules[@]}"; do [[ "$file" == "Sources/$module/"* ]] && covered=true; done
    for sample in "${sample_files[@]}"; do [[ "$file" == "$sample" ]] && covered=true; done
    $covered || unchecked+=("$file")
done < <(grep -rlE --include='*.swift' 'canImport\((UIKit|SwiftUI|StoreKit|Network|AppKit)\)' Sources Tests | sort)
if [ ${#unchecked[@]} -gt 0 ]; then
    printf 'error: Apple-only code this script does not compile (add its module to modules or the file to sample_files):\n' >&2
    printf '  %s\n' "${unchecked[@]}" >&2
    exit 1
fi
if grep -rlE --include='*.swift' 'canImport\(AppKit\)' Sources Tests >&2; then
    echo "error: the files above use AppKit, which has no stub in Tests/AppleInterfaces" >&2
    exit 1
fi

common=(
    -swift-version 6 -enable-upcoming-feature ExistentialAny -enable-upcoming-feature MemberImportVisibility
    -warnings-as-errors -parse-as-library -D SWIFT_PACKAGE -D DEBUG -Onone
    -Xcc "-fmodule-map-file=$PWD/Sources/CZlib/module.modulemap"
    -Xcc "-fmodule-map-file=$bin/COpenCombineHelpers.build/module.modulemap"
    -Xcc -I -Xcc "$PWD/.build/checkouts/OpenCombine/Sources/COpenCombineHelpers/include"
)

work=$(mktemp -d /tmp/touchpoint-apple.XXXXXX)
trap 'rm -rf "$work"' EXIT

for platform in "${platforms[@]}"; do
    case "$platform" in
        ios) os=iOS ;;
        macos) os=macOS ;;
        tvos) os=tvOS ;;
        watchos) os=watchOS ;;
        visionos) os=visionOS ;;
        *) echo "unknown platform: $platform (ios, macos, tvos, watchos, visionos)" >&2; exit 2 ;;
    esac
    flag="APPLE_$(echo "$platform" | tr '[:lower:]' '[:upper:]')"
    out="$work/$platform"
    mkdir -p "$out/modules" "$out/src"
    search=(-I "$out/modules" -I "$bin/Modules")

    # The stubs: every platform has SwiftUI, StoreKit and Network; UIKit is absent on macOS.
    stubs=(SwiftUI Network UIKit StoreKit)
    [ "$platform" = macos ] && stubs=(SwiftUI Network StoreKit)
    for stub in "${stubs[@]}"; do
        swiftc -emit-module -module-name "$stub" -emit-module-path "$out/modules/$stub.swiftmodule" \
            "${common[@]}" -D "$flag" "${search[@]}" "Tests/AppleInterfaces/$stub.swift"
    done

    # `os(X)` in Apple-only files answers for this platform.
    rewrite() {
        sed -E -e "s/os\\($os\\)/true/g" -e 's/os\((iOS|macOS|tvOS|watchOS|visionOS|Linux|Windows|Android|OpenBSD|WASI|FreeBSD)\)/false/g' "$1"
    }

    # Diagnostics name the original files, not the rewritten copies.
    compile() { "$@" 2>&1 | sed "s#$out/src/##g"; }

    checked=0
    for module in "${modules[@]}"; do
        sources=()
        while IFS= read -r file; do
            if grep -qE "$apple_pattern" "$file"; then
                target="$out/src/$file"
                mkdir -p "$(dirname "$target")"
                rewrite "$file" >"$target"
                sources+=("$target")
                checked=$((checked + 1))
            else
                sources+=("$PWD/$file")
            fi
        done < <(find "Sources/$module" -name '*.swift' | sort)
        compile swiftc -module-name "$module" -wmo -emit-module -emit-module-path "$out/modules/$module.swiftmodule" \
            -c -o "$out/$module.o" "${common[@]}" "${search[@]}" "${sources[@]}"
    done

    samples=()
    for file in "${sample_files[@]}"; do
        target="$out/src/$file"
        mkdir -p "$(dirname "$target")"
        rewrite "$file" >"$target"
        samples+=("$target")
    done
    # SeedSampleTests.swift defines the sample's AnalyticsHandler.
    compile swiftc -module-name SeedSamples -typecheck "${common[@]}" "${search[@]}" \
        "${samples[@]}" Tests/TouchpointPromoTests/SeedSampleTests.swift
    echo "$os: type-checked $checked Apple-only files in ${#modules[@]} modules and ${#samples[@]} sample files"
done
