#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# step.sh NAME CMD [ARG...] - run CMD as one timed step of a check run.
#
# Prints "rverbs: step NAME: N s" when CMD ends and, when RVERBS_STEPS names
# a file (make check-all sets it), appends "NAME<TAB>seconds<TAB>exit" to it,
# so that scripts/check-all.sh can print every step's time at the end: a run
# that grows shows where.  Exits with CMD's status.
. "$(dirname "$0")/lib.sh"

[ $# -ge 2 ] || die "usage: step.sh NAME CMD [ARG...]"
name=$1
shift
start=$SECONDS
"$@"
rc=$?
step_record "$name" $((SECONDS - start)) "$rc"
exit "$rc"
