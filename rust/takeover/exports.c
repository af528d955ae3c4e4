// SPDX-License-Identifier: GPL-2.0
/*
 * Exports of rverbs.ko's C ABI.  The functions are defined in Rust
 * (rust/takeover/exports.rs); exporting is done here, where the kernel's
 * EXPORT_SYMBOL_GPL macro is at hand.
 */

#include <linux/export.h>

#include "rverbs.h"

EXPORT_SYMBOL_GPL(rverbs_create_user_ah);
EXPORT_SYMBOL_GPL(rverbs_destroy_ah_user);
EXPORT_SYMBOL_GPL(rverbs_alloc_xrcd_user);
EXPORT_SYMBOL_GPL(rverbs_dealloc_xrcd_user);
