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
 * evicted first, as vLLM's free-block queue does. */

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

/* Changes the blocks in use of KV, integrating blocks x time for kv_utilization_mean. */
void pool_used_add(struct sim *s, struct kvpool *kv, int64_t delta)
{
	s->m.kv_block_ns += (double)kv->used * (double)(s->now - kv->t_used);
	kv->t_used = s->now;
	kv->used += delta;
	kv->free -= delta;
	s->kv_used_all += delta;
	if (s->kv_used_all > s->m.kv_blocks_peak)
		s->m.kv_blocks_peak = s->kv_used_all;
}

/* Evicts unreferenced cached prefixes until NB blocks can be taken without touching one. */
static void pc_evict_for(struct lane *in, int64_t nb)
{
	while (in->kv->free - nb < in->kv->cached_free && in->kv->lru_head >= 0) {
		int32_t g = in->kv->lru_head;
		lru_unlink(in, g);
		in->kv->cached_free -= in->kv->pc[g].blocks;
		in->kv->pc[g].blocks = 0;
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
	}
	r->shared = share;
}

static void pc_unref(struct sim *s, struct lane *in, struct req *r, int32_t id)
{
	if (!r->shared)
		return;
	int32_t g = s->spec[id].prefix_group;
	struct pcache *c = &in->kv->pc[g];
	r->shared = 0;
	if (--c->ref == 0) {
		pool_used_add(s, in->kv, -c->blocks);
		in->kv->cached_free += c->blocks;
		lru_append(in, g);
	}
}

void kv_take(struct sim *s, struct lane *in, struct req *r, int32_t nb)
{
	assert(in->kv->free >= nb);
	pc_evict_for(in, nb);
	pool_used_add(s, in->kv, nb);
	r->blocks += nb;
}

/* Frees the blocks request ID owns and drops its reference to its group's prefix. */
void kv_release(struct sim *s, struct lane *in, struct req *r, int32_t id)
{
	pool_used_add(s, in->kv, -r->blocks);
	r->blocks = 0;
	pc_unref(s, in, r, id);
}

/* After a prefill chunk: a request that has computed its group's prefix gives those blocks to
 * the group's cache when the group has none cached (content-addressed blocks in vLLM). */
void pc_donate(struct sim *s, struct lane *in, struct req *r, int32_t id)
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
	}
	c->blocks = pb;
	c->ref = 1;
	r->blocks -= pb;
	r->shared = pb;
}
