#!/usr/bin/env bash
# The formatting check: clang-format (the repository's .clang-format) on the C++ files changed
# against a base commit, failing on any difference and printing it.
# Usage: scripts/format-check.sh [BASE]
#   BASE: a commit; default: the merge base with origin/main where that branch exists, else the
#   last commit (HEAD~1). Uncommitted changes are checked too.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "format-check: clang-format is not installed (scripts/install-deps.sh installs it)" >&2; exit 1; }
base="${1:-}"
if [ -z "$base" ]; then
  if git rev-parse --verify -q origin/main >/dev/null; then
    base=$(git merge-base HEAD origin/main)
  elif git rev-parse --verify -q HEAD~1 >/dev/null; then
    base=HEAD~1
  else
    echo "format-check: no base commit to compare with; nothing checked"
    exit 0
  fi
fi
mapfile -t files < <(git diff --name-only --diff-filter=ACMR "$base" -- '*.cpp' '*.h' '*.cu' '*.cuh')
if [ ${#files[@]} -eq 0 ]; then
  echo "format-check: no C++ file changed since $(git rev-parse --short "$base")"
  exit 0
fi
status=0
for f in "${files[@]}"; do
  if ! diff -u --label "$f" --label "$f (clang-format)" "$f" <(clang-format --style=file "$f"); then
    status=1
  fi
done
if [ $status -ne 0 ]; then
  echo "format-check: the files above differ from clang-format's output (run clang-format -i on them)" >&2
else
  echo "format-check: ${#files[@]} changed C++ files are formatted"
fi
exit $status
