#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# bindgen.sh OBJTREE HEADER OUTPUT INCDIR - generate rverbs' Rust bindings.
#
# Runs bindgen exactly as the kernel ran it for its own bindings (the command
# line Kbuild saved in OBJTREE/rust/bindings/.bindings_generated.rs.cmd: same
# clang flags, same target, same options), on another input header and with
# an allowlist, so that layouts follow the configuration of OBJTREE and
# only rverbs' own items are generated.  The C helpers of rverbs
# (rust/helpers/*.c) all carry the prefix rverbs_, in C and in Rust alike.
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
# shellcheck disable=SC2034 # abs_hdr and abs_inc are used in the eval below
abs_hdr=$(cd "$(dirname "$header")" && pwd)/$(basename "$header")
# shellcheck disable=SC2034
abs_inc=$(cd "$incdir" && pwd)

# Types the allowlisted headers use whose headers are not allowlisted and
# that the kernel crate does not define either.  Opaque ones keep only their
# size and alignment (their fields are of no use to rverbs); the others are
# generated in full.
extra_types='sockaddr_in in_addr iphdr netdev_cmd'
opaque_types='netdev_notifier_info ifla_vf_guid ifla_vf_stats ifla_vf_info nl_info netdevice_tracker
	fib_event_type fib_notifier_info possible_net_t seq_net_private rdma_cgroup
	irq_poll tph_mem_type rtentry rdmacg_device nexthop ipv6_devconf
	inet_peer_base in6_rtmsg ifmcaddr6 ifacaddr6 hh_cache fib_rule fib_result
	fib_nh_exception in_device in_ifaddr inet6_dev inet6_ifaddr ip_mc_list
	nh_info nh_group ipv6_devstat ipv4_devconf fib_nh_common fib_info
	fib_dump_filter dst_metrics dim fib_nh'

cd "$objtree"
eval "bindgen \"\$abs_hdr\" $bgopts \
	--allowlist-function 'rverbs_.*' \
	--allowlist-file '.*/include/rverbs(_.*)?\\.h' \
	--allowlist-file '.*/include/rdma/.*\\.h' \
	--allowlist-file '.*/include/uapi/rdma/.*\\.h' \
	--allowlist-file '.*/include/net/neighbour\\.h' \
	--allowlist-file '.*/include/net/route\\.h' \
	--allowlist-file '.*/include/net/ip6_route\\.h' \
	--allowlist-file '.*/include/net/ip6_fib\\.h' \
	--allowlist-file '.*/include/net/addrconf\\.h' \
	--allowlist-file '.*/include/net/netevent\\.h' \
	--allowlist-var 'ARPHRD_.*|MAX_ADDR_LEN|NOTIFY_DONE' \
	--allowlist-function '__ip_dev_find|dev_get_by_index_rcu|ip6_dst_lookup_flow|ip6_dst_hoplimit|dst_release|register_netdevice_notifier|unregister_netdevice_notifier|rtnl_lock|rtnl_unlock|vfree|remap_vmalloc_range' \
	--no-recursive-allowlist \
	$(for t in $extra_types; do printf -- "--allowlist-type '%s' " "$t"; done) \
	$(for t in $opaque_types; do printf -- "--allowlist-type '%s' --opaque-type '%s' " "$t" "$t"; done) \
	-o \"\$abs_out.tmp\" -- $cflags \
	-I\"\$abs_inc\" -DKBUILD_MODNAME='\"rverbs\"' -D__KBUILD_MODNAME=kmod_rverbs"

mv "$abs_out.tmp" "$abs_out"
