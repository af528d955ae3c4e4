#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Module signatures enforced by Debian's stock kernel, in a boot of its own
# (scripts/check.sh runs it after the suite's boot): UEFI firmware (OVMF)
# whose signature database "db" holds a throw-away certificate that
# scripts/modsig-prep.sh made for this run, and the kernel command line
# module.sig_enforce=1.
#
# Debian's kernel loads the certificates of db into its .platform keyring
# (security/integrity/platform_certs/load_uefi.c, whether or not Secure
# Boot is on) and falls back to that keyring when it verifies a module's
# signature (kernel/module/signing.c): a module signed with the test key
# must load, one signed with another key, one with no signature and one
# changed after signing must be refused with EKEYREJECTED, each with the
# kernel's own reason.  The modules are those of "make install SIGN_KEY=...
# SIGN_CERT=..." (scripts/modules-install.sh: stripped, signed, xz): the
# signed rverbs then loads with modprobe from /lib/modules/.../updates, and
# "rdma link add ... type rverbs" works on it.
#
# RVERBS_MODSIG_DIR is what modsig-prep.sh made: keys/, test/ and other/
# (the two signed installations).

. "$(dirname "$0")/lib.sh"

REL=$(uname -r)
DIR=${RVERBS_MODSIG_DIR:-}
SIGNER="rverbs signature test key"

ktap_print_header

if ! grep -qw 'module.sig_enforce=1' /proc/cmdline; then
	ktap_skip_all "this boot does not enforce module signatures (scripts/check.sh boots one that does)"
	exit "$KSFT_SKIP"
fi
ktap_set_plan 14
[ -n "$DIR" ] && [ -d "$DIR/test" ] || ktap_exit_fail_msg "RVERBS_MODSIG_DIR is not set or holds no signed modules"

work=$(mktemp -d /tmp/rverbs_modsig.XXXXXX)
upd=/lib/modules/$REL/updates
cleanup() {
	rdma link del rv0 2>/dev/null
	takeover_off 2>/dev/null
	rmmod rverbs 2>/dev/null
	# depmod again is left out (a minute under TCG): this boot, whose
	# overlay is thrown away, runs no other test.
	rm -f "$upd"/rverbs.ko* "$upd"/rverbs_takeover.ko*
	ns_cleanup
	rm -rf "$work"
	true
}
trap cleanup EXIT

# refused MODULE REASON - insmod MODULE fails with EKEYREJECTED ("Key was
# rejected by service") and the kernel log gives REASON; rverbs stays out.
refused() {
	local out
	kmsg_mark
	if out=$(insmod "$1" 2>&1); then
		echo "# $1 loaded"
		rmmod rverbs
		return 1
	fi
	echo "# insmod: $out"
	[[ $out == *"Key was rejected by service"* ]] || return 1
	[ ! -d /sys/module/rverbs ] || return 1
	[ -z "$2" ] || kmsg_since | grep -qF "$2" || {
		echo "# the kernel did not log \"$2\""
		return 1
	}
}

ko() { echo "$DIR/$1/lib/modules/$REL/updates/$2.ko.xz"; }

ksft_check "the kernel enforces module signatures (module.sig_enforce=1)" \
	test "$(cat /sys/module/module/parameters/sig_enforce)" = Y

ksft_check "booted through UEFI firmware" test -d /sys/firmware/efi

# load_uefi.c adds each certificate of db to .platform, and says so.
ksft_check "the test certificate from the firmware's db is in the .platform keyring" \
	eval "dmesg | grep -q \"integrity: Loaded X.509 cert '$SIGNER\""

ksft_check "the signed modules name the test key (modinfo signer)" \
	test "$(modinfo -F signer "$(ko test rverbs)")" = "$SIGNER" -a \
	"$(modinfo -F signer "$(ko test rverbs_takeover)")" = "$SIGNER" -a \
	"$(modinfo -F signer "$(ko other rverbs)")" = "another key"

ksft_check "an unsigned rverbs.ko is refused (EKEYREJECTED)" \
	refused "$RVERBS_KO" "Loading of unsigned module is rejected"

ksft_check "rverbs signed with a key the kernel does not trust is refused (EKEYREJECTED)" \
	refused "$(ko other rverbs)" "Loading of module with unavailable key is rejected"

# One byte of the signed code changed, the signature kept: the signature
# no longer verifies.
changed() {
	xz -dc "$(ko test rverbs)" >"$work/changed.ko" || return 1
	local size off
	size=$(stat -c %s "$work/changed.ko")
	off=$((size / 3))
	printf '\x5a' | cmp -s - <(dd if="$work/changed.ko" bs=1 skip=$off count=1 2>/dev/null) &&
		off=$((off + 1))
	printf '\x5a' | dd of="$work/changed.ko" bs=1 seek=$off conv=notrunc 2>/dev/null
	refused "$work/changed.ko" ""
}
ksft_check "rverbs changed after it was signed is refused (EKEYREJECTED)" changed

# insmod loads no dependency: ib_core and the rest first (modprobe: Debian's
# own modules, signed by Debian).
deps=$(modinfo -F depends "$(ko test rverbs)" | tr , ' ')
# shellcheck disable=SC2086 # a list of names
modprobe -a $deps || ktap_exit_fail_msg "could not load rverbs' dependencies: $deps"
ksft_check "rverbs signed with the test key loads (insmod)" insmod "$(ko test rverbs)"
# The E taint flag: a module loaded without a valid signature.
ksft_check "it is not tainted as unsigned" \
	eval '[ -r /sys/module/rverbs/taint ] && ! grep -q E /sys/module/rverbs/taint'
# shellcheck disable=SC2034 # takeover_on (lib.sh) loads it
RVERBS_TAKEOVER_KO=$(ko test rverbs_takeover)
ksft_check "the takeover signed with the test key loads, and unloads" \
	eval 'takeover_on && takeover_off'
rmmod rverbs

# make install's layout: modprobe and rdma link add find the signed
# modules through depmod's index.
install_test() {
	mkdir -p "$upd" &&
	install -m 0644 "$DIR/test/lib/modules/$REL/updates"/*.ko.xz "$upd"/ &&
	depmod "$REL"
}
ksft_check "the signed installation is in place (depmod)" install_test
ksft_check "modprobe rverbs loads the signed module" \
	eval 'modprobe rverbs && [ "$(modinfo -F signer rverbs)" = "$SIGNER" ]'
rmmod rverbs
ns_setup >/dev/null 2>&1 || ktap_exit_fail_msg "could not set up veth0"
ksft_check "rdma link add ... type rverbs loads it by itself and makes rv0" \
	eval 'rdma link add rv0 type rverbs netdev veth0 && [ -d /sys/class/infiniband/rv0 ]'
ksft_check "rv0 goes away and rverbs unloads" \
	eval 'rdma link del rv0 && rmmod rverbs'

ktap_finished
