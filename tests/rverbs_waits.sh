#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Creates that wait for a neighbour, and what changes under them.  An AH to
# an IPv4 or IPv6 destination on veth0 whose neighbour is not resolved
# waits for ARP/ND (ib_core: rdma_resolve_ip, at most 1000 ms).  While it
# waits:
#
#   * the neighbour gets a MAC (a permanent entry, as "ip neigh replace"
#     makes): the create succeeds with that MAC, also two creates waiting
#     on the same INCOMPLETE entry;
#   * nobody ever answers: two creates on the same entry both fail with
#     ETIMEDOUT;
#   * a route appears that takes the destination through a gateway whose
#     neighbour is valid: the create succeeds with the gateway's MAC (ib_core
#     resolves once more at its timeout; the Rust core retries every 100 ms);
#   * another thread of the creating process destroys an AH of the same PD,
#     makes and destroys one more, and tries to deallocate the PD: the AHs
#     come and go at once, the PD stays (EBUSY: the waiting create holds
#     it); then the create gets its MAC.  A core that held a lock of its own
#     across the wait would keep that thread until the create's timeout;
#   * the takeover is switched off while the Rust core waits: the livepatch's
#     transition waits for the create, which ends as it would have
#     (ETIMEDOUT), and rverbs_takeover unloads after it.
#
# Each case runs with the C core and with the Rust core (the takeover), on
# rv0, whose AH dump in debugfs shows the MAC each core resolved; the same
# results are expected of both.  The destinations .99 and 2001:db8::99 on
# veth0 are nobody's: every packet stays inside the guest.

. "$(dirname "$0")/lib.sh"

PROBE=${RVERBS_TEST_BIN:?RVERBS_TEST_BIN must name the built tests}/ah_probe
DUMP=/sys/kernel/debug/rverbs/rv0/ah
SILENT4=192.0.2.99
SILENT6=2001:db8::99
# The MAC a test gives the silent neighbours while creates wait for them.
LATE_MAC=02:00:00:00:00:99
TMP=$(mktemp -d)

cleanup() {
	rm -rf "$TMP"
	teardown
}
trap cleanup EXIT

# start_probes DGID NAME... - creates on rv0 in the background, their
# outputs in $TMP/NAME, started together: each opens the device and waits
# (ah_probe -B) until all have, then all are let go at once.  Each says
# when it begins its create (-W).  PROBE_ARGS: more of ah_probe's options.
PROBE_ARGS=()
start_probes() {
	local dgid=$1 idx=$V4 n pid
	shift
	[[ $dgid == ::ffff:* ]] || idx=$V6
	for n in "$@"; do
		# Emptied here, not only by the redirection below: that one
		# happens in the background job, which all_say may outrun and
		# then find the last case's "ready" (its SIGUSR2 then killed the
		# new probe before it blocked the signal: c4, 2026-12-04).
		: >"$TMP/$n"
		"$PROBE" -d rv0 -s "$idx" -g "$dgid" -B -W -P $DUMP "${PROBE_ARGS[@]}" >"$TMP/$n" 2>&1 &
		eval "PID_$n=\$!"
	done
	wait_until 60 all_say ready "$@" || ktap_print_msg "the probes did not start"
	for n in "$@"; do
		eval "pid=\$PID_$n"
		kill -USR2 "$pid"
	done
}

# all_say LINE NAME... - each probe NAME has printed LINE.
all_say() {
	local l=$1 n
	shift
	for n in "$@"; do
		has_line "$TMP/$n" "$l" || return 1
	done
}

# waiting NAME... - the probes NAME... have begun their create: a moment
# later (nap) they wait for the neighbour.
waiting() {
	all_say creating "$@"
}

# act LINE - an ip command (ip's batch syntax), run at once by an ip that
# was started before the creates: starting a program takes long enough
# under TCG to matter against ib_core's 1000 ms.
act() {
	echo "$1" >&"${IPB[1]}"
}

