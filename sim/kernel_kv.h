/*
 * sim/kernel_kv.c's interface and its rules, inline: KV blocks of a token count, the paged
 * pool's blocks taken and freed, the prefix cache's shared blocks.
 * Included through sim/kernel_int.h, as the kernel files and their white-box tests use it.
 */
#ifndef BS_KERNEL_KV_H
#define BS_KERNEL_KV_H

#include <assert.h>

#include "sim/kernel_defrag.h"
#include "sim/kernel_state.h"

/* Request R (ID), holding a share of its group's cached prefix, drops it (kv_release()). */
void pc_unref_(struct sim *s, struct lane *in, struct req *r, int32_t id);
void pc_donate_(struct sim *s, struct lane *in, struct req *r, int32_t id);

/* After a prefill chunk of request ID: it may give its group's prefix to the cache. */
static inline void pc_donate(struct sim *s, struct lane *in, struct req *r, int32_t id)
{
	if (s->p.prefix_caching && s->spec[id].prefix_group >= 0) /* else nothing to share */
		pc_donate_(s, in, r, id);
}

void pc_ref(struct sim *s, struct lane *in, struct req *r, int32_t g, int32_t share);

/* Evicts unreferenced cached blocks until NB blocks can be taken without touching one: a
 * group's prefix as a whole, a preempted request's blocks from their tail, as many as needed. */
void pc_evict_for(struct sim *s, struct lane *in, int64_t nb);
void kv_preempt(struct sim *s, struct lane *in, struct req *r, int32_t id, int64_t kv_tokens);
int32_t kv_resume_blocks(const struct sim *s, const struct lane *in, int32_t id, int32_t hit,
			 int32_t max_blocks);
void kv_resume(struct sim *s, struct lane *in, struct req *r, int32_t id, int32_t own);

static inline int32_t blocks_for(const struct sim *s, int64_t tokens)
{
	if (s->block_shift >= 0 && tokens >= 0) /* the same quotient, without a division */
		return (int32_t)((tokens + s->p.block_size - 1) >> s->block_shift);
	return (int32_t)((tokens + s->p.block_size - 1) / s->p.block_size);
}

/* Whole blocks of request ID's prompt that its prefix group can share. */
static inline int32_t prefix_blocks(const struct sim *s, int32_t id)
{
	const struct req_spec *q = &s->spec[id];
	if (!s->p.prefix_caching || q->prefix_group < 0 || q->prefix_tokens <= 0)
		return 0;
	int32_t p = q->prefix_tokens < q->prompt_tokens ? q->prefix_tokens : q->prompt_tokens - 1;
	return p / s->p.block_size;
}

/* Changes the blocks in use of KV, integrating blocks x time for kv_utilization_mean
 * (kernel_kv.c). */
static inline void pool_used_add(struct sim *s, struct kvpool *kv, int64_t delta)
{
	s->m.kv_block_ns += (double)kv->used * (double)(s->now - kv->t_used);
	kv->t_used = s->now;
	kv->used += delta;
	kv->free -= delta;
	s->kv_used_all += delta;
	if (s->kv_used_all > s->m.kv_blocks_peak)
		s->m.kv_blocks_peak = s->kv_used_all;
}

/* Request R takes NB free blocks of IN's pool (kernel_kv.c), evicting cached ones first when
 * the uncached free blocks do not suffice. */
static inline void kv_take(struct sim *s, struct lane *in, struct req *r, int32_t nb)
{
	struct kvpool *kv = in->kv;
	assert(kv->free >= nb);
	if (kv->free - nb < kv->cached_free && kv->lru_head >= 0)
		pc_evict_for(s, in, nb);
	pool_used_add(s, kv, nb);
	kv_ids_take(s, kv, (int32_t)(r - s->r), nb);
	r->blocks += nb;
}

/* Frees the blocks request ID owns and drops its reference to its group's prefix
 * (kernel_kv.c). */
static inline void kv_release(struct sim *s, struct lane *in, struct req *r, int32_t id)
{
	pool_used_add(s, in->kv, -r->blocks);
	if (in->kv->ids)
		kv_ids_free_request(s, in->kv, id);
	r->blocks = 0;
	if (r->shared)
		pc_unref_(s, in, r, id);
}

#endif
