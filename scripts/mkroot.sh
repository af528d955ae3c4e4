#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# mkroot.sh - build (or reuse) the pinned Debian sid root of rverbs.
#
# The root holds the exact compilers of the target kernel, the kernel image,
# headers and source, QEMU with virtme-ng, rdma-core and its test sources.
# It is made by mmdebstrap from scripts/toolchain.manifest and cached under
# $RVERBS_CACHE/root-<hash of manifest and this script>.  A complete root is
# marked by .rverbs-complete and reused as is.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

root=$(root_dir)
if [ -e "$root/.rverbs-complete" ]; then
	exit 0
fi

need_root_user "building the toolchain root"

if ! command -v mmdebstrap >/dev/null; then
	command -v apt-get >/dev/null ||
		die "mmdebstrap is missing and there is no apt-get to install it; install mmdebstrap."
	info "installing mmdebstrap on the host"
	apt-get update -qq >/dev/null || true
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mmdebstrap >/dev/null ||
		die "could not install mmdebstrap with apt-get; install it by hand."
fi

# The Debian mirror: the one the host's own apt configuration uses, or
# mmdebstrap's default when the host names none.
host_mirror() {
	local f
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -e "$f" ] || continue
		awk '
			/^Types:/ { deb = ($0 ~ /[[:space:]]deb([[:space:]]|$)/) }
			/^URIs:/ && deb && $2 ~ /\/debian\/?$/ { print $2; exit }
		' "$f"
	done | head -n 1
	sed -n 's/^deb[[:space:]]\+\(\[[^]]*\][[:space:]]\+\)\?\([^[:space:]]*\/debian\/\?\)[[:space:]].*/\2/p' \
		/etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | head -n 1 || true
}
mirror=$(host_mirror 2>/dev/null | head -n 1 || true)
mirror=${mirror%/}

mkdir -p "$RVERBS_CACHE"
tmp="$root.tmp"
rm -rf "$tmp"
log="$RVERBS_CACHE/mkroot.log"

mapfile -t pkgs < <(manifest_packages)
info "building the toolchain root in $root"
info "(${#pkgs[@]} pinned packages, about 3 GB and 3-5 minutes; log: $log)"

mirror_args=()
if [ -n "$mirror" ]; then
	mirror_args=("deb $mirror sid main" "deb-src $mirror sid main")
fi

# The sid index is a snapshot whose Release file has expired: tell apt,
# both while bootstrapping and inside the root afterwards.
noexpire='Acquire::Check-Valid-Until "false";
Acquire::Check-Date "false";'

set +e
mmdebstrap --variant=apt --mode=root \
	--aptopt='Acquire::Check-Valid-Until "false"' \
	--aptopt='Acquire::Check-Date "false"' \
	--aptopt='APT::Install-Recommends "false"' \
	--include="$(IFS=,; echo "${pkgs[*]}")" \
	--customize-hook='rm -f "$1"/etc/hostname' \
	sid "$tmp" "${mirror_args[@]}" 2>&1 |
	tee "$log" | grep --line-buffered -E '^(I|W|E):' | sed -u 's/^/  /' >&2
rc=${PIPESTATUS[0]}
set -e
if [ "$rc" -ne 0 ]; then
	rm -rf "$tmp"
	missing=$(sed -n -e "s/.*Version '\([^']*\)' for '\([^']*\)' was not found.*/\2=\1/p" \
		-e "s/.*Unable to locate package \([^[:space:]]*\).*/\1/p" "$log" | sort -u | tr '\n' ' ')
	[ -n "$missing" ] &&
		die "pinned package(s) no longer available from the mirror: $missing(update scripts/toolchain.manifest)"
	die "mmdebstrap failed (exit $rc); see $log"
fi

printf '%s\n' "$noexpire" >"$tmp/etc/apt/apt.conf.d/99rverbs-snapshot"
if [ -z "$mirror" ] && [ -e "$tmp/etc/apt/sources.list" ]; then
	sed -n 's/^deb /deb-src /p' "$tmp/etc/apt/sources.list" >>"$tmp/etc/apt/sources.list"
fi

