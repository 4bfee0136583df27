#!/usr/bin/env bash
# Fails when a tracked file is larger than 1 MiB and is not listed in
# hack/large-files-allowlist.txt: binaries and build outputs (a 55 MB
# test/scale binary was committed once) belong in .gitignore, not in git.
# It checks the files of the index (git ls-files), as they are in the
# work tree. `make test` runs it (make check-large-files).
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"

limit=$((1024 * 1024))
allowlist=hack/large-files-allowlist.txt

declare -A allowed=()
if [[ -f $allowlist ]]; then
	while IFS= read -r line || [[ -n $line ]]; do
		[[ -z ${line//[[:space:]]/} || $line == \#* ]] && continue
		allowed[$line]=1
	done <"$allowlist"
fi

status=0 checked=0
# Files deleted in the work tree have no size to check (stat's complaint
# about them is dropped).
while IFS= read -r -d '' entry; do
	size=${entry%% *} path=${entry#* }
	checked=$((checked + 1))
	if ((size > limit)) && [[ -z ${allowed[$path]:-} ]]; then
		echo "check-large-files: $path is $size bytes (over 1 MiB) and not in $allowlist" >&2
		status=1
	fi
done < <(git ls-files -z | xargs -0 -r stat --printf '%s %n\0' -- 2>/dev/null || true)

if ((checked == 0)) && [[ -n $(git ls-files | head -n 1) ]]; then
	echo "check-large-files: could not read the size of any tracked file (GNU stat needed)" >&2
	exit 1
fi
if ((status != 0)); then
	echo "check-large-files: remove the file from git (git rm --cached, and add it to .gitignore), or list it in $allowlist if it must be tracked" >&2
fi
exit "$status"
