#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The Debian package of "make deb", installed as a user installs it, on the
# stock kernel it is built for.  The package is made before the boot by
# scripts/package-prep.sh, in the toolchain root, from the tree's modules
# by scripts/mkdeb.sh (what make deb runs), as on a user's build machine,
# signed with the throw-away key that the module-signature boot's firmware
# trusts (scripts/modsig-prep.sh); run by hand without RVERBS_PACKAGE_DIR,
# this test makes a key and the package itself.  dpkg -i installs it into
# the guest's root (writable through virtme-ng's overlay, thrown away at
# power-off); modinfo shows its version, vermagic and signer; "modprobe
# rverbs", not insmod, loads it; "rdma link add ... type rverbs" loads it
# by itself (its alias rdma-link-rverbs) and never the takeover, which loads
# only on request; dpkg -r removes it and depmod forgets it.
#
# It runs in the module-signature boot (TEST_PROGS_MODSIG: UEFI firmware
# that trusts the key, module.sig_enforce=1), so every module it loads from
# the package the kernel has verified too.  The package's signatures are
# also checked with the kernel's own scripts/extract-module-sig.pl and
# openssl, against the test certificate (it must verify), another one and a
# changed module (both must fail).
#
# It leaves nothing behind for the tests after it, which insmod the tree's
# own modules: the package is purged, rverbs unloaded.

. "$(dirname "$0")/lib.sh"

REL=$(uname -r)
PKG=rverbs-modules-$REL
KSRC=$("$RVERBS_TOP/scripts/kdir-path.sh" src)
SIGNER="rverbs package test key"

work=$(mktemp -d /tmp/rverbs_package.XXXXXX)

cleanup() {
	rdma link del rv0 2>/dev/null
	takeover_off 2>/dev/null
	modprobe -r rverbs 2>/dev/null || rmmod rverbs 2>/dev/null
	dpkg -P "$PKG" >/dev/null 2>&1
	ns_cleanup
	rm -rf "$work"
	true
}
trap cleanup EXIT

ktap_print_header

# The package is for the kernel the tree's modules were built for: Debian's
# stock kernel, not the debug lane's.
built_for=$(modinfo -F vermagic "$RVERBS_KO" 2>/dev/null)
if [ "${built_for%% *}" != "$REL" ]; then
	ktap_skip_all "the package is for Debian's stock kernel; this is $REL"
	exit "$KSFT_SKIP"
fi
ktap_set_plan 25

VERSION=$(modinfo -F version "$RVERBS_KO")
[ -n "$VERSION" ] || ktap_exit_fail_msg "$RVERBS_KO has no modinfo version"
ktap_print_msg "version $VERSION"

# rverbs must come from the package: nothing of an earlier test stays.
takeover_off 2>/dev/null
rmmod rverbs 2>/dev/null
dpkg -P "$PKG" >/dev/null 2>&1
[ ! -d /sys/module/rverbs ] || ktap_exit_fail_msg "rverbs is loaded and cannot be unloaded"

# logged CMD... - CMD with its output kept, and shown only when it fails.
logged() {
	"$@" >"$work/cmd.log" 2>&1 || {
		sed 's/^/# /' "$work/cmd.log"
		return 1
	}
}

# The keys and the package: made before the boot by scripts/package-prep.sh
# (make check passes RVERBS_PACKAGE_DIR), inside the toolchain root, as a
# user makes them on the machine that builds the modules; run by hand,
# without it, made here, whose userspace is that root's.
prep=${RVERBS_PACKAGE_DIR:-}
keys=$work debs=$work/deb
if [ -n "$prep" ]; then
	keys=$prep/keys debs=$prep/deb
	[ "$(cat "$prep/keys.rc" 2>/dev/null)" = 0 ] && read -r SIGNER <"$prep/signer" || {
		sed 's/^/# /' "$prep/keys.log" 2>/dev/null
		ktap_exit_fail_msg "no test keys (scripts/package-prep.sh)"
	}
	# prepared_build - mkdeb.sh's exit status before the boot, its output
	# shown when it failed.
	prepared_build() {
		[ "$(cat "$prep/mkdeb.rc" 2>/dev/null)" = 0 ] || {
			sed 's/^/# /' "$prep/mkdeb.log" 2>/dev/null
			return 1
		}
	}
	ksft_check "the package builds, signed with a throw-away key (scripts/mkdeb.sh, before the boot)" \
		prepared_build
