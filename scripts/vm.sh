#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vm.sh CMD... - boot Debian's stock kernel in QEMU and run CMD as root.
#
# With RVERBS_VM_KERNEL=<kernel build dir> (make vm-debug, check-debug), the
# kernel of that build tree (the debug kernel of scripts/mkdebugkernel.sh)
# boots instead, with its own modules; the guest then also checks kmemleak.
#
# The guest is virtme-ng inside the toolchain root: its root filesystem is
# the toolchain root (read-only, with throw-away overlays), the repository
# and the cache appear at the same absolute paths as on the host, TCG (no
# KVM), 2 vCPUs, and no network device but loopback: every packet a test
# sends stays inside the guest.
#
# CMD is a shell command line, run with bash in the current directory.  The
# guest's kernel log is saved to $RVERBS_VM_OUT/dmesg.log (default
# build/vm/).  The run fails, whatever CMD returned, when the guest died,
# when its log shows an oops, BUG, WARNING, lockdep report, RCU stall or
# soft lockup, or when the kernel is tainted by anything but
#   O (out-of-tree module), E (unsigned module) and K (livepatch: rverbs_takeover).
# Exit status: CMD's, or 1 for such a failure, or 124 for a timeout.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -gt 0 ] || die "usage: vm.sh CMD... (e.g. make vm CMD='lsmod; rdma link')"
out=${RVERBS_VM_OUT:-$RVERBS_TOP/build/vm}
timeout_s=${RVERBS_VM_TIMEOUT:-3000}

"$RVERBS_TOP/scripts/mkroot.sh"
rm -rf "$out"
mkdir -p "$out"
printf '%s\n' "$*" >"$out/cmd"
# The guest starts with a clean environment: pass what the scripts need.
printf 'export RVERBS_CACHE=%q\n' "$RVERBS_CACHE" >"$out/env"
[ -n "${CI:-}" ] && printf 'export CI=%q\n' "$CI" >>"$out/env"
if [ -n "${RVERBS_VM_KERNEL:-}" ]; then
	# The modules built for that kernel (scripts/debug-modules.sh).
	tree=$RVERBS_TOP/build/debug/tree
	printf 'export RVERBS_KO=%q RVERBS_TAKEOVER_KO=%q RVERBS_KAH=%q\n' "$tree/rverbs.ko" \
		"$tree/rverbs_takeover.ko" "$tree/tests/test_modules/rv_kernel_ah.ko" >>"$out/env"
fi

kernel=/boot/vmlinuz-$KREL
memory=3G
if [ -n "${RVERBS_VM_KERNEL:-}" ]; then
	kernel=$RVERBS_VM_KERNEL
	# KASAN's shadow takes an eighth of the memory.
	memory=4G
	info "booting the debug kernel $(cat "$kernel/include/config/kernel.release") in QEMU (TCG, about 40 s)"
else
	info "booting $KREL in QEMU (TCG, about 25 s)"
fi
set +e
timeout --foreground -k 10 "$timeout_s" "$RVERBS_TOP/scripts/in-root.sh" \
	vng --run "$kernel" --disable-kvm --cpus 2 --memory "$memory" \
	--rwdir "$out" --rodir "$RVERBS_CACHE" --cwd "$PWD" \
	--exec "$RVERBS_TOP/scripts/guest.sh $out" </dev/null
vrc=$?
set -e
[ "$vrc" -eq 124 ] && { info "the VM did not finish within ${timeout_s}s"; exit 124; }
[ -s "$out/rc" ] || die "the guest died before CMD finished (vng exit $vrc); see the console output above"
rc=$(cat "$out/rc")

# Kernel log checks.
bad=$(grep -nE 'Oops|BUG:|WARNING:|kernel BUG|general protection fault|Call Trace:|possible circular locking|possible recursive locking|inconsistent lock state|lockdep|INFO: rcu_.* detected stall|soft lockup|hung_task|UBSAN:|KASAN:|kmemleak:.*leak|unregister_netdevice: waiting for|refcount_t:|ref_tracker|RESTRACK' \
	"$out/dmesg.log" | grep -v 'rverbs-vm:' | head -n 20 || true)
if [ -n "$bad" ]; then
	info "the guest kernel log shows a problem ($out/dmesg.log):"
	printf '  %s\n' "$bad" >&2
	exit 1
fi

# kmemleak (debug kernel): what its scans at the end of the run reported.
if [ -s "$out/kmemleak.log" ]; then
	info "kmemleak reports leaks ($out/kmemleak.log):"
	grep -E '^unreferenced object|^  comm|^  backtrace' "$out/kmemleak.log" | head -n 20 | sed 's/^/  /' >&2
	exit 1
fi

# Taint: bit 12 is O, 13 is E, 15 is K (include/linux/panic.h).
taint=$(cat "$out/tainted")
allowed=$(((1 << 12) | (1 << 13) | (1 << 15)))
if [ $((taint & ~allowed)) -ne 0 ]; then
	info "the guest kernel is tainted ($taint, not only O/E/K); see $out/dmesg.log"
	exit 1
fi
exit "$rc"
