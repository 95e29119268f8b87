/*
 * sim/kernel_contract.c's interface: the policies' contract with the fast path, checked at
 * every step a decode run skips (struct sim's check_contract).
 * Included through sim/kernel_int.h, as the kernel files and their white-box tests use it.
 */
#ifndef BS_KERNEL_CONTRACT_H
#define BS_KERNEL_CONTRACT_H

#include "sim/kernel_state.h"

/* Step J (> 0) of the run of identical decode steps IN just ran, which the fast path skipped,
 * checked against what the policies would have done on it, V being the step's view (struct
 * sim's check_contract); a violation is a BUG naming the policy. */
void contract_check_step(const struct sim *s, const struct lane *in, int64_t j,
			 const struct batch_view *v);

/* Whether the steps of IN's run could have admitted anything at all (contract_check_step
 * has something to check). */
bool contract_applies(const struct sim *s, const struct lane *in);

#endif
