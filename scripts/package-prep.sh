#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# package-prep.sh DIR [KEYDIR] - the Debian package that
# tests/rverbs_package.sh installs in the module-signature boot, made
# before the boot in DIR, inside the toolchain root, as a user makes it on
# the machine that builds the modules ("make deb SIGN_KEY=.. SIGN_CERT=..":
# scripts/mkdeb.sh):
#
#   DIR/keys/test.{key,crt}   KEYDIR's (scripts/modsig-prep.sh: the key the
#                             boot's firmware trusts), or without KEYDIR a
#                             throw-away RSA key made here, CN "rverbs
#                             package test key";
#   DIR/keys/other.{key,crt}  another one, KEYDIR's or made here;
#   DIR/signer                the CN of test.crt;
#   DIR/deb/                  the package, its modules signed with the test
#                             key (mkdeb.sh --no-lintian --sign);
#   DIR/keys.rc, DIR/mkdeb.rc the exit status of the keys' step and of
#   DIR/keys.log, mkdeb.log   mkdeb.sh, and their output.
#
# It fails only when it cannot write DIR: the test reports the two steps as
# its own cases (a package that does not build is a failed case of the
# suite, with mkdeb.sh's output). Why on the host: under TCG the keys and
# the package's compression took about a minute of the guest (a program
# costs the guest a thousand times what it costs here), and where a package
# is built is the user's build machine anyway. tests/rverbs_package.sh run
# by hand, without RVERBS_PACKAGE_DIR, makes both itself.
#
# The keys live in DIR (under build/, never committed) and nowhere else.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

[ $# = 1 ] || [ $# = 2 ] || die "usage: package-prep.sh DIR [KEYDIR]"
[ -n "${RVERBS_IN_ROOT:-}" ] || die "package-prep.sh runs inside the toolchain root (scripts/in-root.sh)"
dir=$1 keydir=${2:-}
rm -rf "$dir"
mkdir -p "$dir/keys" || die "cannot make $dir"

# mkkey NAME CN - as Documentation/packaging.rst tells users to make theirs.
mkkey() {
	openssl req -new -x509 -newkey rsa:2048 -nodes -sha256 -days 1 -subj "/CN=$2/" \
		-addext basicConstraints=critical,CA:FALSE -addext keyUsage=digitalSignature \
		-keyout "$dir/keys/$1.key" -out "$dir/keys/$1.crt"
}
if [ -n "$keydir" ]; then
	cp "$keydir/test.key" "$keydir/test.crt" "$keydir/other.key" "$keydir/other.crt" "$dir/keys/"
else
	mkkey test "rverbs package test key" && mkkey other "another key"
fi >"$dir/keys.log" 2>&1 &&
	openssl x509 -in "$dir/keys/test.crt" -noout -subject -nameopt RFC2253 2>>"$dir/keys.log" |
	sed -n 's/^subject=CN=//p' >"$dir/signer" && [ -s "$dir/signer" ]
echo $? >"$dir/keys.rc"
if [ "$(cat "$dir/keys.rc")" = 0 ]; then
	"$RVERBS_TOP/scripts/mkdeb.sh" --no-lintian --sign "$dir/keys/test.key" "$dir/keys/test.crt" \
		"$dir/deb" >"$dir/mkdeb.log" 2>&1
	echo $? >"$dir/mkdeb.rc"
else
	echo "no keys (keys.log)" >"$dir/mkdeb.log"
	echo 1 >"$dir/mkdeb.rc"
fi
info "package: keys (exit $(cat "$dir/keys.rc")) and the package (mkdeb.sh, exit $(cat "$dir/mkdeb.rc")) in $dir"
