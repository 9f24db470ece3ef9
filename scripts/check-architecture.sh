#!/usr/bin/env bash
# Fails, naming each one, when ARCHITECTURE.md leaves out a module or a folder of a module's
# sources, so the map cannot fall behind the tree. Run by .ci/run.
#   scripts/check-architecture.sh
#
# What must be named (only folders that exist: the map may name one before it lands):
#   - every module: each folder directly under Sources/, Tests/, Server/Sources/, Server/Tests/;
#   - every folder, at any depth, inside a module of Sources/ or Server/Sources/, except DocC
#     catalogs (*.docc). Test targets' inner folders mirror the code they test: not checked.
#
# The rule: a folder is named when ARCHITECTURE.md has a code span (`…`) that, without a trailing
# slash, is the folder's path from its module's parent, or a longer path ending in "/" + that path:
#   Sources/TouchpointEvents         `TouchpointEvents`  or  `Sources/TouchpointEvents/`
#   Sources/TouchpointEvents/Model   `TouchpointEvents/Model/`  or  `Sources/TouchpointEvents/Model`
set -euo pipefail
shopt -s nullglob
cd "$(dirname "$0")/.."

map=ARCHITECTURE.md
if [ ! -f "$map" ]; then
    echo "error: $map is missing" >&2
    exit 1
fi

# Every code span of the map, without its backticks and trailing slash, one per line.
# shellcheck disable=SC2016  # the backticks are the pattern, not a command
spans=$( (grep -o '`[^`]*`' "$map" || true) | sed -e 's/^`//' -e 's/`$//' -e 's:/*$::' | sort -u)

named() {
    local path=$1
    # A span equal to the path, or ending in "/path".
    awk -v p="$path" '$0 == p || (length($0) > length(p) && substr($0, length($0) - length(p)) == "/" p) { found = 1 }
        END { exit !found }' <<<"$spans"
}

missing=()
for root in Sources Tests Server/Sources Server/Tests; do
    [ -d "$root" ] || continue
    for module_dir in "$root"/*/; do
        module=$(basename "$module_dir")
        named "$module" || missing+=("module $root/$module (name it as \`$module\`)")
        case "$root" in Sources | Server/Sources) ;; *) continue ;; esac
        while IFS= read -r folder; do
            relative=$module/${folder#"$root/$module/"}
            named "$relative" || missing+=("folder $folder (name it as \`$relative/\`)")
        done < <(find "$root/$module" -mindepth 1 -type d -name '*.docc' -prune -o -mindepth 1 -type d -print | sort)
    done
done

if [ ${#missing[@]} -gt 0 ]; then
    echo "error: $map does not name ${#missing[@]} folder(s); add each, with its job, to the map:" >&2
    printf '  %s\n' "${missing[@]}" >&2
    exit 1
fi
echo "$map names every module and source folder"
