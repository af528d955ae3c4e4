#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# guest.sh OUT - the first process of a vm.sh run, inside the guest.
#
# Runs the command line saved in OUT/cmd, with the environment of OUT/env,
# and leaves, in OUT, its exit status
# (rc), the kernel log (dmesg.log) and the taint flags (tainted).
out=$1

export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# shellcheck source=/dev/null
. "$out/env"
# The static device nodes that systemd-tmpfiles creates from
# "kmod static-nodes" on a normal boot (virtme-ng has no udev): opening one
# loads its module on demand, e.g. /dev/net/tun for "ip tuntap".
kmod static-nodes --format=tmpfiles 2>/dev/null |
	while read -r type path mode _ _ _ devnum; do
		case $type in c* | b*) ;; *) continue ;; esac
		[ -e "$path" ] && continue
		mkdir -p "${path%/*}"
		mknod -m "$mode" "$path" "${type%!}" "${devnum%:*}" "${devnum#*:}"
	done

# kmemleak (debug kernel): forget what boot left, report what the run left.
kmemleak=/sys/kernel/debug/kmemleak
[ -w $kmemleak ] && echo clear >$kmemleak

echo "rverbs-vm: running $(head -c 200 "$out/cmd")" >/dev/kmsg
bash "$out/cmd"
rc=$?
echo "rverbs-vm: done, exit status $rc" >/dev/kmsg
if [ -w $kmemleak ]; then
	# An object is reported once it has looked unreferenced for two scans
	# some seconds apart (kmemleak's own minimum age is 5 s).
	echo scan >$kmemleak
	sleep 6
	echo scan >$kmemleak
	cat $kmemleak >"$out/kmemleak.log"
	echo "rverbs-vm: kmemleak: $(grep -c '^unreferenced object' "$out/kmemleak.log") leak(s)" >/dev/kmsg
fi
dmesg >"$out/dmesg.log"
cat /proc/sys/kernel/tainted >"$out/tainted"
echo "$rc" >"$out/rc"
sync
exit "$rc"
