#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# modsig-prep.sh DIR - what the module-signature boot (tests/rverbs_modsig.sh)
# needs, made afresh for each run in DIR, inside the toolchain root:
#
#   DIR/keys/test.{key,crt}   a throw-away RSA key and its certificate, CN
#                             "rverbs signature test key", made here and
#   DIR/keys/other.{key,crt}  another one, CN "another key": never trusted;
#   DIR/test/, DIR/other/     the tree's rverbs.ko and rverbs_takeover.ko
#                             installed as "make install SIGN_KEY=..
#                             SIGN_CERT=.." installs them
#                             (scripts/modules-install.sh: stripped, signed,
#                             xz), once with each key;
#   DIR/OVMF_VARS.fd          the UEFI variable store of Debian's OVMF
#                             (Secure Boot off), with the test certificate
#                             added to the signature database db
#                             (virt-fw-vars): Debian's kernel loads db into
#                             its .platform keyring, which module signature
#                             checks fall back to.
#
# The keys live in DIR (under build/, never committed) and nowhere else.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# = 1 ] || die "usage: modsig-prep.sh DIR"
[ -n "${RVERBS_IN_ROOT:-}" ] || die "modsig-prep.sh runs inside the toolchain root (scripts/in-root.sh)"
dir=$1
rm -rf "$dir"
mkdir -p "$dir/keys"

# mkkey NAME CN - as Documentation/packaging.rst tells users to make theirs.
mkkey() {
	openssl req -new -x509 -newkey rsa:2048 -nodes -sha256 -days 1 -subj "/CN=$2/" \
		-addext basicConstraints=critical,CA:FALSE -addext keyUsage=digitalSignature \
		-keyout "$dir/keys/$1.key" -out "$dir/keys/$1.crt" >"$dir/keys/openssl.log" 2>&1 ||
		die "openssl could not make a key: $(cat "$dir/keys/openssl.log")"
}
mkkey test "rverbs signature test key"
mkkey other "another key"

for k in test other; do
	"$RVERBS_TOP/scripts/modules-install.sh" --sign "$dir/keys/$k.key" "$dir/keys/$k.crt" \
		"$dir/$k" >"$dir/install-$k.log" 2>&1 ||
		die "signing the modules with the $k key failed: $(tail -n 5 "$dir/install-$k.log")"
done

vars=/usr/share/OVMF/OVMF_VARS_4M.fd
[ -r "$vars" ] || die "$vars is missing (Debian package ovmf)"
# The owner of the db entry: any GUID; this one is rverbs' own.
owner=5d6b3f0e-8a4c-4c1e-9d2a-72766572627b
virt-fw-vars --input "$vars" --output "$dir/OVMF_VARS.fd" \
	--add-db "$owner" "$dir/keys/test.crt" >"$dir/virt-fw-vars.log" 2>&1 ||
	die "virt-fw-vars failed: $(tail -n 5 "$dir/virt-fw-vars.log")"
info "modsig: keys, signed modules and a UEFI variable store with the test certificate in $dir"
