/*
 * sim/kernel_prefill.c's interface and its rules, inline: a step's prefill chunks grouped
 * into passes (upstream's merge rule).
 * Included through sim/kernel_int.h, as the kernel files and their white-box tests use it.
 */
#ifndef BS_KERNEL_PREFILL_H
#define BS_KERNEL_PREFILL_H

#include "sim/kernel_kv.h"
#include "sim/kernel_state.h"

/* The pass of the step's prefill items from I on (upstream's grouping); returns the end of its
 * items and its real shape.  prefill_group() (inline, below) answers for the step's last item,
 * which has nothing to merge with. */
size_t prefill_group_(struct sim *s, const struct lane *in, size_t i, int32_t real[4]);

/* An item's context (the request's computed tokens plus its chunks still in older microbatches,
 * cluster.async_prefill_chunks), and the real shape of a pass of item I alone, the same merged
 * or not. */
static inline int64_t prefill_item_context(const struct sim *s, const struct lane *in, size_t j)
{
	return (int64_t)s->r[in->items[j].id].computed + in->items[j].ahead;
}

static inline void prefill_item_shape(const struct sim *s, const struct lane *in, size_t i,
				      bool with_ctx, int32_t real[4])
{
	real[0] = 1;
	real[1] = in->items[i].chunk;
	real[2] = with_ctx ? blocks_for(s, prefill_item_context(s, in, i)) : 0;
	real[3] = 0;
}

static inline size_t prefill_group(struct sim *s, const struct lane *in, size_t i,
				   int32_t real[4])
{
	if (i + 1 < in->n_items)
		return prefill_group_(s, in, i, real);
	/* The step's last item (every pass, with one prefill per step): a pass of its own. */
	prefill_item_shape(s, in, i, true, real);
	return i + 1;
}

#endif
