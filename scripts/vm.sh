#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vm.sh CMD... - boot Debian's stock kernel in QEMU and run CMD as root.
#
# With RVERBS_VM_KERNEL=<kernel build dir> (make vm-debug, check-debug), the
# kernel of that build tree (the debug kernel of scripts/mkdebugkernel.sh)
# boots instead, with its own modules; the guest then also checks kmemleak.
# RVERBS_VM_UEFI_VARS and RVERBS_VM_APPEND: UEFI firmware and more kernel
# command line (below).
#
# The guest is virtme-ng inside the toolchain root: its root filesystem is
# the toolchain root (read-only, with throw-away overlays), the repository
# and the cache appear at the same absolute paths as on the host, TCG (no
# KVM), 2 vCPUs (RVERBS_VM_CPUS), and no network device but loopback: every
# packet a test sends stays inside the guest.
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
# why TEXT - the one-line reason this run failed, in OUT/why, which the
# lanes' summaries repeat (scripts/check.sh).
why() { printf '%s\n' "$*" >>"$out/why"; }
# The guest starts with a clean environment: pass what the scripts need.
printf 'export RVERBS_CACHE=%q RVERBS_TOP=%q RVERBS_GUEST_CWD=%q\n' "$RVERBS_CACHE" "$RVERBS_TOP" "$PWD" >"$out/env"
[ -n "${CI:-}" ] && printf 'export CI=%q\n' "$CI" >>"$out/env"
if [ -n "${RVERBS_VM_KERNEL:-}" ]; then
	# The modules built for that kernel (scripts/debug-modules.sh).
	tree=$RVERBS_TOP/build/debug/tree
	printf 'export RVERBS_KO=%q RVERBS_TAKEOVER_KO=%q RVERBS_KAH=%q\n' "$tree/rverbs.ko" \
		"$tree/rverbs_takeover.ko" "$tree/tests/test_modules/rv_kernel_ah.ko" >>"$out/env"
fi

kernel=/boot/vmlinuz-$KREL
memory=3G
# RVERBS_VM_CPUS: the guest's vCPUs (2, or 1 for the debug lane's second
# boot, scripts/check.sh).
cpus=${RVERBS_VM_CPUS:-2}
# The root (the toolchain root, read-only 9p) with the kernel's page cache
# (cache=loose; virtme-ng mounts it uncached): nothing changes it while the
# guest runs (the repository and the cache are mounts of their own, as
# virtme-ng made them), and every program started reads its binary and
# libraries through it.  Measured on the debug kernel under TCG: a start
# of /bin/true 0.52 -> 0.27 s, of python3 10.5 -> 2.9 s, the boot until
# the guest's script 220 -> 98 s.  The kernel takes the last rootflags=.
append=(--append "rootflags=version=9p2000.L,trans=virtio,access=any,msize=524288,cache=loose")
# tsc=reliable: the TSC stays the clocksource.  Under TCG the kernel's
# clocksource watchdog compares it with the HPET every half second, and on
# a loaded host a vCPU held off between the two reads looks like frequency
# skew: in w25 (2026-12-06) every guest of the run marked the TSC unstable
# (the one-vCPU boots within 5 minutes, the suite's after 13) and switched
# to the HPET, whose every read is an emulated MMIO access under QEMU's
# big lock, for every clock read of the kernel (timers, hrtimers, idle,
# TCP) and of user space (the vDSO falls back to the system call).
# Measured in one guest, its clocksource switched back and forth: 100
# starts of /bin/true took 3.1 s on the TSC, 4.7 and 6.4 s on the HPET
# (stock kernel); 11.7 s against 21.9 s (debug kernel).  QEMU's TSC is the
# host's, the same on every vCPU.
append+=(--append tsc=reliable)
if [ -n "${RVERBS_VM_KERNEL:-}" ]; then
	kernel=$RVERBS_VM_KERNEL
	# KASAN's shadow takes an eighth of the memory.
	memory=4G
	# Every KASAN report, not only the first.  no5lvl: four-level paging.
	# QEMU's TCG "max" CPU has LA57, and with five-level paging this
	# kernel's KASAN misreads every direct-map address as a wild access
	# while identify_cpu() has cleared boot_cpu_data's capabilities and not
	# yet read them again (arch/x86/kernel/cpu/common.c, the memset before
	# generic_identify(): pgtable_l5_enabled() is
	# cpu_feature_enabled(X86_FEATURE_LA57), so KASAN's shadow bounds shrink
	# to four levels' for that window).  An interrupt in the window
	# (handle_edge_irq's spinlock) brought an endless storm of reports at
	# 0.004 s: 3 boots of 3 on 2026-12-01, none of 8 with no5lvl.
	append+=(--append kasan_multi_shot --append no5lvl)
	# No udev in the guest: its coldplug never settles on this kernel
	# (scripts/guest-udevd.sh).
	export RVERBS_GUEST_UDEVD=$RVERBS_TOP/scripts/guest-udevd.sh
	info "booting the debug kernel $(cat "$kernel/include/config/kernel.release") in QEMU (TCG, about 3 min)"