else
	# mkkey NAME CN - a throw-away RSA key and its self-signed certificate,
	# as Documentation/packaging.rst tells users to make theirs.
	mkkey() {
		openssl req -new -x509 -newkey rsa:2048 -nodes -sha256 -days 1 -subj "/CN=$2/" \
			-addext basicConstraints=critical,CA:FALSE -addext keyUsage=digitalSignature \
			-keyout "$work/$1.key" -out "$work/$1.crt" >/dev/null 2>&1
	}
	mkkey test "$SIGNER" && mkkey other "another key" ||
		ktap_exit_fail_msg "openssl could not make the test keys"
	ksft_check "the package builds, signed with a throw-away key (scripts/mkdeb.sh)" \
		logged env RVERBS_IN_ROOT=1 "$RVERBS_TOP/scripts/mkdeb.sh" --no-lintian \
		--sign "$work/test.key" "$work/test.crt" "$work/deb"
fi
DEB=$debs/${PKG}_${VERSION}_amd64.deb
[ -e "$DEB" ] || ktap_exit_fail_msg "no $DEB"

ksft_check "it depends on exactly linux-image-$REL, at the version installed" \
	test "$(dpkg-deb -f "$DEB" Depends)" = \
	"linux-image-$REL (= $(dpkg-query -W -f '${Version}' "linux-image-$REL"))"

ksft_check "its version is the modules' (modinfo)" \
	test "$(dpkg-deb -f "$DEB" Version)" = "$VERSION"

ksft_check "dpkg -i succeeds" logged dpkg -i "$DEB"

# modinfo NAME finds the installed module through depmod's index.
ksft_check "modinfo rverbs: the installed module, with the version" \
	test "$(modinfo -n rverbs 2>/dev/null)" = "/lib/modules/$REL/updates/rverbs.ko.xz" -a \
	"$(modinfo -F version rverbs 2>/dev/null)" = "$VERSION"

vermagic=$(modinfo -F vermagic rverbs 2>/dev/null)
ksft_check "modinfo rverbs: the vermagic of the running kernel" test "${vermagic%% *}" = "$REL"

# signed_by_test_key MODULE - modinfo names the test key: its CN, sha256
# and its serial number (sig_key, as "AB:CD:...", leading zeros aside).
signed_by_test_key() {
	local serial
	serial=$(openssl x509 -in "$keys/test.crt" -noout -serial | sed 's/^serial=0*//')
	[ "$(modinfo -F signer "$1")" = "$SIGNER" ] &&
		[ "$(modinfo -F sig_hashalgo "$1")" = sha256 ] &&
		[ "$(modinfo -F sig_key "$1" | tr -d ':\n' | sed 's/^0*//')" = "${serial^^}" ]
}
ksft_check "modinfo: both modules signed by the test key, sha256" \
	eval 'signed_by_test_key rverbs && signed_by_test_key rverbs_takeover'

# sig_parts MODULE - the installed MODULE uncompressed, its PKCS#7
# signature as the kernel's own extract-module-sig.pl takes it off
# ($work/MODULE.p7s), and what that signs ($work/MODULE.body).
sig_parts() {
	local ko=$work/$1.ko f
	f=$(modinfo -n "$1") && xz -dc "$f" >"$ko" &&
		perl "$KSRC/scripts/extract-module-sig.pl" -s "$ko" >"$work/$1.p7s" 2>/dev/null &&
		perl "$KSRC/scripts/extract-module-sig.pl" -0 "$ko" >"$work/$1.body" 2>/dev/null &&
		[ -s "$work/$1.p7s" ] && [ -s "$work/$1.body" ]
}

# verifies MODULE CERT [BODY] - openssl finds MODULE's signature good over
# BODY (by default what it signs) with CERT, a self-signed certificate.
verifies() {
	openssl cms -verify -binary -inform DER -in "$work/$1.p7s" \
		-content "${3:-$work/$1.body}" -certfile "$2" -CAfile "$2" -purpose any \
		-out /dev/null 2>/dev/null
}

# changed MODULE - a copy of what MODULE's signature signs, one byte of its
# code changed: complemented, so it differs whatever it was (writing a fixed
# 0xff changed nothing where the byte already was 0xff, as in rverbs.ko
# since its C entry points).
changed() {
	local b
	b=$(od -An -tu1 -j4096 -N1 "$work/$1.body" | tr -d ' ') && [ -n "$b" ] &&
		cp "$work/$1.body" "$work/$1.changed" &&
		printf "\\$(printf '%03o' $((b ^ 255)))" |
		dd of="$work/$1.changed" bs=1 seek=4096 conv=notrunc status=none &&
		! cmp -s "$work/$1.body" "$work/$1.changed"
}

