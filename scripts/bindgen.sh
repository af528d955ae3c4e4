#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# bindgen.sh OBJTREE HEADER OUTPUT INCDIR - generate rverbs' Rust bindings.
#
# Runs bindgen exactly as the kernel ran it for its own bindings (the command
# line Kbuild saved in OBJTREE/rust/bindings/.bindings_generated.rs.cmd: same
# clang flags, same target, same options), on another input header and with
# an allowlist, so that layouts follow the configuration of OBJTREE and
# only rverbs' own items are generated.  C helpers (rust_helper_<name>) are
# renamed to <name> with a #[link_name], as the kernel does for its helpers.
set -eu

objtree=$1
header=$2
output=$3
incdir=$4

saved="$objtree/rust/bindings/.bindings_generated.rs.cmd"
[ -r "$saved" ] || {
	echo "bindgen.sh: $saved is missing: is $objtree a prepared Rust-enabled kernel tree?" >&2
	exit 1
}

# "savedcmd_... := bindgen <input> <options> -o <out> -- <cflags> ; sed ..."
cmd=$(sed -n '1s/^savedcmd_[^ ]* := //p' "$saved")
cmd=${cmd%%; sed *}
bgopts=${cmd%% -- *}
cflags=${cmd#* -- }
bgopts=$(printf '%s\n' "$bgopts" | sed -e 's/^[^ ]* [^ ]* //' \
	-e 's/ -o [^ ]*//' -e 's/\$(pound)/#/g')
cflags=$(printf '%s\n' "$cflags" | sed -e 's/-Wp,-MMD,[^ ]*//' \
	-e 's/-DKBUILD_[A-Z]*=[^ ]*//g' -e 's/-D__KBUILD_MODNAME=[^ ]*//')

abs_out=$(cd "$(dirname "$output")" && pwd)/$(basename "$output")
abs_hdr=$(cd "$(dirname "$header")" && pwd)/$(basename "$header")
abs_inc=$(cd "$incdir" && pwd)

cd "$objtree"
eval "bindgen \"\$abs_hdr\" $bgopts \
	--allowlist-function 'rust_helper_.*' \
	--allowlist-file '.*/include/rverbs_.*\\.h' \
	-o \"\$abs_out.tmp\" -- $cflags \
	-I\"\$abs_inc\" -DKBUILD_MODNAME='\"rverbs\"' -D__KBUILD_MODNAME=kmod_rverbs"

sed -Ei 's/pub fn rust_helper_([a-zA-Z0-9_]*)/#[link_name="rust_helper_\1"]\n    pub fn \1/g' \
	"$abs_out.tmp"
mv "$abs_out.tmp" "$abs_out"