# finish NAME... - wait for the probes to end.
finish() {
	local n pid
	for n in "$@"; do
		eval "pid=\$PID_$n"
		wait "$pid"
		sed "s/^/# $n: /" "$TMP/$n"
	done
}

# outcome NAME - "create=E dmac=M" of a probe (dmac: of every line of the
# dump it printed, which must all agree; - when none).
outcome() {
	local l c=- m=- f
	while IFS= read -r l; do
		case $l in
		"create: "*) c=${l#create: } ;;
		"dump: "*)
			read -r -a f <<<"$l"
			# dump: N type port sgid_index dgid dmac ...
			if [ "$m" = - ]; then m=${f[6]}; elif [ "$m" != "${f[6]}" ]; then m=mixed; fi
			;;
		esac
	done <"$TMP/$1"
	echo "create=$c dmac=$m"
}

# expect NAME WANT - the probe's outcome is WANT.
expect() {
	local got
	got=$(outcome "$1")
	[ "$got" = "$2" ] || { ktap_print_msg "$1: $got, not $2"; return 1; }
}

# settle - no neighbour entry, route or probe of a case is left.
settle() {
	ip neigh del $SILENT4 dev veth0 2>/dev/null
	ip -6 neigh del $SILENT6 dev veth0 2>/dev/null
	ip route del $SILENT4/32 2>/dev/null
	ip neigh flush dev veth0
	true
}

# late_mac CORE FAMILY ADDR DGID - two creates wait on one INCOMPLETE
# neighbour, which then gets LATE_MAC.
late_mac() {
	local core=$1 fam=$2 addr=$3 dgid=$4
	settle
	start_probes "$dgid" a b
	if wait_until 60 waiting a b; then
		nap 0.3
		act "neigh replace $addr lladdr $LATE_MAC nud permanent dev veth0"
	else
		ktap_print_msg "$core $fam: the creates were not seen waiting"
	fi
	finish a b
	ksft_check "[$core] $fam: two creates waiting on one INCOMPLETE neighbour that then gets a MAC both succeed with it" \
		eval 'expect a "create=0 dmac=$LATE_MAC" && expect b "create=0 dmac=$LATE_MAC"'
	settle
}

# never CORE - two creates wait on one neighbour that never answers.
never() {
	local core=$1
	settle
	start_probes ::ffff:$SILENT4 a b
	finish a b
	ksft_check "[$core] two creates waiting on one neighbour that never answers both fail with ETIMEDOUT" \
		eval 'expect a "create=-110 dmac=-" && expect b "create=-110 dmac=-"'
	settle
}

# new_route CORE - a create waits for the silent .99; a route then takes
# .99 through the peer, whose neighbour is valid.
new_route() {
	local core=$1
	settle
	ping -c 1 -W 5 $IP4_B >/dev/null || ktap_print_msg "$core: the peer does not answer ping"
	start_probes ::ffff:$SILENT4 a
	if wait_until 60 waiting a; then
		nap 0.3
		act "route add $SILENT4/32 via $IP4_B dev veth0"
	else
		ktap_print_msg "$core: the create was not seen waiting"
	fi
	finish a
	ksft_check "[$core] a route through a resolved gateway that appears during the wait: the create succeeds with the gateway's MAC" \
		expect a "create=0 dmac=$PEER_MAC"
	settle
}

