/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Input of the build-time bindgen run of rverbs (scripts/bindgen.sh).
 *
 * Only items declared by the headers of this directory are turned into
 * Rust (see the allowlist in scripts/bindgen.sh); generic kernel types
 * come from the kernel crate's own bindings.
 */
#include "rverbs_helpers.h"
