// SPDX-License-Identifier: GPL-2.0
/*
 * modinfo of rverbs.ko that the kernel crate's module! macro cannot emit:
 * it has no "version" field.  RVERBS_VERSION comes from Kbuild
 * (scripts/version.sh), as does the Rust side's crate::VERSION, so modinfo,
 * /sys/module/rverbs/version and debugfs say the same.
 */

#include <linux/module.h>

MODULE_VERSION(RVERBS_VERSION);
