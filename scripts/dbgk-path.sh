#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# dbgk-path.sh - print where the debug kernel (scripts/mkdebugkernel.sh) lives.
. "$(dirname "$0")/lib.sh"
dbgk_base
