#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# kdir-path.sh [src|build] - print where the rebuilt kernel tree lives.
. "$(dirname "$0")/lib.sh"
echo "$(kdir_base)/${1:-build}"
