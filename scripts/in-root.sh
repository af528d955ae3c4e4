#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# in-root.sh CMD [ARG...] - run a command inside the rverbs sid root.
#
# The command runs in a private mount namespace (nothing stays mounted after
# it exits) with /proc, /sys and /dev of the host, and with the repository
# and the cache bind-mounted at the same absolute paths as on the host, so
# paths mean the same thing on both sides.  The working directory is kept.
# The environment is a fresh one, but for RVERBS_VERSION: the version the
# host computed (scripts/version.sh), which git inside the root cannot
# compute for a worktree, whose git directory it does not see.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

need_root_user "entering the toolchain root"
root=$(root_dir)
[ -e "$root/.rverbs-complete" ] || die "toolchain root $root is missing; run 'make toolchain'."

# The version of rverbs as the host sees it (make passes it down; a direct
# call computes it here, where git sees the checkout).
version=${RVERBS_VERSION:-$("$RVERBS_TOP/scripts/version.sh" 2>/dev/null || true)}

# Everything below the repository is what the guest and builds see as $PWD.
repo=${RVERBS_BIND:-$RVERBS_TOP}
cwd=$PWD

exec unshare --mount --propagation private -- /bin/bash -c '
	set -e
	root=$1 repo=$2 cache=$3 cwd=$4 udevd=$5 version=$6
	shift 6
	mount -t proc proc "$root/proc"
	mount --rbind /sys "$root/sys"
	mount --rbind /dev "$root/dev"
	mount -t tmpfs tmpfs "$root/tmp"
	mount -t tmpfs tmpfs "$root/run"
	for d in "$repo" "$cache"; do
		mkdir -p "$root$d"
		mount --bind "$d" "$root$d"
	done
	# The debug lane boots without udev (scripts/guest-udevd.sh):
	# systemd-udevd is a link to udevadm, one binary for the daemon and
	# the "trigger" and "settle" that virtme-init runs.
	if [ -n "$udevd" ]; then
		mount --bind "$udevd" "$root/usr/bin/udevadm"
	fi
	cd "$root$cwd" 2>/dev/null || cd "$root"
	exec chroot "$root" /usr/bin/env -i \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LANG=C.UTF-8 TERM="${TERM:-dumb}" CI="${CI:-}" \
		RVERBS_CACHE="$cache" RVERBS_IN_ROOT=1 RVERBS_VERSION="$version" \
		/bin/bash -c "cd \"\$0\" 2>/dev/null || cd /; exec \"\$@\"" "$cwd" "$@"
' in-root "$root" "$repo" "$RVERBS_CACHE" "$cwd" "${RVERBS_GUEST_UDEVD:-}" \
	"$version" "$@"
