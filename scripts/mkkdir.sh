#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# mkkdir.sh - rebuild the Rust metadata Debian does not ship.
#
# Debian's linux-headers package lacks rust/*.rmeta, libmacros.so and
# scripts/target.json, so no Rust module can be built against it.  Since the
# root has the very compilers that built the kernel, running
# "olddefconfig modules_prepare" on linux-source with Debian's .config gives
# crates identical to the ones inside Debian's vmlinux.  That is checked:
# every Rust symbol the rebuilt core and kernel crates export must be in
# Debian's Module.symvers, otherwise a module built here could not load.
#
# Result: $RVERBS_CACHE/kdir-<hash>/{src,build}, with build/ usable as KDIR.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

base=$(kdir_base)

if [ "${1:-}" != --inside ]; then
	[ -e "$base/.rverbs-complete" ] && exit 0
	"$RVERBS_TOP/scripts/mkroot.sh"
	exec "$RVERBS_TOP/scripts/in-root.sh" "$RVERBS_TOP/scripts/mkkdir.sh" --inside
fi

hdr=/usr/src/linux-headers-$KREL
# Built in place: the output tree records absolute paths of the source.
tmp=$base
rm -rf "$tmp"
mkdir -p "$tmp/src" "$tmp/build"

info "unpacking $KSRC_PKG"
tar -xf /usr/src/$KSRC_PKG.tar.xz -C "$tmp/src" --strip-components=1

cp /boot/config-"$KREL" "$tmp/build/.config"
info "rebuilding the Rust metadata (make modules_prepare, about 2-4 minutes)"
make -C "$tmp/src" O="$tmp/build" -j"$(nproc)" -s \
	CC=$KCC HOSTCC=$KCC KERNELRELEASE=$KREL \
	olddefconfig modules_prepare >"$tmp/modules_prepare.log" 2>&1 ||
	{ tail -n 30 "$tmp/modules_prepare.log" >&2; die "modules_prepare failed; log in $tmp/modules_prepare.log"; }

cp "$hdr/Module.symvers" "$tmp/build/Module.symvers"
vmlinux=$(ls "$hdr/vmlinux" /usr/lib/debug/boot/vmlinux-"$KREL" 2>/dev/null | head -n 1 || true)
[ -n "$vmlinux" ] && cp "$vmlinux" "$tmp/build/vmlinux"

# The check: the rebuilt crates must export exactly what Debian's kernel does.
total=0
missing=()
for h in "$tmp"/build/rust/exports_core_generated.h "$tmp"/build/rust/exports_kernel_generated.h; do
	[ -e "$h" ] || die "$h was not generated: the kernel tree has no Rust support (CONFIG_RUST?)"
	while read -r sym; do
		total=$((total + 1))
		grep -q "[[:space:]]${sym}[[:space:]]" "$tmp/build/Module.symvers" || missing+=("$sym")
	done < <(sed -n 's/^EXPORT_SYMBOL_RUST_GPL(\(.*\));$/\1/p' "$h")
done
[ "$total" -gt 0 ] || die "no Rust exports found in the rebuilt crates"
if [ "${#missing[@]}" -ne 0 ]; then
	die "$(printf '%s ' \
		"${#missing[@]} of $total Rust symbols of the rebuilt crates are not exported by" \
		"Debian's kernel (first: ${missing[0]}). The rebuilt core/kernel crates differ" \
		"from the ones in /boot/vmlinuz-$KREL (different rustc or .config), so a module" \
		"built against them would fail to load with unknown symbols.")"
fi
info "Rust metadata verified: $total/$total exported symbols match Debian's Module.symvers"

touch "$base/.rverbs-complete"
for old in "$RVERBS_CACHE"/kdir-*; do
	[ "$old" = "$base" ] || [ ! -d "$old" ] || { info "removing stale tree $old"; rm -rf "$old"; }
done
