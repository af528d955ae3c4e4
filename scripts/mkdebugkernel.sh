#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# mkdebugkernel.sh - build (or reuse) the debug kernel of "make check-debug".
#
# The same linux-source-7.2 as the stock kernel, built for the VM only with
# clang 22 (LLVM=-22: 7.2's Kconfig allows Rust with KASAN only on a
# clang-built kernel; rustc 1.97.1 is built on the same LLVM 22.1.8) from
# virtme-ng's minimal config, tests/config and scripts/debug.config (KASAN,
# lockdep, kmemleak, UBSAN, fault injection, reference trackers). Every
# option of the two fragments is checked in the final .config.
#
# Result: $RVERBS_CACHE/dbgk-<hash>/{src,build}, build/ usable as KDIR (with
# LLVM=-22) and as virtme-ng's kernel (vng --run build/).  About 30 minutes
# on 2 cores, once per change of its inputs; progress is printed every
# minute.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

base=$(dbgk_base)

if [ "${1:-}" != --inside ]; then
	[ -e "$base/.rverbs-complete" ] && exit 0
	"$RVERBS_TOP/scripts/mkroot.sh"
	exec "$RVERBS_TOP/scripts/in-root.sh" "$RVERBS_TOP/scripts/mkdebugkernel.sh" --inside
fi

command -v clang-22 >/dev/null || die "clang-22 is missing from the toolchain root"
rm -rf "$base"
mkdir -p "$base/src" "$base/build"
log=$base/build.log

info "unpacking $KSRC_PKG for the debug kernel"
tar -xf /usr/src/$KSRC_PKG.tar.xz -C "$base/src" --strip-components=1

# virtme-ng's minimal config (vng --kconfig), with the two fragments on top.
frag=$base/fragments.config
cat "$RVERBS_TOP/tests/config" "$RVERBS_TOP/scripts/debug.config" >"$frag"
info "configuring the debug kernel (virtme-ng's minimal config + tests/config + scripts/debug.config)"
(cd "$base/src" && virtme-configkernel --defconfig --custom "$frag" \
	O="$base/build" LLVM=-22) >"$log" 2>&1 ||
	{ tail -n 30 "$log" >&2; die "configuring the debug kernel failed; log in $log"; }
# virtme-ng puts its own settings after the fragments (debug info among
# them): the fragments go over its result once more, so that theirs win.
(cd "$base/src" && KCONFIG_CONFIG="$base/build/.config" scripts/kconfig/merge_config.sh -m \
	-O "$base/build" "$base/build/.config" "$frag" &&
	make O="$base/build" LLVM=-22 olddefconfig) >>"$log" 2>&1 ||
	{ tail -n 30 "$log" >&2; die "merging the fragments over virtme-ng's config failed; log in $log"; }

missing=()
while IFS= read -r line; do
	case $line in
	CONFIG_*=*)
		grep -qxF -- "$line" "$base/build/.config" || missing+=("$line")
		;;
	"# CONFIG_"*" is not set")
		opt=${line#\# }
		opt=${opt%% *}
		! grep -qE "^$opt=[ym]$" "$base/build/.config" || missing+=("$line")
		;;
	esac
done <"$frag"
[ "${#missing[@]}" -eq 0 ] ||
	die "the debug kernel's .config lacks: ${missing[*]} (a dependency of them is missing; see $base/build/.config)"
info "debug kernel config: $(grep -cE '^CONFIG_(KASAN|PROVE_LOCKING|DEBUG_KMEMLEAK|UBSAN|FAILSLAB|RUST|NETFILTER)=y$' \
	"$base/build/.config") of 7 key options on (KASAN, PROVE_LOCKING, DEBUG_KMEMLEAK, UBSAN, FAILSLAB, RUST, NETFILTER)"

info "building the debug kernel with clang 22 (about 30 minutes on 2 cores; log: $log)"
start=$SECONDS
make -C "$base/src" O="$base/build" LLVM=-22 -j"$(nproc)" bzImage modules >>"$log" 2>&1 &
pid=$!
while kill -0 "$pid" 2>/dev/null; do
	for ((i = 0; i < 60; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 1
	done
	kill -0 "$pid" 2>/dev/null || break
	info "debug kernel: $(grep -cE '^  (CC|RUSTC|AS|LD)' "$log") objects after $(((SECONDS - start) / 60)) min"
done
wait "$pid" || { tail -n 40 "$log" >&2; die "building the debug kernel failed; log in $log"; }
info "debug kernel $(cat "$base/build/include/config/kernel.release") built in $(((SECONDS - start) / 60)) min"

touch "$base/.rverbs-complete"
for old in "$RVERBS_CACHE"/dbgk-*; do
	[ "$old" = "$base" ] || [ ! -d "$old" ] || { info "removing stale debug kernel $old"; rm -rf "$old"; }
done