# Upstream sources of the "source:" lines, unpacked to /opt/src/<name>.
while IFS='=' read -r src ver; do
	[ -n "$src" ] || continue
	info "fetching source package $src=$ver"
	upver=${ver#*:}
	upver=${upver%-*}
	chroot "$tmp" /bin/sh -c "
		set -e
		apt-get update -qq >/dev/null 2>&1
		mkdir -p /opt/src/dl && cd /opt/src/dl
		# The Debian diff may be missing from the snapshot; only the
		# upstream tarball is needed, and checked below.
		apt-get source --download-only $src=$ver >/dev/null 2>&1 || true
		orig=\$(ls ${src}_${upver}.orig.tar.* 2>/dev/null | head -n 1)
		[ -n \"\$orig\" ] || exit 3
		mkdir -p /opt/src/$src
		tar -xf \"\$orig\" -C /opt/src/$src --strip-components=1
		rm -rf /opt/src/dl
		apt-get clean
	" || die "source package $src=$ver could not be fetched (pinned in scripts/toolchain.manifest)"
done < <(manifest_sources)

# The "pypi:" lines: virtme-ng-init out of virtme-ng's wheel, checked by
# its hash, into the place virtme-ng looks for it (guest/bin/ beside its
# shell init, which it uses when the program is missing).  Fetched with the
# host's pip from the index it is configured for; without pip the guests
# boot through the shell init, slower, and this says so.
while IFS='=' read -r name ver sum; do
	[ -n "$name" ] || continue
	[ "$name" = virtme-ng ] || die "scripts/toolchain.manifest: no use for the wheel of $name"
	dl=$tmp.wheel
	rm -rf "$dl"
	mkdir -p "$dl"
	info "fetching virtme-ng-init from the wheel $name==$ver"
	if ! python3 -m pip download -q --no-deps --only-binary=:all: -d "$dl" "$name==$ver" >>"$log" 2>&1; then
		info "pip could not fetch $name==$ver (see $log): the guests boot through virtme-ng's shell init, slower"
		rm -rf "$dl"
		continue
	fi
	whl=$(ls "$dl"/*.whl)
	echo "$sum  $whl" | sha256sum -c --quiet - ||
		die "the wheel $name==$ver is not the one pinned in scripts/toolchain.manifest (sha256 $sum)"
	guest=$(ls -d "$tmp"/usr/lib/python3/dist-packages/virtme/guest)
	mkdir -p "$guest/bin"
	python3 -c 'import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, open(sys.argv[2], "wb") as f:
    f.write(z.read("virtme/guest/bin/virtme-ng-init"))' "$whl" "$guest/bin/virtme-ng-init"
	chmod 0755 "$guest/bin/virtme-ng-init"
	rm -rf "$dl"
done < <(manifest_wheels)

# Debian's modules of the stock kernel, without those of hardware that no
# guest here has and nothing here loads (sound, graphics, cameras, Wi-Fi,
# Ethernet NICs, USB, input, sensors, buses of boards, the RDMA hardware
# drivers, ...: HARDWARE below), and stored uncompressed.  Every module
# the tests, the demo and the VM use stays (the rdma core and ULPs,
# soft-RoCE, net, its qdiscs and virtual devices, fs, block, nvme, scsi,
# target, virtio, watchdog, ...), with its dependencies, and the kernel is
# Debian's own.  What is left is 1,356 of 4,216 modules, 183 of 597 MB.  A
# depmod reads every module; the module-signature boot runs three (dpkg -i,
# dpkg -r and tests/rverbs_modsig.sh), which took 42 to 65 s each in a
# guest of its own and 120 to 360 s beside the other boots with the whole
# tree (w19); with this one, beside them, dpkg -i took 140 s and dpkg -r
# 123 s (358 and 249 in w19), the boot 739 s (1,066).
HARDWARE="sound drivers/gpu drivers/media drivers/net/wireless drivers/net/ethernet
	drivers/net/can drivers/net/usb drivers/net/wwan drivers/net/ieee802154 drivers/iio
	drivers/hid drivers/input drivers/usb drivers/bluetooth drivers/staging drivers/comedi
	drivers/hwmon drivers/mtd drivers/accel drivers/video drivers/mmc drivers/platform
	drivers/isdn drivers/atm drivers/leds drivers/power drivers/regulator drivers/rtc
	drivers/spi drivers/i2c drivers/gnss drivers/w1 drivers/pinctrl drivers/extcon drivers/mfd
	drivers/thermal drivers/edac drivers/memstick drivers/firewire drivers/parport
	drivers/pcmcia drivers/nfc drivers/infiniband/hw drivers/fpga drivers/greybus drivers/most
	drivers/counter drivers/siox drivers/slimbus drivers/soundwire drivers/hsi drivers/ipack
	drivers/fsi drivers/auxdisplay drivers/thunderbolt drivers/ssb drivers/bcma drivers/gpio
	drivers/pwm drivers/phy drivers/mailbox net/bluetooth net/wireless net/mac80211 net/nfc
	net/can net/ieee802154 net/mac802154"
# Debian's modules of the stock kernel, stored uncompressed: the same
# files, signatures included (kbuild signs a module before it compresses
# it), that xz -d gives back.  Under TCG the guest spends 94% of a depmod
# of the whole tree (4,216 modules) in xz, about a minute each time, and
# the module-signature boot runs three (dpkg -i, dpkg -r and
# tests/rverbs_modsig.sh); every modprobe of the suite (ib_core, rdma_rxe,
# ib_uverbs, veth, ...) decompresses its module too.  Nothing tested
# depends on how Debian's own modules are stored; rverbs' package and
# "make install" still ship rverbs.ko.xz, and their tests check that.
# Documentation/rverbs.rst, "The time budget".
chroot "$tmp" /bin/sh -c '
	set -e
	for d in /lib/modules/*/; do
		[ -d "$d/kernel" ] || continue
		for h in '"$(echo $HARDWARE)"'; do
			rm -rf "$d/kernel/$h"
		done
		find "$d" -name "*.ko.xz" -print0 | xargs -0 -r -n 64 -P "$(nproc)" unxz
		depmod "$(basename "$d")"
	done
'

# dpkg-query's view of the root, for the record (and for bug reports).
chroot "$tmp" dpkg-query -W -f '${Package}=${Version}\n' >"$tmp/.rverbs-packages"
touch "$tmp/.rverbs-complete"
mv "$tmp" "$root"
for old in "$RVERBS_CACHE"/root-*; do
	[ "$old" = "$root" ] || [ ! -d "$old" ] || { info "removing stale root $old"; rm -rf "$old"; }
done
info "toolchain root ready: $root"
