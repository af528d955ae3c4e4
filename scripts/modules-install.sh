#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# modules-install.sh [--sign KEY CERT] PREFIX - install the built rverbs.ko
# and rverbs_takeover.ko under PREFIX/lib/modules/<release>/updates/ the way
# Debian installs its kernel's own modules, through kbuild's
# modules_install:
#
#   stripped of debug information, BTF kept (INSTALL_MOD_STRIP=1, as
#     Debian's linux-modules package: its modules have no .debug sections),
#     but for rverbs_takeover.ko: strip rewrites its livepatch relocation
#     section into one of an unknown type, without its links
#     (scripts/klp-post-link.sh), and klp_enable_patch() then oopses
#     reading the symbols' names (seen 2026-12-08 in the module-signature
#     boot), so it is installed as built;
#   signed with KEY and CERT when given (the kernel's scripts/sign-file,
#     sha256: between stripping, which would drop an appended signature,
#     and compressing);
#   compressed as the kernel's configuration says (Debian:
#     CONFIG_MODULE_COMPRESS_XZ and CONFIG_MODULE_COMPRESS_ALL, so .ko.xz,
#     xz with CRC32 and a 1 MiB dictionary, like linux-modules' own).
#
# No depmod: "make install" runs it (scripts/install.sh), the package runs
# it in its postinst.  Runs where the modules are built: in the toolchain
# root, or on the host with KDIR= (the user's own kernel tree).  Builds
# nothing: "make modules" comes first.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

key='' cert=''
if [ "${1:-}" = --sign ]; then
	[ $# -ge 3 ] || die "usage: modules-install.sh [--sign KEY CERT] PREFIX"
	key=$2 cert=$3
	shift 3
fi
[ $# = 1 ] || die "usage: modules-install.sh [--sign KEY CERT] PREFIX"
prefix=$1

if [ -z "${RVERBS_IN_ROOT:-}" ] && [ -z "${KDIR:-}" ]; then
	die "modules-install.sh runs inside the toolchain root (scripts/in-root.sh) or with KDIR="
fi

cd "$RVERBS_TOP"
for m in rverbs.ko rverbs_takeover.ko; do
	[ -e "$m" ] || die "$m is not built (make modules)"
done

kbuild=${KDIR:-$("$RVERBS_TOP/scripts/kdir-path.sh" build)}
stock=()
[ -z "${KDIR:-}" ] && stock=(CC="$KCC" HOSTCC="$KCC" KERNELRELEASE="$KREL")

# kbuild's own depmod step (which runs only when the tree has a System.map,
# and otherwise warns that it skips it) is left out: see above.
# kbuild's strip command for every module but the livepatch (see above).
args=(INSTALL_MOD_PATH="$prefix" INSTALL_MOD_DIR=updates INSTALL_MOD_STRIP=1 cmd_depmod=:
	'cmd_strip=case $@ in */rverbs_takeover.ko) ;; *) $(STRIP) --strip-debug $@ ;; esac')
if [ -n "$key" ]; then
	for f in "$key" "$cert"; do
		[ -r "$f" ] || die "cannot read $f"
	done
	# kbuild signs with the kernel's own key when CONFIG_MODULE_SIG_ALL=y
	# (certs/signing_key.pem of the tree: Debian keeps it to itself); its
	# sign command is given the user's key and certificate instead, and a
	# failure stops the installation (kbuild's own ignores it for
	# external modules).
	args+=(CONFIG_MODULE_SIG_ALL=y
		"cmd_sign=\$(objtree)/scripts/sign-file sha256 '$key' '$cert' \$@")
else
	args+=(CONFIG_MODULE_SIG_ALL=)
fi

if [ -n "${KDIR:-}" ]; then
	rel=$(cat "$kbuild/include/config/kernel.release")
else
	rel=$KREL
fi
dst=$prefix/lib/modules/$rel/updates
info "installing rverbs.ko and rverbs_takeover.ko into $dst${key:+ (signed)}"
make -s -C "$kbuild" M="$RVERBS_TOP" "${stock[@]}" "${args[@]}" modules_install

# What kbuild made of them: the compression its configuration asks for, and
# a signature exactly when one was asked for (a variable that kbuild did
# not take would otherwise go unnoticed).
marker='~Module signature appended~'
for m in rverbs rverbs_takeover; do
	f=
	for c in "$dst/$m.ko" "$dst/$m.ko".*; do
		[ -e "$c" ] && f=$c
	done
	[ -n "$f" ] || die "kbuild installed no $m.ko in $dst"
	case $f in
	*.ko.xz) cat=(xz -dc) ;;
	*.ko.gz) cat=(gzip -dc) ;;
	*.ko.zst) cat=(zstd -dcq) ;;
	*) cat=(cat) ;;
	esac
	tail=$("${cat[@]}" "$f" | tail -c 28 | tr -d '\0\n')
	if [ -n "$key" ] && [ "$tail" != "$marker" ]; then
		die "$f is not signed"
	elif [ -z "$key" ] && [ "$tail" = "$marker" ]; then
		die "$f is signed, though no key was given"
	fi
	info "  $f"
done