else
	info "booting $KREL in QEMU (TCG, about 25 s)"
fi
# RVERBS_VM_APPEND: more kernel command line (the module-signature boot's
# module.sig_enforce=1).
[ -n "${RVERBS_VM_APPEND:-}" ] && append+=(--append "$RVERBS_VM_APPEND")
# RVERBS_VM_STARVED=1: a guest that runs at the lowest priority beside
# another (the lanes' second boots, scripts/check.sh).  Its hang detectors
# stay on, but their thresholds are in wall-clock time, and while the other
# guest keeps both cores busy this one's vCPU gets a few percent of a core:
# 10 s of the host's time is a fraction of a second of its own.  Their
# limits, for it: a task blocked 600 s (120), a CPU stuck 120 s (20:
# watchdog_thresh 60, the most it takes, against 10), an RCU grace period
# stalled 300 s (21, the most it takes), a netdev waited for 60 s (10).
# A real hang still ends in a report, later, or in the test's own timeout.
if [ -n "${RVERBS_VM_STARVED:-}" ]; then
	append+=(--append "sysctl.kernel.hung_task_timeout_secs=600 watchdog_thresh=60"
		--append "rcupdate.rcu_cpu_stall_timeout=300 sysctl.net.core.netdev_unregister_timeout_secs=60")
fi
# RVERBS_VM_UEFI_VARS=FILE: boot through UEFI firmware (Debian's OVMF)
# with FILE as its variable store, written by the firmware (a copy made for
# the run: scripts/modsig-prep.sh).  QEMU still loads the kernel itself
# (-kernel); the firmware starts it through its EFI stub.
qemu_opts=()
if [ -n "${RVERBS_VM_UEFI_VARS:-}" ]; then
	code=/usr/share/OVMF/OVMF_CODE_4M.fd
	qemu_opts=("--qemu-opts=-drive if=pflash,format=raw,unit=0,readonly=on,file=$code"
		"--qemu-opts=-drive if=pflash,format=raw,unit=1,file=$RVERBS_VM_UEFI_VARS")
