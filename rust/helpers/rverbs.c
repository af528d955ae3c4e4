// SPDX-License-Identifier: GPL-2.0
/*
 * C helpers of rverbs: static inline functions and macros, made callable
 * from Rust.  Prototypes in include/rverbs_helpers.h.
 */

#include <linux/utsname.h>

#include "rverbs_helpers.h"

const char *rust_helper_rverbs_kernel_release(void)
{
	return init_utsname()->release;
}
