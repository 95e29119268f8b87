/*
 * kernel_kv: the paged KV-cache block pool of each instance and the automatic prefix cache
 * kept in it.
 */
#include "sim/kernel_int.h"

#include <assert.h>

/* ---- KV blocks, running sets ------------------------------------------------------------- */

/* ---- automatic prefix caching ------------------------------------------------------------
 *
 * Requests of one prefix group share the KV blocks of their common prefix (whole blocks only,
 * and never the whole prompt: at least its last token is computed).  The first request to
 * compute the prefix donates those blocks to the group's cache; later requests admitted while
 * the prefix is cached reference them and start their prefill after it.  When the last
 * reference goes, the blocks return to the free pool but keep their content (cached_free)
 * until an allocation needs them: then the least recently used unreferenced prefixes are
 * evicted first, as vLLM's free-block queue does.
 *
 * A preempted request's own full blocks keep their hashes too (vLLM's KVCacheManager.free
 * returns them to the free queue with their hashes; the scheduler's _preempt_request resets
 * num_computed_tokens, and the next get_computed_blocks finds the longest cached chain).  They
 * form an LRU entry of their own, indexed ngroups + request id, that an allocation evicts from
 * its tail first, block by block (vLLM frees a request's blocks in reverse order, so its last
 * blocks are the first to go).  On resume the request reuses the blocks that remain, as long
 * as the chain from the prompt's start is whole (its group's prefix still cached when it
 * shared one). */

static void lru_unlink(struct lane *in, int32_t g)
{
	struct pcache *c = &in->kv->pc[g];
	if (c->prev >= 0)
		in->kv->pc[c->prev].next = c->next;
	else
		in->kv->lru_head = c->next;
	if (c->next >= 0)
		in->kv->pc[c->next].prev = c->prev;
	else
		in->kv->lru_tail = c->prev;
	c->prev = c->next = -1;
}

static void lru_append(struct lane *in, int32_t g)
{
	struct pcache *c = &in->kv->pc[g];
	c->prev = in->kv->lru_tail;
	c->next = -1;
	if (in->kv->lru_tail >= 0)
		in->kv->pc[in->kv->lru_tail].next = g;
	else
		in->kv->lru_head = g;
	in->kv->lru_tail = g;
}

/* Evicts unreferenced cached blocks until NB blocks can be taken without touching one: a
 * group's prefix as a whole, a preempted request's blocks from their tail, as many as needed. */
void pc_evict_for(struct sim *s, struct lane *in, int64_t nb)
{
	struct kvpool *kv = in->kv;
	while (kv->free - nb < kv->cached_free && kv->lru_head >= 0) {
		int32_t g = kv->lru_head;
		struct pcache *c = &kv->pc[g];
		int64_t take = c->blocks;
		if (g >= s->ngroups && kv->cached_free - (kv->free - nb) < take)
			take = kv->cached_free - (kv->free - nb);
		c->blocks -= (int32_t)take;
		kv->cached_free -= take;
		kv_ids_entry_evict(kv, g, (int32_t)take);
		if (!c->blocks)
			lru_unlink(in, g);
	}
}

/* References group G's cached blocks for request R (its first SHARE blocks). */
void pc_ref(struct sim *s, struct lane *in, struct req *r, int32_t g, int32_t share)
{
	struct pcache *c = &in->kv->pc[g];
	if (c->ref++ == 0) {
		/* Unreferenced: its blocks come back from the free pool. */
		lru_unlink(in, g);
		in->kv->cached_free -= c->blocks;
		pool_used_add(s, in->kv, c->blocks);
		kv_ids_entry_use(in->kv, g, true);
	}
	r->shared = share;
}

void pc_unref_(struct sim *s, struct lane *in, struct req *r, int32_t id)
{
	int32_t g = s->spec[id].prefix_group;
	struct pcache *c = &in->kv->pc[g];
	r->shared = 0;
	if (--c->ref == 0) {
		pool_used_add(s, in->kv, -c->blocks);
		in->kv->cached_free += c->blocks;
		kv_ids_entry_use(in->kv, g, false);
		lru_append(in, g);
	}
}


