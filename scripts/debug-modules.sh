#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# debug-modules.sh - build rverbs.ko, rverbs_takeover.ko and the test
# modules for the debug kernel (scripts/mkdebugkernel.sh), in
# build/debug/tree: a copy of the tree (tracked and new files, no build
# products), so that the stock lane's objects and generated bindings stay
# apart from the debug kernel's (clang, its own configuration).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

kdir=$(dbgk_base)/build
[ -e "$(dbgk_base)/.rverbs-complete" ] || die "the debug kernel is not built (make debug-kernel)"
tree=$RVERBS_TOP/build/debug/tree
mkdir -p "$tree"
# tar keeps the files' times, so make rebuilds only what changed.
(cd "$RVERBS_TOP" && git ls-files -z --cached --others --exclude-standard |
	tar --null --ignore-failed-read -T - -cf - | tar -xf - -C "$tree") ||
	die "copying the tree failed"
log=$RVERBS_TOP/build/debug/build.log
info "building rverbs for the debug kernel $(cat "$kdir/include/config/kernel.release")"
"$RVERBS_TOP/scripts/in-root.sh" make -s -C "$kdir" M="$tree" LLVM=-22 -j"$(nproc)" modules \
	>"$log" 2>&1 || { tail -n 30 "$log" >&2; die "building rverbs for the debug kernel failed"; }
# The debug kernel's own objtool may lack the "klp" command (it is built
# with the kernel); the stock tree's has it.
"$RVERBS_TOP/scripts/in-root.sh" "$RVERBS_TOP/scripts/klp-post-link.sh" "$tree/rverbs_takeover.ko" \
	"$kdir" "$(kdir_base)/build" >>"$log" 2>&1 ||
	{ tail -n 30 "$log" >&2; die "finishing rverbs_takeover.ko for the debug kernel failed"; }
"$RVERBS_TOP/scripts/in-root.sh" make -s -C "$tree/tests/test_modules" KDIR="$kdir" \
	KMAKEFLAGS=LLVM=-22 >>"$log" 2>&1 ||
	{ tail -n 30 "$log" >&2; die "building the test modules for the debug kernel failed"; }
