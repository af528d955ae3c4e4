#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# install.sh STAGE [DESTDIR]  - make install: copy the modules that
#                               scripts/modules-install.sh put under STAGE
#                               into DESTDIR/lib/modules/<release>/updates/,
#                               then depmod for that release
# install.sh --remove RELEASE [DESTDIR]  - make uninstall: take them away
#                               again, then depmod
#
# Runs on the host: DESTDIR (default /) is the host's, which the toolchain
# root, where the modules are stripped, signed and compressed, cannot see.
# depmod -b DESTDIR writes the module index of DESTDIR, so that with an
# empty DESTDIR "modprobe rverbs" and "rdma link add ... type rverbs" (the
# alias rdma-link-rverbs) find the module at once.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

remove=
if [ "${1:-}" = --remove ]; then
	remove=1
	shift
fi
[ $# -ge 1 ] && [ $# -le 2 ] ||
	die "usage: install.sh STAGE [DESTDIR] | install.sh --remove RELEASE [DESTDIR]"
destdir=${2:-}
[ -z "$destdir" ] || [[ $destdir == /* ]] || die "DESTDIR must be an absolute path: $destdir"

depmod_cmd=$(PATH=$PATH:/usr/sbin:/sbin command -v depmod) ||
	die "depmod is missing (Debian package kmod)"

if [ -n "$remove" ]; then
	rel=$1
else
	stage=$1
	rels=("$stage"/lib/modules/*)
	[ ${#rels[@]} = 1 ] && [ -d "${rels[0]}/updates" ] ||
		die "$stage holds no modules of exactly one release"
	rel=${rels[0]##*/}
fi
dst=$destdir/lib/modules/$rel/updates

# The package installs the same files (under /usr/lib/modules, the same
# directory on a merged-/usr system): one owner only.
if [ -z "$destdir" ] && command -v dpkg-query >/dev/null &&
	dpkg-query -W -f '${Status}\n' "rverbs-modules-$rel" 2>/dev/null | grep -q ' installed$'; then
	die "the package rverbs-modules-$rel is installed: remove it first (dpkg -r rverbs-modules-$rel)"
fi

# Whatever an earlier installation left (another compression, say): depmod
# would otherwise see two candidates.
rm -f "$dst"/rverbs.ko "$dst"/rverbs.ko.* "$dst"/rverbs_takeover.ko "$dst"/rverbs_takeover.ko.*
if [ -z "$remove" ]; then
	install -d -m 0755 "$dst"
	install -m 0644 "$stage/lib/modules/$rel/updates"/* "$dst"/
	info "installed into $dst: $(cd "$dst" && echo rverbs*.ko*)"
else
	rmdir "$dst" 2>/dev/null || true
	info "removed rverbs.ko and rverbs_takeover.ko from $dst"
fi

if [ ! -e "$destdir/lib/modules/$rel/modules.order" ]; then
	info "note: $destdir/lib/modules/$rel has no kernel modules: kernel $rel is not installed there"
fi
info "depmod -b ${destdir:-/} $rel"
"$depmod_cmd" -b "${destdir:-/}" "$rel"