/* After a prefill chunk: a request that has computed its group's prefix gives those blocks to
 * the group's cache when the group has none cached (content-addressed blocks in vLLM). */
void pc_donate_(struct sim *s, struct lane *in, struct req *r, int32_t id)
{
	int32_t pb = prefix_blocks(s, id);
	if (!pb || r->shared || r->computed < pb * s->p.block_size)
		return;
	int32_t g = s->spec[id].prefix_group;
	struct pcache *c = &in->kv->pc[g];
	if (c->ref > 0)
		return; /* another request's copy is in use: keep its own */
	if (c->blocks) { /* an unreferenced copy: replaced by this one */
		lru_unlink(in, g);
		in->kv->cached_free -= c->blocks;
		kv_ids_entry_evict(in->kv, g, c->blocks);
	}
	kv_ids_donate(s, in->kv, id, g, pb);
	c->blocks = pb;
	c->ref = 1;
	r->blocks -= pb;
	r->shared = pb;
}

/* Preempts request ID out of IN's pool: with prefix caching, its full blocks past its group's
 * shared prefix stay cached under its own LRU entry (appended before the group's prefix, which
 * its release may leave unreferenced: vLLM frees a request's blocks tail first).  KV_TOKENS is
 * the number of tokens whose KV it has computed. */
void kv_preempt(struct sim *s, struct lane *in, struct req *r, int32_t id, int64_t kv_tokens)
{
	if (!s->p.prefix_caching) {
		kv_release(s, in, r, id);
		return;
	}
	int32_t kept = (int32_t)(kv_tokens / s->p.block_size) - r->shared;
	if (kept > r->blocks)
		kept = r->blocks;
	if (kept < 0)
		kept = 0;
	struct pcache *e = &in->kv->pc[s->ngroups + id];
	if (e->blocks) { /* a stale entry from an earlier preemption on this pool */
		lru_unlink(in, s->ngroups + id);
		in->kv->cached_free -= e->blocks;
		kv_ids_entry_evict(in->kv, s->ngroups + id, e->blocks);
		e->blocks = 0;
	}
	pool_used_add(s, in->kv, -r->blocks);
	kv_ids_preempt(s, in->kv, id, s->ngroups + id, kept);
	r->blocks = 0;
	if (kept) {
		e->blocks = kept;
		e->base = r->shared;
		in->kv->cached_free += kept;
		lru_append(in, s->ngroups + id);
	}
	if (r->shared)
		pc_unref_(s, in, r, id);
}

/* The blocks request ID can reuse in IN's pool from its own entry, given that the first HIT
 * blocks of its prompt come from its group's cache and that at most MAX_BLOCKS may be reused
 * in all (its last token is always computed).  Its blocks follow its group's BASE blocks: the
 * chain is whole only when HIT covers them; own blocks that HIT already covers are not
 * counted again. */
int32_t kv_resume_blocks(const struct sim *s, const struct lane *in, int32_t id, int32_t hit,
			 int32_t max_blocks)
{
	if (!s->p.prefix_caching)
		return 0;
	const struct pcache *e = &in->kv->pc[s->ngroups + id];
	if (!e->blocks || hit < e->base)
		return 0;
	int32_t own = e->base + e->blocks - hit;
	if (own > max_blocks - hit)
		own = max_blocks - hit;
	return own > 0 ? own : 0;
}

/* Brings request ID's own cached blocks back: OWN of them become its blocks again (the rest,
 * covered by its group's cache, are plain free blocks). */
void kv_resume(struct sim *s, struct lane *in, struct req *r, int32_t id, int32_t own)
{
	if (!s->p.prefix_caching)
		return;
	struct pcache *e = &in->kv->pc[s->ngroups + id];
	if (!e->blocks)
		return;
	lru_unlink(in, s->ngroups + id);
	in->kv->cached_free -= e->blocks;
	/* Its entry's blocks follow the group's first e->base: those from r->shared on are its
	 * own again (kv_resume_blocks). */
	kv_ids_resume(s, in->kv, id, s->ngroups + id, r->shared - e->base, own);
	e->blocks = 0;
	pool_used_add(s, in->kv, own);
	r->blocks += own;
}
