#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# guest.sh OUT - the first process of a vm.sh run, inside the guest.
#
# Runs the command line saved in OUT/cmd, with the environment of OUT/env,
# and leaves, in OUT, its exit status (rc), the kernel log (dmesg.log,
# written as the kernel logs it, from boot on: if the guest dies or hangs,
# the log up to that point is there) and the taint flags (tainted).
out=$1

export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# shellcheck source=/dev/null
. "$out/env"
# The repository and the cache, again with the kernel's page cache.
# virtme-ng mounts its --rodir shares uncached (its init has no option for
# it): then every program, module, script and Python file read from them
# crossed 9p again at each use (a start of a test's 760 KiB binary took
# 1.2 s on the debug kernel under TCG, 0.2 s from the page cache).
# Nothing writes either while the guest runs: the lanes write their
# builds before a boot and their output through /mnt, another share.
# This script runs from /mnt (vm.sh), so that nothing holds them open.
mapfile -t mounts </proc/mounts
for m in "${mounts[@]}"; do
	read -r src dir fstype _ <<<"$m"
	[ "$fstype" = 9p ] || continue
	[ "$dir" = "$RVERBS_TOP" ] || [ "$dir" = "$RVERBS_CACHE" ] || continue
	if ! umount "$dir" || ! mount -t 9p -o ro,version=9p2000.L,trans=virtio,access=any,msize=524288,cache=loose \
		"$src" "$dir"; then
		# vm.sh takes a guest without dmesg.log for one that hung in
		# its boot: this one did not.
		echo "guest.sh: could not mount $dir again with the page cache" >"$out/dmesg.log"
		echo "the guest could not mount $dir again with the page cache (guest.sh)" >>"$out/why"
		echo 1 >"$out/rc"
		exit 1
	fi
done
cd "$RVERBS_GUEST_CWD" 2>/dev/null || cd /
# The static device nodes that systemd-tmpfiles creates from
# "kmod static-nodes" on a normal boot (virtme-ng has no udev): opening one
# loads its module on demand, e.g. /dev/net/tun for "ip tuntap".  Two
# programs, as on such a boot, not a mkdir and a mknod for each of the
# 17 nodes (about a second each on the debug kernel under TCG).
nodes=/run/rverbs-static-nodes.conf
if kmod static-nodes --format=tmpfiles --output=$nodes 2>/dev/null; then
	systemd-tmpfiles --create --boot $nodes 2>/dev/null
fi

# The kernel log, streamed from the first line of boot.
dmesg --follow --nopager >"$out/dmesg.log" 2>&1 &
dmesg_pid=$!

# kmemleak (debug kernel): forget what boot left, report what the run left.
kmemleak=/sys/kernel/debug/kmemleak
if [ -w $kmemleak ]; then
	echo clear >$kmemleak
	# No automatic scans (every 10 minutes, each a walk of all memory
	# that takes one of the two vCPUs for a long while under TCG): the
	# run scans where it matters, at its end (below) and around the
	# planted leak (rverbs_detectors.sh).  An object leaked at any time
	# is still unreferenced then.
	echo scan=off >$kmemleak
fi
# Where tests leave what vm.sh checks after the run (rverbs_detectors.sh).
export RVERBS_GUEST_OUT=$out

read -r -N 200 cmd_head <"$out/cmd"
echo "rverbs-vm: running ${cmd_head%%$'\n'*}" >/dev/kmsg
# The output goes to OUT/console.log, which vm.sh shows as it grows,
# through a pipe.  kselftest's runner writes each test's output to
# /dev/stdout (runner.sh: 4>>"$logfile"), which virtme-init links to its
# own virtio port (virtme.dev_stdout, the host's vng output, boot.log
# here): make it mean this process's standard output again.
ln -sfn /proc/self/fd/1 /dev/stdout
ln -sfn /proc/self/fd/2 /dev/stderr
bash "$out/cmd" 2>&1 | cat >>"$out/console.log"
rc=${PIPESTATUS[0]}
echo "rverbs-vm: done, exit status $rc" >/dev/kmsg
if [ -w $kmemleak ]; then
	# An object is reported once it has looked unreferenced for two scans
	# some seconds apart (kmemleak's own minimum age is 5 s).
	echo scan >$kmemleak
	sleep 6
	echo scan >$kmemleak
	# What is a leak of the run, and what is not: the objects that
	# tests/rverbs_detectors.sh leaks on purpose, found late, and
	# ib_uverbs' own leak under fault injection (scripts/kmemleak-sort.awk
	# says which, and why).
	awk -v planted="$out/kmemleak-planted.log" -v known="$out/kmemleak-known.log" \
		-f "$RVERBS_TOP/scripts/kmemleak-sort.awk" <$kmemleak >>"$out/kmemleak.log"
	echo "rverbs-vm: kmemleak: $(grep -c '^unreferenced object' "$out/kmemleak.log") leak(s)," \
		"$(cat "$out/kmemleak-planted.log" 2>/dev/null | grep -c '^unreferenced object') planted by rverbs_detectors.sh," \
		"$(cat "$out/kmemleak-known.log" 2>/dev/null | grep -c '^unreferenced object') of ib_uverbs' uverbs_alloc_api under fault injection" >/dev/kmsg
fi
echo "rverbs-vm: end of the log" >/dev/kmsg
# Let the follower write the last lines.
sleep 1
kill "$dmesg_pid" 2>/dev/null
wait "$dmesg_pid" 2>/dev/null
cat /proc/sys/kernel/tainted >"$out/tainted"
echo "$rc" >"$out/rc"
sync
exit "$rc"
