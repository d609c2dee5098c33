#!/bin/sh
# Commit subjects of at most 72 characters (docs/style.md, "Commits"), for every
# commit after the one that made it the rule. Older commits are history and
# are not rewritten. A clone without that commit (a shallow one) checks the
# commits it has.
# Usage: .ci/check-commits.sh [REV]   (default: HEAD)
set -u
base=34aa253
rev=${1:-HEAD}
if git cat-file -e "$base^{commit}" 2>/dev/null; then
	range="$base..$rev"
else
	range=$rev
fi
bad=$(git log --format='%h %s' "$range" | awk '{ s = $0; sub(/^[^ ]+ /, "", s); if (length(s) > 72) print length(s) ": " $0 }')
if [ -n "$bad" ]; then
	echo "commit subjects longer than 72 characters (say the why in the body):" >&2
	echo "$bad" >&2
	exit 1
fi
echo "commit subjects since $base: all at most 72 characters"
