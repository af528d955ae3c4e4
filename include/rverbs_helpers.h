/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Prototypes of the C helpers of rverbs (rust/helpers/).
 *
 * Rust cannot call static inline functions or expand macros, so each one
 * rverbs needs gets a small exported-to-Rust wrapper named
 * rust_helper_<name>.  The bindings strip the prefix: Rust calls <name>.
 */
#ifndef _RVERBS_HELPERS_H
#define _RVERBS_HELPERS_H

const char *rust_helper_rverbs_kernel_release(void);

#endif /* _RVERBS_HELPERS_H */