# others CORE - while a create waits for the silent .99, another thread of
# its process (ah_probe -D) destroys an AH of the same PD to the peer,
# makes and destroys one more, and tries to deallocate the PD; then .99
# gets LATE_MAC.
others() {
	local core=$1
	local -a PROBE_ARGS=(-D "::ffff:$IP4_B")
	settle
	ping -c 1 -W 5 $IP4_B >/dev/null || ktap_print_msg "$core: the peer does not answer ping"
	start_probes ::ffff:$SILENT4 a
	if wait_until 60 waiting a; then
		nap 0.3
		# shellcheck disable=SC2154 # PID_a: set by start_probes (eval)
		kill -USR1 "$PID_a"
		wait_until 30 grep -q '^during: ' "$TMP/a" ||
			ktap_print_msg "$core: the other thread's work did not end during the wait"
		act "neigh replace $SILENT4 lladdr $LATE_MAC nud permanent dev veth0"
	else
		ktap_print_msg "$core: the create was not seen waiting"
	fi
	finish a
	ksft_check "[$core] while a create waits: another AH of its PD destroyed, one more made and destroyed, the PD kept (EBUSY); the create then gets the MAC" \
		eval 'during_first a && expect a "create=0 dmac=$LATE_MAC" && has_line "$TMP/a" "dealloc_pd: 0"'
	settle
}

# during_first NAME - the probe's other thread did its work, as expected,
# before the create ended.
during_first() {
	local l want="during: destroy=0 create=0 dealloc_pd=-16"
	while IFS= read -r l; do
		case $l in
		"$want") return 0 ;;
		"create: "* | "during: "*) break ;;
		esac
	done <"$TMP/$1"
	ktap_print_msg "$1: not \"$want\" before the create's end"
	return 1
}

# all_cases CORE
all_cases() {
	late_mac "$1" ipv4 $SILENT4 ::ffff:$SILENT4
	late_mac "$1" ipv6 $SILENT6 $SILENT6
	never "$1"
	new_route "$1"
	others "$1"
}

ktap_print_header
modprobe ib_uverbs && insmod "$RVERBS_KO" && ns_setup &&
	rdma link add rv0 type rverbs netdev veth0 || ktap_exit_fail_msg "setup failed"
V4=$(gid_index rv0 ::ffff:$IP4_A) && V6=$(gid_index rv0 $IP6_A) || ktap_exit_fail_msg "no GIDs on rv0"
read -r PEER_MAC <<<"$(ip netns exec $NS cat /sys/class/net/veth1/address)"
# Every ip command of the cases goes through one ip (act), which goes on
# after a failed command (-force); what it says on its standard error is
# shown.  teardown ends it with the other background jobs.
exec 3>&1
coproc IPB { ip -force -batch - 2>&1 >/dev/null | prefixed "# ip: " >&3; }
ktap_set_plan 13

all_cases C

takeover_on || ktap_exit_fail_msg "cannot enable the takeover"
created=$(counter ah_created) waited=$(counter dmac_neigh_wait) timeouts=$(counter error.110)
all_cases Rust
ksft_check "[Rust] the Rust core made those AHs (8 created, 6 after a wait) and gave the 2 ETIMEDOUTs" \
	test $(($(counter ah_created) - created)) = 8 -a $(($(counter dmac_neigh_wait) - waited)) = 6 \
	-a $(($(counter error.110) - timeouts)) = 2

# The takeover switched off under a waiting create of the Rust core.
settle
# off_under_wait - a create of the Rust core waits for the silent .99, and
# the takeover is switched off meanwhile.
off_under_wait() {
	local off=no timeouts
	timeouts=$(counter error.110)
	start_probes ::ffff:$SILENT4 a
	if wait_until 60 waiting a; then
		nap 0.3
		echo 0 >$LP/enabled && off=yes
	else
		ktap_print_msg "the create was not seen waiting"
	fi
	finish a
	[ $off = yes ] || { ktap_print_msg "the livepatch could not be disabled"; return 1; }
	expect a "create=-110 dmac=-" && test $(($(counter error.110) - timeouts)) = 1
}
ksft_check "[Rust] the takeover switched off while a create waits: the create fails with ETIMEDOUT, from the Rust core" \
	off_under_wait
ksft_check "... and then the livepatch is gone and rverbs_takeover unloads" \
	eval 'wait_until 60 eval "[ ! -d $LP ]" && rmmod rverbs_takeover'
settle
ktap_finished
