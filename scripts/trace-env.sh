# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# trace-env.sh - where a test's time goes (make check TRACE=1, make
# check-debug TRACE=1): scripts/check.sh points BASH_ENV at this file in the
# guest, so every bash script started there (each test, the helpers it
# runs) writes each command it runs, with the time and its process, to
# $RVERBS_TRACE_DIR/<script>.trace; scripts/trace-report.sh sums the time
# by source line.  Tracing costs time of its own: never in a timed run.
if [ -n "${RVERBS_TRACE_DIR:-}" ] &&
	exec {BASH_XTRACEFD}>>"$RVERBS_TRACE_DIR/${0##*/}.trace" 2>/dev/null; then
	PS4='+ $EPOCHREALTIME $BASHPID ${BASH_SOURCE[0]##*/}:$LINENO '
	set -x
fi
