#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# klp-post-link.sh KO KBUILD... - finish the livepatch module KO: objtool's
# "klp post-link" turns its __klp_relocs.<object> entries (written by
# rust/takeover/klp_calls.S) into the livepatch relocation sections that
# klp_enable_patch() applies (Documentation/livepatch/module-elf-format.rst),
# so that the takeover can call functions ib_core does not export.
#
# Run after every kbuild "modules" that may have linked KO anew: a module
# already converted (it has a .klp.rela. section) is left as it is, since
# converting twice would apply each relocation twice.  objtool is taken
# from the first KBUILD tree whose objtool has the "klp" command (it is
# built only where xxHash's header was found, scripts/toolchain.manifest);
# it edits the ELF file and is the same for any x86-64 kernel.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -ge 2 ] || die "usage: klp-post-link.sh KO KBUILD..."
ko=$1
shift
[ -e "$ko" ] || die "$ko is not built"

if readelf -SW "$ko" | grep -q ' \.klp\.rela\.'; then
	exit 0
fi

objtool=
for kbuild in "$@"; do
	candidate=$kbuild/tools/objtool/objtool
	# "objtool klp" prints its commands and fails (no command given).
	if [ -x "$candidate" ] && grep -q post-link <<<"$("$candidate" klp 2>&1)"; then
		objtool=$candidate
		break
	fi
done
[ -n "$objtool" ] ||
	die "no objtool with the 'klp post-link' command in: $* (objtool is built with it when xxHash's header, libxxhash-dev, is installed)"

"$objtool" klp post-link "$ko" || die "objtool klp post-link failed on $ko"
readelf -SW "$ko" | grep -q ' \.klp\.rela\.ib_core\.' ||
	die "$ko has no livepatch relocations for ib_core after objtool klp post-link"
