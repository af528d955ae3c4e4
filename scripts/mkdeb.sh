#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# mkdeb.sh [--no-lintian] [--sign KEY CERT] OUTDIR - make deb: the Debian
# package of the built rverbs.ko and rverbs_takeover.ko for Debian's stock
# kernel, as OUTDIR/rverbs-modules-<release>_<version>_amd64.deb, checked
# with lintian, which the toolchain root has (--no-lintian: not, for the
# test VM, where it would take minutes).
#
# Made with Debian's own tools and no debhelper: dpkg-gencontrol writes the
# control file (from scripts/deb/control, with Installed-Size), dpkg-deb
# builds the package, owned by root whoever builds it (--root-owner-group,
# so no fakeroot).  Contents:
#
#   /usr/lib/modules/<release>/updates/rverbs.ko.xz, rverbs_takeover.ko.xz
#       stripped (but for the livepatch), compressed and (with --sign) signed as "make install"
#       does (scripts/modules-install.sh); /usr/lib as Debian's own
#       linux-modules package, the same directory as /lib on merged /usr
#   /usr/share/doc/<package>/: copyright (machine-readable), changelog.gz,
#       README.md.gz and the documentation
#   /etc/modules-load.d/rverbs.conf: a conffile, every line commented out
#   postinst/postrm: depmod <release>
#
# The version is the modules' own (modinfo: scripts/version.sh at build
# time), so package, modinfo and debugfs cannot disagree.  The package is
# native (built from this tree, no Debian revision), hence changelog.gz
# rather than changelog.Debian.gz.  It depends on exactly the kernel image
# the modules were built against, at its version pinned in
# scripts/toolchain.manifest: a Rust module links against the Rust symbols
# of that very build.  Runs inside the toolchain root (make deb), and in the
# test VM (tests/rverbs_package.sh), where the tree is read-only: it writes
# only into OUTDIR.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

usage="usage: mkdeb.sh [--no-lintian] [--sign KEY CERT] OUTDIR"
lintian=1
if [ "${1:-}" = --no-lintian ]; then
	lintian=
	shift
fi
sign=()
if [ "${1:-}" = --sign ]; then
	[ $# -ge 3 ] || die "$usage"
	sign=(--sign "$2" "$3")
	shift 3
fi
[ $# = 1 ] || die "$usage"
out=$1
# The test VM runs the root's own userspace, and says RVERBS_IN_ROOT=1 too.
[ -n "${RVERBS_IN_ROOT:-}" ] || die "mkdeb.sh runs inside the toolchain root (make deb)"
[ -z "${KDIR:-}" ] || die "make deb is for Debian's stock kernel $KREL only, not KDIR="
for t in dpkg-gencontrol dpkg-deb modinfo; do
	command -v $t >/dev/null || die "$t is missing from the toolchain root"
done

cd "$RVERBS_TOP"
for m in rverbs.ko rverbs_takeover.ko; do
	[ -e "$m" ] || die "$m is not built (make modules)"
done
version=$(modinfo -F version rverbs.ko)
[ -n "$version" ] || die "rverbs.ko has no modinfo version"
[ "$(modinfo -F version rverbs_takeover.ko)" = "$version" ] ||
	die "rverbs.ko and rverbs_takeover.ko were built with different versions"
vermagic=$(modinfo -F vermagic rverbs.ko)
[ "${vermagic%% *}" = "$KREL" ] || die "rverbs.ko was built for ${vermagic%% *}, not $KREL"
kversion=$(manifest_packages | sed -n "s/^linux-image-$KREL=//p")
[ -n "$kversion" ] || die "no linux-image-$KREL in scripts/toolchain.manifest"

pkg=rverbs-modules-$KREL
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$out/$pkg
rm -rf "$work" "$out/$pkg"_*.deb "$out/control" "$out/changelog" "$out/files"
umask 022
mkdir -p "$work/DEBIAN"

"$RVERBS_TOP/scripts/modules-install.sh" "${sign[@]}" "$work/usr"

# The build time of the modules names the changelog entry and clamps the
# package's file times: the same build packs into the same package.
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(stat -c %Y rverbs.ko)}
subst() {
	sed -e "s/@KREL@/$KREL/g" -e "s/@KVERSION@/$kversion/g" "$@"
}
subst scripts/deb/control >"$out/control"
maint=$(sed -n 's/^Maintainer: //p' "$out/control")
cat >"$out/changelog" <<EOF
rverbs ($version) unstable; urgency=medium

  * rverbs $version, built by "make deb" for
    linux-image-$KREL ($kversion).

 -- $maint  $(date -R -u -d "@$SOURCE_DATE_EPOCH")
EOF

doc=$work/usr/share/doc/$pkg
mkdir -p "$doc" "$work/etc/modules-load.d"
cp scripts/deb/copyright "$doc/copyright"
gzip -9n <"$out/changelog" >"$doc/changelog.gz"
gzip -9n <README.md >"$doc/README.md.gz"
for f in Documentation/*.rst; do
	[ "${f##*/}" = index.rst ] && continue
	gzip -9n <"$f" >"$doc/${f##*/}.gz"
done
subst scripts/deb/modules-load.conf >"$work/etc/modules-load.d/rverbs.conf"
echo /etc/modules-load.d/rverbs.conf >"$work/DEBIAN/conffiles"
for s in postinst postrm; do
	subst "scripts/deb/$s" >"$work/DEBIAN/$s"
	chmod 0755 "$work/DEBIAN/$s"
done
(cd "$work" && find . -type f ! -path './DEBIAN/*' ! -path './etc/*' -printf '%P\0' |
	LC_ALL=C sort -z | xargs -0 md5sum) >"$work/DEBIAN/md5sums"

dpkg-gencontrol -c"$out/control" -l"$out/changelog" -f"$out/files" \
	-p"$pkg" -P"$work" -v"$version"
dpkg-deb --root-owner-group -Zxz --build "$work" "$out" >/dev/null
deb=$out/${pkg}_${version}_amd64.deb
[ -e "$deb" ] || die "dpkg-deb made no $deb"
rm -rf "$work" "$out/control" "$out/changelog" "$out/files"

if [ -z "$lintian" ]; then
	:
else
	command -v lintian >/dev/null ||
		die "lintian is missing from the toolchain root (scripts/toolchain.manifest)"
	# The name carries the kernel release and a git-describe version
	# (".dirty" with uncommitted changes): longer than lintian's 80
	# characters, as Debian's own per-release module packages are.
	lintian --fail-on error,warning --suppress-tags package-has-long-file-name "$deb" ||
		die "lintian found problems in $deb"
	info "lintian: no error or warning"
fi
info "$deb"
