/*
 * sim/kernel_defrag.c's interface and its rules, inline: block ids (with contiguous PA,
 * outside unified attention) and the online defragmenter; kv_ids_* keep the ids in step with
 * kernel_kv.c's block counts.
 * Included through sim/kernel_int.h, as the kernel files and their white-box tests use it.
 */
#ifndef BS_KERNEL_DEFRAG_H
#define BS_KERNEL_DEFRAG_H

#include "sim/kernel_state.h"

void idset_init(struct idset *t, int64_t n);
void idset_release(struct idset *t);
void idset_insert(struct idset *t, int64_t x);
void idset_erase(struct idset *t, int64_t x);
bool idset_has(const struct idset *t, int64_t x);
int64_t idset_max(const struct idset *t);          /* -1: empty */
int64_t idset_next(const struct idset *t, int64_t x); /* smallest member >= x, -1: none */
void kv_ids_init(struct sim *s);
void kv_ids_release(struct sim *s);

/* Takes NB ids from the free queue for request ID (appended to its block table). */
void kv_ids_take_(struct sim *s, struct kvpool *kv, int32_t id, int32_t nb);

static inline void kv_ids_take(struct sim *s, struct kvpool *kv, int32_t id, int32_t nb)
{
	if (kv->ids)
		kv_ids_take_(s, kv, id, nb);
}

/* Frees request ID's whole block table (tail first, as vLLM frees a request's blocks). */
void kv_ids_free_request(struct sim *s, struct kvpool *kv, int32_t id);

/* Moves prefix-cache entry E's ids: into / out of the blocks in use (referenced or not). */
void kv_ids_entry_use(struct kvpool *kv, int32_t e, bool used);

/* Evicts the last N ids of entry E into the free queue. */
void kv_ids_entry_evict(struct kvpool *kv, int32_t e, int32_t n);

/* Request ID's first N ids become entry E's (they stay in use). */
void kv_ids_donate(struct sim *s, struct kvpool *kv, int32_t id, int32_t e, int32_t n);

/* Preemption: request ID's first KEPT ids become entry E's (no longer in use), the rest are
 * freed. */
void kv_ids_preempt(struct sim *s, struct kvpool *kv, int32_t id, int32_t e, int32_t kept);

/* Resume: entry E's ids from FROM on, OWN of them, become request ID's (in use); the others
 * are freed. */
void kv_ids_resume(struct sim *s, struct kvpool *kv, int32_t id, int32_t e, int32_t from,
		   int32_t own);

/* Request ID joins (SIGN 1) or leaves (-1) IN's decode batch: its block table (from FROM on)
 * and its group's shared blocks enter or leave the lane's set. */
void kv_ids_decode_(struct sim *s, struct lane *in, int32_t id, int sign, int32_t from);

static inline void kv_ids_decode(struct sim *s, struct lane *in, int32_t id, int sign,
				 int32_t from)
{
	if (in->dids)
		kv_ids_decode_(s, in, id, sign, from);
}

/* The online defragmenter of IN's pool before its step (OnlineDefragmenter.defragment):
 * returns the device time of its swaps (0: none), their number in in->step_swaps. */
int64_t kv_defrag_(struct sim *s, struct lane *in);

static inline int64_t kv_defrag(struct sim *s, struct lane *in)
{
	if (!s->p.defrag)
		return 0; /* in->step_swaps stays 0 */
	return kv_defrag_(s, in);
}

/* The decode shape of IN's step with contiguous PA: the highest physical id its decode
 * batch reads + 1; records it for the fragmentation metric. */
int32_t kv_decode_span(struct lane *in);

/* IN's step ended after K decode steps: the fragmentation metric counts them. */
static inline void kv_decode_done(struct sim *s, const struct lane *in, int64_t k)
{
	if (!in->dids)
		return;
	s->m.kv_span_blocks += k * in->step_span;
	s->m.kv_read_blocks += k * in->step_distinct;
}

/* KV's ids agree with its counts: as many in use, the free queue holds its uncached free
 * blocks. */
bool kv_ids_consistent(const struct kvpool *kv);

/* The highest physical id in use in KV (0: none, or ids not modelled). */
int64_t kv_max_id(const struct kvpool *kv);

#endif
