#!/usr/bin/env bash
# Checks that every tracked C/C++ source (host, device and test code) is formatted as the
# repository's .clang-format says; with --fix, formats them in place. Run by CTest as format.check.
# Usage: scripts/check-format.sh [--fix] [ROOT]
set -euo pipefail

fix=0
if [ "${1:-}" = "--fix" ]; then fix=1; shift; fi
root=$(cd "${1:-$(dirname "$0")/..}" && pwd)
cd "$root"

command -v clang-format >/dev/null || {
  echo "check-format: clang-format is not installed (scripts/setup.sh installs it)" >&2
  exit 2
}

if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files '*.c' '*.h' '*.cpp' '*.hpp')
else
  mapfile -t files < <(find bench host rtl sw -path '*/build*' -prune -o \
                         \( -name '*.c' -o -name '*.h' -o -name '*.cpp' -o -name '*.hpp' \) -print)
fi

if [ "$fix" -eq 1 ]; then
  clang-format -i "${files[@]}"
  echo "check-format: formatted ${#files[@]} files"
  exit 0
fi

bad=()
for f in "${files[@]}"; do
  clang-format "$f" | cmp -s - "$f" || bad+=("$f")
done
if [ ${#bad[@]} -ne 0 ]; then
  echo "check-format: ${#bad[@]} of ${#files[@]} files differ from .clang-format ($(clang-format --version)):" >&2
  printf '  %s\n' "${bad[@]}" >&2
  echo "check-format: run scripts/check-format.sh --fix" >&2
  exit 1
fi
echo "check-format: ${#files[@]} files match .clang-format"