ksft_check "the signatures verify against the test certificate (extract-module-sig.pl, openssl)" \
	eval 'sig_parts rverbs && sig_parts rverbs_takeover &&
		verifies rverbs "$keys/test.crt" && verifies rverbs_takeover "$keys/test.crt"'
# Both negative cases need the signatures taken off first: a failure to
# extract them must not pass for a refusal.
ksft_check "... and not against another certificate" \
	eval '[ -s "$work/rverbs.p7s" ] && [ -s "$work/rverbs_takeover.p7s" ] &&
		! verifies rverbs "$keys/other.crt" && ! verifies rverbs_takeover "$keys/other.crt"'
ksft_check "... and not over a changed module" \
	eval 'changed rverbs && changed rverbs_takeover &&
		! verifies rverbs "$keys/test.crt" "$work/rverbs.changed" &&
		! verifies rverbs_takeover "$keys/test.crt" "$work/rverbs_takeover.changed"'

ksft_check "rverbs_takeover has no alias: only a request loads it" \
	eval '[ -z "$(modinfo -F alias rverbs_takeover)" ] &&
		! grep -qw rverbs_takeover /lib/modules/$REL/modules.alias'

# The tree's rverbs.ko is in no index: what modprobe loads is the package's.
ksft_check "modprobe rverbs loads the installed module" \
	eval 'modprobe rverbs && [ "$(cat /sys/module/rverbs/version)" = "$VERSION" ]'
ksft_check "... and not rverbs_takeover" test ! -d /sys/module/rverbs_takeover
ksft_check "modprobe -r rverbs unloads it" \
	eval 'modprobe -r rverbs && [ ! -d /sys/module/rverbs ]'

# ib_core makes the RDMA netlink family; rverbs itself must not be there.
modprobe ib_core && ns_setup || ktap_exit_fail_msg "cannot set up veth0"
link_add_loads_rverbs() {
	[ ! -d /sys/module/rverbs ] &&
		rdma link add rv0 type rverbs netdev veth0 &&
		[ -d /sys/module/rverbs ] && [ -e /sys/class/infiniband/rv0 ]
}
ksft_check "rdma link add rv0 type rverbs netdev veth0 loads rverbs by itself" \
	link_add_loads_rverbs
ksft_check "... and not rverbs_takeover" test ! -d /sys/module/rverbs_takeover

takeover_by_modprobe() {
	modprobe rverbs_takeover &&
		wait_until 60 eval '[ "$(cat $LP/transition 2>/dev/null)" = 0 ]' &&
		[ "$(cat $LP/enabled)" = 1 ]
}
ksft_check "modprobe rverbs_takeover, on request, enables the livepatch" takeover_by_modprobe
ksft_check "... which switches off and unloads" \
	eval 'takeover_off && [ ! -d /sys/module/rverbs_takeover ]'
ksft_check "rdma link del rv0, modprobe -r rverbs" \
	eval 'rdma link del rv0 && modprobe -r rverbs && [ ! -d /sys/module/rverbs ]'

ksft_check "dpkg -r removes the package" logged dpkg -r "$PKG"
ksft_check "depmod forgot both modules: modinfo fails" \
	eval '! modinfo rverbs >/dev/null 2>&1 && ! modinfo rverbs_takeover >/dev/null 2>&1'
ksft_check "... and the alias rdma-link-rverbs names no module" \
	eval '! modprobe -R rdma-link-rverbs >/dev/null 2>&1'
# ib_core (which modprobe -r may have taken with rverbs) answers EINVAL for
# a link type that no module provides.
ksft_check "... so rdma link add ... type rverbs fails again" \
	eval 'modprobe ib_core && ! rdma link add rv0 type rverbs netdev veth0 2>/dev/null &&
		[ ! -d /sys/module/rverbs ]'

purge_pkg() {
	dpkg -P "$PKG" >/dev/null 2>&1 &&
		[ ! -e /etc/modules-load.d/rverbs.conf ] &&
		[ ! -e "/lib/modules/$REL/updates/rverbs.ko.xz" ] &&
		[ ! -e "/lib/modules/$REL/updates/rverbs_takeover.ko.xz" ] &&
		! dpkg-query -W "$PKG" >/dev/null 2>&1
}
ksft_check "dpkg -P leaves no file of the package behind" purge_pkg
ksft_check "nothing of rverbs is loaded" \
	test ! -d /sys/module/rverbs -a ! -d /sys/module/rverbs_takeover

ktap_finished
