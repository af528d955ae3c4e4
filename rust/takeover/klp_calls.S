/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Calls of ib_core functions that ib_core does not export, for the
 * takeover's ib_modify_qp_with_udata() (Documentation/verbs-core.rst,
 * "Reaching what ib_core does not export").
 *
 * Each rverbs_klp_<name> below is a tail call of ib_core's <name>.  The
 * jump's target is not linked: it names a weak, undefined symbol, and an
 * entry of __klp_relocs.ib_core describes the relocation livepatch must do
 * instead (the place, the symbol ".klp.sym.ib_core.<name>,0" and the
 * relocation type).  The build runs objtool's "klp post-link" on the
 * linked module (scripts/klp-post-link.sh), which turns those entries
 * into the ".klp.rela.ib_core..text" section of the livepatch module
 * format (Documentation/livepatch/module-elf-format.rst) and disables the
 * jump's ordinary relocation.  When the patch is enabled, livepatch looks
 * the symbols up in ib_core and writes the jumps; if one is missing,
 * klp_enable_patch() fails and the module does not load.
 *
 * A direct jump, not a pointer found through kallsyms: ib_core never takes
 * these functions' addresses, so an IBT kernel seals their ENDBR and an
 * indirect call to them would trap.
 *
 * The entries' layout is objtool's struct klp_reloc (an 8-byte pointer to
 * the place, an 8-byte pointer to the symbol with the addend, a 4-byte
 * relocation type, padding to 24 bytes).  sympos 0: each name is unique in
 * ib_core.
 */

#include <linux/linkage.h>

#define R_X86_64_PLT32	4

	.text

SYM_FUNC_START(rverbs_klp_rdma_counter_bind_qp_auto)
.Lcounter_bind_qp_auto:
	jmp	.klp.tombstone.rdma_counter_bind_qp_auto
SYM_FUNC_END(rverbs_klp_rdma_counter_bind_qp_auto)

SYM_FUNC_START(rverbs_klp_rdma_lag_get_ah_roce_slave)
.Llag_get_ah_roce_slave:
	jmp	.klp.tombstone.rdma_lag_get_ah_roce_slave
SYM_FUNC_END(rverbs_klp_rdma_lag_get_ah_roce_slave)

SYM_FUNC_START(rverbs_klp_rdma_lag_put_ah_roce_slave)
.Llag_put_ah_roce_slave:
	jmp	.klp.tombstone.rdma_lag_put_ah_roce_slave
SYM_FUNC_END(rverbs_klp_rdma_lag_put_ah_roce_slave)

#ifdef CONFIG_SECURITY_INFINIBAND
SYM_FUNC_START(rverbs_klp_ib_security_modify_qp)
.Lsecurity_modify_qp:
	jmp	.klp.tombstone.ib_security_modify_qp
SYM_FUNC_END(rverbs_klp_ib_security_modify_qp)
#endif

	.weak	.klp.tombstone.rdma_counter_bind_qp_auto
	.weak	.klp.tombstone.rdma_lag_get_ah_roce_slave
	.weak	.klp.tombstone.rdma_lag_put_ah_roce_slave
	.weak	".klp.sym.ib_core.rdma_counter_bind_qp_auto,0"
	.weak	".klp.sym.ib_core.rdma_lag_get_ah_roce_slave,0"
	.weak	".klp.sym.ib_core.rdma_lag_put_ah_roce_slave,0"
#ifdef CONFIG_SECURITY_INFINIBAND
	.weak	.klp.tombstone.ib_security_modify_qp
	.weak	".klp.sym.ib_core.ib_security_modify_qp,0"
#endif

	.pushsection __klp_relocs.ib_core, "a"
	.balign	8
	/* The rel32 of each jump is the byte after its opcode (0xe9). */
	.quad	.Lcounter_bind_qp_auto + 1
	.quad	".klp.sym.ib_core.rdma_counter_bind_qp_auto,0" - 4
	.long	R_X86_64_PLT32, 0
	.quad	.Llag_get_ah_roce_slave + 1
	.quad	".klp.sym.ib_core.rdma_lag_get_ah_roce_slave,0" - 4
	.long	R_X86_64_PLT32, 0
	.quad	.Llag_put_ah_roce_slave + 1
	.quad	".klp.sym.ib_core.rdma_lag_put_ah_roce_slave,0" - 4
	.long	R_X86_64_PLT32, 0
#ifdef CONFIG_SECURITY_INFINIBAND
	.quad	.Lsecurity_modify_qp + 1
	.quad	".klp.sym.ib_core.ib_security_modify_qp,0" - 4
	.long	R_X86_64_PLT32, 0
#endif
	.popsection