fi
# RVERBS_VM_TCG_THREAD=single|multi: TCG's threading (QEMU's "-accel
# tcg,thread="), default multi.
[ -n "${RVERBS_VM_TCG_THREAD:-}" ] && qemu_opts+=("--qemu-opts=-accel tcg,thread=$RVERBS_VM_TCG_THREAD")
# The guest's first process runs from the output directory, the guest's
# /mnt (mounted first): guest.sh mounts the repository and the cache again,
# with the page cache, and no process may hold them open while it does.
cp "$RVERBS_TOP/scripts/guest.sh" "$out/guest.sh"
# The guest writes CMD's output to $out/console.log as it runs (guest.sh);
# it is shown here as it grows, so that a long run shows its progress.
# virtme-ng's own output and the guest's serial console (the kernel's boot
# messages, virtme-init's) go to $out/boot.log.
: >"$out/console.log"
set +e
# The repository is shared with the guest explicitly, read-only at its own
# path: virtme-ng overlays /tmp, /var, /usr, ... with throw-away directories,
# which would hide a checkout under them.  The output directory is the
# guest's /mnt, read-write (virtme-ng mounts every --rwdir before any
# --rodir, so it cannot sit inside the repository's mount).
boot() {
	qemu_ticks_before=${qemu_ticks:-0}
	timeout --foreground -k 10 "$timeout_s" "$RVERBS_TOP/scripts/in-root.sh" \
		vng --run "$kernel" --disable-kvm --cpus "$cpus" --memory "$memory" \
		--rwdir "/mnt=$out" --rodir "$RVERBS_TOP" --rodir "$RVERBS_CACHE" --cwd /mnt \
		"${append[@]}" "${qemu_opts[@]}" --verbose --exec "/mnt/guest.sh /mnt" \
		</dev/null >"$out/boot.log" 2>&1 &
	vng_pid=$!
	tail -n +1 -s 0.5 -f --pid=$vng_pid "$out/console.log" &
	tail_pid=$!
	# A guest that has not started guest.sh (which creates dmesg.log at
	# once) within boot_s hung while booting, before any of this project's
	# code ran; that is retried (below).  A KASAN report in the first second
	# is the kernel's own boot gone wrong (the five-level paging storm, above,
	# before no5lvl); that one is recognised at once.
	local start=$SECONDS qemu_pid='' f
	booted=
	while kill -0 $vng_pid 2>/dev/null; do
		# What QEMU has taken of the host's CPU so far (its user and
		# system time, all threads), for the line at the end: what the
		# guest's work cost beside the other guests of a check run,
		# where its wall-clock time says more of them.
		[ -n "$qemu_pid" ] || qemu_pid=$(pgrep -f -- "path=$out," | head -n 1)
		if [ -n "$qemu_pid" ] && read -ra f <"/proc/$qemu_pid/stat" 2>/dev/null; then
			qemu_ticks=$((qemu_ticks_before + f[13] + f[14]))
		fi
		if [ -z "$booted" ] && [ -e "$out/dmesg.log" ]; then
			booted=$((SECONDS - start))
			info "the guest started the command after $booted s"
		fi
		if [ ! -e "$out/dmesg.log" ] &&
			{ [ $((SECONDS - start)) -ge "$boot_s" ] ||
			grep -q '^\[    0\.[0-9]*\] BUG: KASAN' "$out/boot.log" 2>/dev/null; }; then
			kill $vng_pid 2>/dev/null
			# QEMU itself: the one exporting this run's directory.
			pkill -f -- "path=$out," 2>/dev/null
			wait $vng_pid
			wait $tail_pid
			return 125
		fi
		sleep 2
	done
	wait $vng_pid
	vrc=$?
	wait $tail_pid
}
vm_start=$SECONDS
qemu_ticks=
boot_s=${RVERBS_VM_BOOT_TIMEOUT:-300}
[ -n "${RVERBS_VM_KERNEL:-}" ] && boot_s=${RVERBS_VM_BOOT_TIMEOUT:-600}
# Up to three more boots, a safety net: a hang in the kernel's own boot is
# not this project's, and a retry costs little.
tries=1
boot
while [ $? = 125 ]; do
	info "the guest did not reach the command (within ${boot_s}s, or an early KASAN storm); the end of its console:"
	grep -v '^\s*$' "$out/boot.log" | tail -n 8 | cut -c1-160 | sed 's/^/  /' >&2
	mv "$out/boot.log" "$out/boot-hung.$tries.log"
	if [ $tries -ge 4 ]; then
		vrc=125
		break
	fi
	info "booting again ($((tries + 1)) of 4)"
	tries=$((tries + 1))
	boot
done
set -e
# The host CPU the boot took (QEMU's, sampled in boot()'s loop: virtme-ng's
# chain of processes does not hand its children's times on to this shell).
cpu_s=
[ -n "$qemu_ticks" ] && cpu_s=$((qemu_ticks / $(getconf CLK_TCK)))
[ -n "$cpu_s" ] && info "the boot took $cpu_s s of the host's CPU in $((SECONDS - vm_start)) s"
# RVERBS_VM_STEP=NAME (scripts/check.sh): the boot's time until the guest
# started the command, and the whole run's, as steps of the check run.
if [ -n "${RVERBS_VM_STEP:-}" ]; then
	step_record "$RVERBS_VM_STEP: until the command (try $tries)" "${booted:-$((SECONDS - vm_start))}"
	step_record "$RVERBS_VM_STEP: in all" $((SECONDS - vm_start)) "$vrc"
	[ -n "$cpu_s" ] && step_record "$RVERBS_VM_STEP: host CPU" "$cpu_s"
