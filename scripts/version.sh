#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# version.sh - print the version of rverbs, as a Debian version.
#
# One version names a build everywhere: modinfo's "version" of both modules,
# /sys/kernel/debug/rverbs/version, the load message and the package of
# "make deb" (Kbuild and the Makefile call this script).  It comes from git:
#
#   at the tag v0.2.0                     0.2.0
#   3 commits later, at abc123456789      0.2.0+3.gabc123456789
#   with uncommitted changes              0.2.0+3.gabc123456789.dirty
#   no v* tag yet (BASE below)            0.1.0+<commits>.g<hash>
#
# git describe's "-N-gHASH" becomes "+N.gHASH": a Debian version has no "-"
# in a native package, and "+" sorts after the tag's own version, so every
# build sorts after the release it follows.  A "-" inside a tag (v0.2.0-rc1)
# becomes "~", which sorts before the release.
#
# Outside a git checkout of this tree (a tarball; the debug lane's copy of
# the tree; the toolchain root, which does not see a worktree's git
# directory), $RVERBS_VERSION when set (the Makefile passes the host's
# answer down), else BASE.
set -euo pipefail

# The version of the last release, for trees without a v* tag or without git.
BASE=0.1.0

top=$(cd "$(dirname "$0")/.." && pwd -P)

valid() {
	[[ $1 =~ ^[0-9][A-Za-z0-9.+~]*$ ]]
}

if [ -n "${RVERBS_VERSION:-}" ]; then
	valid "$RVERBS_VERSION" || {
		echo "version.sh: RVERBS_VERSION='$RVERBS_VERSION' is not a Debian version" >&2
		exit 1
	}
	echo "$RVERBS_VERSION"
	exit 0
fi

# Only this tree's own repository: a tarball unpacked inside another
# checkout must not take that one's version.
if gtop=$(git -C "$top" rev-parse --show-toplevel 2>/dev/null) &&
	[ "$(cd "$gtop" && pwd -P)" = "$top" ] &&
	desc=$(git -C "$top" describe --tags --match 'v[0-9]*' --always --dirty --abbrev=12 2>/dev/null); then
	dirty=
	if [[ $desc == *-dirty ]]; then
		dirty=.dirty
		desc=${desc%-dirty}
	fi
	if [[ $desc =~ ^v(.*)-([0-9]+)-g([0-9a-f]+)$ ]]; then
		v="${BASH_REMATCH[1]//-/\~}+${BASH_REMATCH[2]}.g${BASH_REMATCH[3]}"
	elif [[ $desc == v* ]]; then
		v=${desc#v}
		v=${v//-/\~}
	else
		v="$BASE+$(git -C "$top" rev-list --count HEAD).g$desc"
	fi
	v+=$dirty
	if valid "$v"; then
		echo "$v"
		exit 0
	fi
	echo "version.sh: git describe gave '$desc', not usable as a version; using $BASE" >&2
fi
echo "$BASE"
