#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# lint.sh [--fix] - the host-side checks of make check.
#
#   rustfmt --check   with the kernel's .rustfmt.toml, on every crate root
#   clippy            a CLIPPY=1 build of the modules, warnings are errors
#   bash -n, shellcheck -S warning, on every shell script
#   checkpatch.pl     --strict, on every C source and header of the project
#   rust/verbs, rust/sw: no unsafe code, no bindings::
#
# With --fix, rustfmt rewrites the files instead (make fmt).
set -uo pipefail
. "$(dirname "$0")/lib.sh"

if [ -z "${RVERBS_IN_ROOT:-}" ] && [ -z "${KDIR:-}" ]; then
	exec "$RVERBS_TOP/scripts/in-root.sh" "$RVERBS_TOP/scripts/lint.sh" "$@"
fi

ksrc=$("$RVERBS_TOP/scripts/kdir-path.sh" src)
kbuild=${KDIR:-$("$RVERBS_TOP/scripts/kdir-path.sh" build)}
[ -n "${KDIR:-}" ] && ksrc=$(sed -n 's/^[^#]*include[[:space:]]*\(.*\)\/Makefile$/\1/p' "$KDIR/Makefile" | head -n 1)
cd "$RVERBS_TOP" || exit 1
fail=0

crates=(rust/rverbs.rs)
if [ "${1:-}" = --fix ]; then
	rustfmt --edition 2021 --config-path "$ksrc/.rustfmt.toml" "${crates[@]}"
	exit
fi

echo "lint: rustfmt --check"
if ! rustfmt --check --edition 2021 --config-path "$ksrc/.rustfmt.toml" "${crates[@]}"; then
	echo "lint: rustfmt: the diff above is what 'make fmt' would change"
	fail=1
fi

echo "lint: clippy (make CLIPPY=1)"
log=$(mktemp)
stock=()
[ -z "${KDIR:-}" ] && stock=(CC="$KCC" HOSTCC="$KCC" KERNELRELEASE="$KREL")
make -C "$kbuild" M="$RVERBS_TOP" -j"$(nproc)" CLIPPY=1 KRUSTFLAGS="-Dwarnings" \
	"${stock[@]}" modules >"$log" 2>&1 &&
	"$RVERBS_TOP/scripts/klp-post-link.sh" "$RVERBS_TOP/rverbs_takeover.ko" "$kbuild" >>"$log" 2>&1
rc=$?
if [ "$rc" -ne 0 ] || grep -q '^warning' "$log"; then
	cat "$log"
	echo "lint: clippy: the build above has warnings or errors"
	fail=1
fi
rm -f "$log"

# Every shell script: bash -n, and shellcheck at its "warning" level (the
# style and info notes, e.g. SC2086 on word splitting the scripts rely on,
# are left out).  A bash syntax error mid-test would otherwise show only
# when that line runs.
echo "lint: bash -n, shellcheck -S warning"
# The package's maintainer scripts (scripts/deb/post*) are shell scripts too.
mapfile -t shfiles < <(git ls-files '*.sh' .ci/run 'scripts/deb/post*' 2>/dev/null ||
	find scripts tests .ci -name '*.sh' -o -path 'scripts/deb/post*')
for f in "${shfiles[@]}"; do
	bash -n "$f" || fail=1
done
if ! command -v shellcheck >/dev/null; then
	echo "lint: shellcheck is missing from the toolchain root (scripts/toolchain.manifest)"
	fail=1
elif ! shellcheck -x -S warning -f gcc "${shfiles[@]}"; then
	fail=1
fi

echo "lint: checkpatch.pl --strict"
# Without git (the toolchain root does not see a worktree's git directory),
# every C file but kbuild's generated *.mod.c.
mapfile -t cfiles < <(git ls-files '*.c' '*.h' 2>/dev/null ||
	find rust include tests -name '*.[ch]' ! -name '*.mod.c')
for f in "${cfiles[@]}"; do
	ignore=()
	# TRACE_EVENT() is laid out as the kernel's own trace headers lay it out.
	[ "$f" = include/rverbs_trace.h ] && ignore=(--ignore "PARENTHESIS_ALIGNMENT,OPEN_ENDED_LINE")
	if ! out=$("$ksrc/scripts/checkpatch.pl" --no-tree --strict --quiet --terse \
		"${ignore[@]}" --file "$f" 2>&1); then
		printf '%s\n' "$out"
		fail=1
	fi
done

# The layers above the abstractions are written without unsafe code (the
# compiler enforces it: #[forbid(unsafe_code)] on both modules in
# rust/rverbs.rs) and without the generated bindings, by any path
# (Documentation/verbs-core.rst, rv0.rst).
echo "lint: no unsafe, no bindings in rust/verbs and rust/sw"
if ! grep -qx '#\[forbid(unsafe_code)\]' rust/rverbs.rs ||
	[ "$(grep -A1 -x '#\[forbid(unsafe_code)\]' rust/rverbs.rs | grep -cE '^mod (sw|verbs);')" != 2 ]; then
	echo "rust/rverbs.rs: mod sw and mod verbs must carry #[forbid(unsafe_code)]"
	fail=1
fi
if out=$(grep -nE '(^|[^[:alnum:]_])(unsafe|bindings)([^[:alnum:]_]|$)' \
	rust/verbs.rs rust/verbs rust/sw.rs rust/sw -r | grep -vE '^[^:]+:[0-9]+:\s*//'); then
	printf '%s\n' "$out"
	fail=1
fi

[ "$fail" -eq 0 ] && echo "lint: all clean"
exit "$fail"