fi
# The last test the guest started, from its streamed kernel log.
last_test() {
	sed -n 's/.*rverbs-vm: test \(.*\) (tainted.*/\1/p' "$out/dmesg.log" 2>/dev/null | tail -n 1
}
if [ "$vrc" -eq 124 ] || [ ! -s "$out/rc" ]; then
	if [ "$vrc" -eq 124 ]; then
		info "the VM did not finish within ${timeout_s}s"
	else
		info "the guest died before CMD finished (vng exit $vrc); see the console output above"
	fi
	t=$(last_test)
	[ -n "$t" ] && info "it was running $t"
	if [ "$vrc" -eq 124 ]; then
		why "the VM did not finish within ${timeout_s}s${t:+, in $t}"
	else
		why "the guest died before its command finished (vng exit $vrc)${t:+, in $t}"
	fi
	if [ ! -s "$out/dmesg.log" ] && [ -s "$out/boot.log" ]; then
		info "it did not reach the command; the end of its console ($out/boot.log):"
		tail -n 25 "$out/boot.log" | sed 's/^/  /' >&2
	fi
	if [ -s "$out/dmesg.log" ]; then
		info "the last lines of its kernel log ($out/dmesg.log):"
		tail -n 25 "$out/dmesg.log" | sed 's/^/  /' >&2
		# The log's reports, and its last lines, for the lane's
		# summary (scripts/check.sh), which a CI log keeps.
		"$RVERBS_TOP/scripts/logcheck.sh" "$out/dmesg.log" >"$out/logcheck.txt" || true
		head -n 20 "$out/logcheck.txt" | sed 's/^/  /' >&2
		tail -n 12 "$out/dmesg.log" | cut -c1-200 >"$out/log-end.txt"
	fi
	[ "$vrc" -eq 124 ] && exit 124
	exit 1
fi
rc=$(cat "$out/rc")

# Kernel log checks (scripts/logcheck.sh), each report named with the test
# that was running.
if ! bad=$("$RVERBS_TOP/scripts/logcheck.sh" "$out/dmesg.log"); then
	printf '%s\n' "$bad" >"$out/logcheck.txt"
	why "the guest kernel log shows a problem (logcheck.txt)"
	info "the guest kernel log shows a problem ($out/dmesg.log):"
	printf '%s\n' "$bad" | head -n 20 | sed 's/^/  /' >&2
	exit 1
fi

# kmemleak (debug kernel): what its scans at the end of the run reported.
# ib_uverbs' own leak under fault injection (guest.sh) is shown, not held
# against the run.
if [ -s "$out/kmemleak-known.log" ]; then
	info "kmemleak: $(grep -c '^unreferenced object' "$out/kmemleak-known.log") object(s) of ib_uverbs' known leak (uverbs_alloc_api under fault injection; $out/kmemleak-known.log)"
fi
if [ -s "$out/kmemleak.log" ]; then
	info "kmemleak reports leaks ($out/kmemleak.log):"
	grep -E '^unreferenced object|^  comm|^  backtrace' "$out/kmemleak.log" | head -n 20 | sed 's/^/  /' >&2
	why "kmemleak: $(grep -c '^unreferenced object' "$out/kmemleak.log") leak(s):" \
		"$(grep -m 2 -E '^unreferenced object|^  comm' "$out/kmemleak.log" | xargs)"
	exit 1
fi

# Taint: bit 12 is O, 13 is E, 15 is K (include/linux/panic.h).  A planted
# bug (tests/rverbs_detectors.sh, the debug lane's last test) taints the
# kernel on purpose: then the taint when it began is what counts.
taint=$(cat "$out/tainted")
planted=$(sed -n 's/.*rverbs-expect: begin detector .* (tainted \([0-9]*\)).*/\1/p' "$out/dmesg.log" | head -n 1)
[ -n "$planted" ] && taint=$planted
allowed=$(((1 << 12) | (1 << 13) | (1 << 15)))
if [ $((taint & ~allowed)) -ne 0 ]; then
	info "the guest kernel is tainted ($taint, not only O/E/K); see $out/dmesg.log"
	why "the guest kernel is tainted ($taint, not only O/E/K)"
	exit 1
fi
# The guest's command failed: its failed cases say why (the lane's summary
# lists them); said here too, so that no failed boot goes without a reason.
[ "$rc" -eq 0 ] || why "its command exited $rc: the failed cases above"
exit "$rc"
