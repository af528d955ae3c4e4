# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Common definitions for the rverbs scripts.  Sourced, never run.
#
# The expensive things (the Debian sid root, the rebuilt kernel tree) live
# outside the repository under $RVERBS_CACHE, each in a directory whose name
# is a hash of exactly what it was built from.

RVERBS_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RVERBS_CACHE=${RVERBS_CACHE:-/var/cache/rverbs}

# The kernel this project targets (Debian sid's CONFIG_RUST=y kernel).
# shellcheck disable=SC2034 # used by the scripts that source this file
KREL=7.2.13+deb14-amd64
# shellcheck disable=SC2034
KSRC_PKG=linux-source-7.2
# shellcheck disable=SC2034
KCC=x86_64-linux-gnu-gcc-16

MANIFEST=$RVERBS_TOP/scripts/toolchain.manifest

die() {
	printf 'rverbs: error: %s\n' "$*" >&2
	exit 1
}

info() {
	printf 'rverbs: %s\n' "$*" >&2
}

# hash_of FILE... - short content hash used to name cache entries.
hash_of() {
	cat "$@" | sha256sum | cut -c1-16
}

root_key() {
	hash_of "$MANIFEST" "$RVERBS_TOP/scripts/mkroot.sh"
}

root_dir() {
	echo "$RVERBS_CACHE/root-$(root_key)"
}

kdir_key() {
	{ root_key; cat "$RVERBS_TOP/scripts/mkkdir.sh"; } | sha256sum | cut -c1-16
}

# The rebuilt kernel tree (sources and output) lives inside the cache, and
# is bind-mounted at the same path in the root, so KDIR is one path.
kdir_base() {
	echo "$RVERBS_CACHE/kdir-$(kdir_key)"
}

# manifest_packages - "pkg=version" for every binary package of the manifest.
manifest_packages() {
	sed -e 's/#.*//' -e 's/[[:space:]]//g' "$MANIFEST" | grep -v -e '^$' -e '^source:' -e '^pypi:'
}

# manifest_wheels - "name=version=sha256" for every PyPI wheel of the manifest.
manifest_wheels() {
	sed -e 's/#.*//' -e 's/[[:space:]]//g' "$MANIFEST" | sed -n 's/^pypi://p'
}

# manifest_sources - "pkg=version" for every source package of the manifest.
manifest_sources() {
	sed -e 's/#.*//' -e 's/[[:space:]]//g' "$MANIFEST" | sed -n 's/^source://p'
}

need_root_user() {
	[ "$(id -u)" = 0 ] || die "$1 needs root (it builds or enters a chroot); run as root, or build against your own Rust-enabled kernel tree with 'make KDIR=/path/to/build'."
}

# manifest_kernel_build - the manifest's lines that a kernel build depends on:
# everything above its "VM and guest userspace" block (the kernel source, the
# compilers, the kernel build tools), and virtme-ng (its minimal config).
manifest_kernel_build() {
	awk '/^# --- VM and guest userspace/ { stop = 1 }
		{ sub(/#.*/, ""); gsub(/[[:space:]]/, "") }
		$0 != "" && (!stop || /^virtme-ng=/)' "$MANIFEST"
}

# The debug kernel of "make check-debug" (scripts/mkdebugkernel.sh): the same
# source built with clang (LLVM=-22) and the checkers of scripts/debug.config,
# keyed on what it is built from: the source version, the compilers and build
# tools (manifest_kernel_build), its script and the two config fragments.
# Adding a userspace package to the manifest does not rebuild it.
dbgk_key() {
	{
		manifest_kernel_build
		cat "$RVERBS_TOP/scripts/mkdebugkernel.sh" "$RVERBS_TOP/scripts/debug.config" \
			"$RVERBS_TOP/tests/config"
	} | sha256sum | cut -c1-16
}

dbgk_base() {
	echo "$RVERBS_CACHE/dbgk-$(dbgk_key)"
}

# step_record NAME SECONDS [EXIT] - report one timed step of a check run
# (scripts/step.sh): printed, and appended to $RVERBS_STEPS when it is set.
step_record() {
	info "step $1: $2 s${3:+ (exit $3)}"
	[ -z "${RVERBS_STEPS:-}" ] || printf '%s\t%s\t%s\n' "$1" "$2" "${3:-0}" >>"$RVERBS_STEPS"
}
