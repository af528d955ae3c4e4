#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# guest.sh OUT - the first process of a vm.sh run, inside the guest.
#
# Runs the command line saved in OUT/cmd and leaves, in OUT, its exit status
# (rc), the kernel log (dmesg.log) and the taint flags (tainted).
out=$1

export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
echo "rverbs-vm: running $(head -c 200 "$out/cmd")" >/dev/kmsg
bash "$out/cmd"
rc=$?
echo "rverbs-vm: done, exit status $rc" >/dev/kmsg
dmesg >"$out/dmesg.log"
cat /proc/sys/kernel/tainted >"$out/tainted"
echo "$rc" >"$out/rc"
sync
exit "$rc"
