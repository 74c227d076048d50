#!/usr/bin/env bash
# The formatting check: clang-format (the repository's .clang-format) on the C++ files changed
# against a base commit, failing on any difference and printing it.
# Usage: scripts/format-check.sh [BASE | --commits N]
#   BASE: a commit; the files changed since it are checked.
#   --commits N: the files the last N commits changed (HEAD~N; a merge counts as one commit and
#     brings in all it merged), or those of as many as the clone holds where it holds fewer.
#   Default: on a branch with commits that origin/main lacks, the merge base with origin/main;
#   otherwise (a fresh clone of main, where origin/main is HEAD, or no origin/main) the last
#   commit, --commits 1. A clone holding no parent of HEAD (a single commit, or a shallow clone
#   of depth 1) has nothing to compare with: it says so and passes.
# Uncommitted changes are checked too.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "format-check: clang-format is not installed (scripts/install-deps.sh installs it)" >&2; exit 1; }

commits=""
base=""
case "${1:-}" in
  --commits)
    commits="${2:-}"
    [[ "$commits" =~ ^[1-9][0-9]*$ ]] || { echo "format-check: --commits needs a count of 1 or more" >&2; exit 2; }
    ;;
  "")
    head=$(git rev-parse HEAD)
    if git rev-parse --verify -q origin/main >/dev/null &&
       mb=$(git merge-base HEAD origin/main) && [ "$mb" != "$head" ]; then
      base=$mb
    else
      commits=1
    fi
    ;;
  *)
    base=$(git rev-parse --verify -q "$1^{commit}") || { echo "format-check: '$1' is not a commit" >&2; exit 2; }
    ;;
esac

if [ -n "$commits" ]; then
  # The deepest of HEAD~commits .. HEAD~1 that this clone holds.
  n=$commits
  while [ "$n" -gt 0 ] && ! git rev-parse --verify -q "HEAD~$n" >/dev/null; do
    n=$((n - 1))
  done
  if [ "$n" -eq 0 ]; then
    echo "format-check: this clone holds no parent of HEAD (a single-commit or shallow clone); nothing checked"
    exit 0
  fi
  [ "$n" -lt "$commits" ] && echo "format-check: this clone holds $n of the last $commits commits; checking those"
  base=$(git rev-parse "HEAD~$n")
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
  echo "format-check: ${#files[@]} C++ files changed since $(git rev-parse --short "$base") are formatted"
fi
exit $status
