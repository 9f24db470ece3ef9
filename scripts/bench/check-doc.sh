#!/usr/bin/env bash
# Fails when a document names a script, a repository path or a benchmark target that does not
# exist, so that every command in BENCHMARKS.md can be run from a clone.
#
#   scripts/bench/check-doc.sh [FILE…]
#
#   FILE  Markdown files to check (default: BENCHMARKS.md); --all checks every tracked *.md
#
# Checks, in each FILE:
#   - every path that starts with scripts/, Benchmarks/, Server/, Sources/ or Tests/ exists
#     (one with `…` or `*` stands for any name, and build products under .build/ are made by the
#     build: neither is checked);
#   - every other name ending in .sh or .py (`ab.sh`, `foo.py`) is a file under scripts/;
#   - every `--target NAME` is a target of Benchmarks/Package.swift;
#   - every `` `touchpoint NAME `` or `…/touchpoint NAME` is a subcommand of the tool (a
#     commandName in Server/Sources).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
files=("$@")
if [ ${#files[@]} -eq 0 ]; then
    files=(BENCHMARKS.md)
elif [ "${files[0]}" = --all ]; then
    mapfile -t files < <(git ls-files '*.md')
fi

failures=0
fail() {
    echo "$1: $2" >&2
    failures=$((failures + 1))
}
targets=$(sed -n 's/.*name: "\([A-Za-z]*\)".*/\1/p' Benchmarks/Package.swift)
subcommands=$(grep -rhoE 'commandName: "[a-z-]+"' Server/Sources | sed 's/.*"\(.*\)"/\1/')

for file in "${files[@]}"; do
    [ -f "$file" ] || { fail "$file" "no such file"; continue; }
    # Paths into the repository.
    while read -r path; do
        path=${path%%[\`\'\",;:)]*}
        path=${path%.}
        case "$path" in *…* | *'*'* | */.build/* | '') continue ;; esac
        [ -e "$path" ] || fail "$file" "names $path, which does not exist"
    done < <(grep -oE '(^|[^A-Za-z0-9_./-])(scripts|Benchmarks|Server|Sources|Tests)/[A-Za-z0-9_./+*…-]*' "$file" \
        | sed -E 's/^[^A-Za-z]//' | sort -u)
    # Bare script names.
    while read -r name; do
        [ -n "$(find scripts -name "$name" -print -quit)" ] || fail "$file" "names $name, which is not under scripts/"
    done < <(grep -oE '(^|[^A-Za-z0-9_./-])[A-Za-z0-9_-]+\.(sh|py)\b' "$file" | sed -E 's/^[^A-Za-z0-9_-]//' | sort -u)
    # Benchmark targets.
    while read -r target; do
        grep -qx "$target" <<<"$targets" || fail "$file" "names --target $target, which Benchmarks/Package.swift does not have"
    done < <(grep -oE -- '--target [A-Za-z]+' "$file" | awk '{ print $2 }' | sort -u)
    # The tool's subcommands.
    while read -r subcommand; do
        grep -qx "$subcommand" <<<"$subcommands" || fail "$file" "names touchpoint $subcommand, which the tool does not have"
    done < <(grep -oE '(`|/)touchpoint [a-z][a-z-]*' "$file" | awk '{ print $2 }' | sort -u)
done

if [ "$failures" -gt 0 ]; then
    echo "$failures missing" >&2
    exit 1
fi
echo "checked ${files[*]}: every script, path, target and subcommand named exists"
