/* feasibility.h - may this candidate run on the target arch? Decided twice.
 *
 * Before compiling, from the space's model (constraints, threads, grid, the
 * smem_bytes formula against the static 48 KB or the opt-in limit), so no
 * compile is wasted on a candidate that cannot fit. After compiling, from what
 * ptxas reports (static shared memory, registers, stack frame, spills, and
 * its note that it serialized a kernel's wgmma).
 * A rejection is a trial status with a reason, never an error.
 */
#ifndef FT_FEASIBILITY_H
#define FT_FEASIBILITY_H

#include "base/arch.h"
#include "space/space.h"
#include "base/trial.h"

/* Fills t's config, values, geometry and smem_model from c and moves it to
 * stage MODEL (trial.h). Returns 1 when the candidate may be compiled (status
 * accepted), 0 when rejected (t->status and t->reason set: "smem 163840 B >
 * 49152 B static limit of sm_89"). */
int ft_feasible_model(const struct ft_space *sp, const struct ft_arch *a,
		      const struct ft_candidate *c, struct ft_trial *t);

/* After a successful compile: res[0] main kernel, res[1] combine (may be
 * unknown); moves t to stage COMPILED. Returns 1 when runnable (status
 * compiled), 0 when rejected (rejected_smem,
 * rejected_constraint for registers or for wgmma that ptxas serialized (its
 * C7520 note and siblings; unless the space says `wgmma_serialized: allow`),
 * spills (more spill bytes or stack frame
 * than the space's `spills: allow N`, none by default), or compile_failed when a static
 * kernel's smem_bytes formula disagrees with ptxas). Sets t->res. */
int ft_feasible_compiled(const struct ft_space *sp, const struct ft_arch *a,
			 const struct ft_resources res[2], struct ft_trial *t);

/* Blocks of this candidate that fit on one SM by shared memory, registers and
 * threads (0 if it cannot run); res may be NULL before compiling. */
int ft_blocks_per_sm(const struct ft_arch *a, long long smem, long long threads,
		     const struct ft_resources *res);

#endif
