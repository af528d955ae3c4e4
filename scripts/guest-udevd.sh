#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# guest-udevd.sh - stands in for systemd-udevd in the debug lane's guest.
#
# virtme-init starts udevd, triggers a coldplug and waits for it to settle;
# on the debug kernel under TCG that wait runs into udevadm's 300 s timeout
# at every boot (measured: 300 s of a 520 s boot).  The guest needs one
# thing from udev: the /dev/virtio-ports/NAME links through which virtme-ng
# passes the script's input and output.  This makes them and exits.  Device
# nodes come from devtmpfs, as they do with udev; guest.sh makes the static
# ones (/dev/net/tun, ...).  scripts/in-root.sh mounts this file over the
# root's udevadm (systemd-udevd is a link to it) for the runs of vm.sh with
# RVERBS_GUEST_UDEVD set, so "udevadm trigger" and "udevadm settle" of
# virtme-init run it too and return at once.
#
# Every program started costs about a second on the debug kernel under TCG:
# "trigger" and "settle" return before any, and the names are read with
# the shell's own read.
case ${1:-} in trigger | settle) exit 0 ;; esac
mkdir -p /dev/virtio-ports
for port in /sys/class/virtio-ports/vport*; do
	[ -e "$port/name" ] || continue
	read -r name <"$port/name" || [ -n "$name" ] || continue
	[ -n "$name" ] && ln -sfn "../${port##*/}" "/dev/virtio-ports/$name"
done
exit 0
