/*
 * kernel_defrag: the block ids of a KV pool, modelled with contiguous paged attention, and
 * vllm-gaudi's online defragmenter.
 *
 * Contiguous PA reads the KV cache as one slice cache[:n]: vllm-gaudi's
 * HPUModelRunner.get_habana_paged_attn_buffers pads the decode's block list to
 * max(block_list) + 1 blocks (then to its decode bucket), so the decode shape is the highest
 * block id the decode batch reads + 1, not the number of blocks it reads.
 *
 * Which ids a request gets is vLLM's: contiguous PA turns prefix caching off (vllm-gaudi
 * platform.py, check_and_update_config), and then the block pool (vllm v1/core/block_pool.py,
 * BlockPool.get_new_blocks) pops ids from the head of its FreeKVCacheBlockQueue
 * (v1/core/kv_cache_utils.py), which starts in id order 0..n with id 0 taken at once as the
 * null block, and a request's freed blocks are appended at its tail, last block first
 * (SingleTypeKVCacheManager.free passes them reversed; vllm-gaudi's patches.py _hpu_free_blocks
 * appends them in one pass).  The queue is first in, first out: an id freed comes back only
 * after every id freed before it, so without the defragmenter the ids in use spread over the
 * whole pool.  With prefix caching on as well, the prefix cache's blocks keep their ids while
 * cached and join the queue's tail when evicted (kernel_kv.c decides what is evicted).
 *
 * The online defragmenter (vllm_gaudi/extension/defragmentation.py, OnlineDefragmenter, run
 * by HPUModelRunner.run_defragmenter at the start of every execute_model) maps those
 * (logical) ids to the (physical) ids the kernel reads.  When the highest physical id in use
 * exceeds the number of blocks in use by more than its threshold (defragment():
 * max_used - threshold > num_used), it pairs the used ids from the highest down with the free
 * ids from 1 up while the free id is below the used one, at most 512 pairs, and swaps each
 * pair's content and mapping.  The swaps run as one graph padded to the next of 8, 16, ...,
 * 512 pairs (to_swap_pad_thresholds, _swap); its time is charged to the step before its
 * passes (models/cost.h, cost_kv_swap_ns).
 *
 * Upstream's run_defragmenter does not see preempted requests' blocks freed ("TODO: Add
 * support for preempted blocks"); here preemption frees them, as the block pool does.
 */
#include "sim/kernel_int.h"

#include <assert.h>
#include <stdlib.h>

/* ---- sets of ids -------------------------------------------------------------------------- */

void idset_init(struct idset *t, int64_t n)
{
	int64_t words = (n + 63) / 64;
	t->levels = 0;
	do {
		if (t->levels == IDSET_LEVELS)
			BUG("idset of %lld ids", (long long)n);
		t->nw[t->levels] = words;
		t->w[t->levels++] = xcalloc((size_t)words, sizeof(uint64_t));
		words = (words + 63) / 64;
	} while (t->nw[t->levels - 1] > 1);
}

void idset_release(struct idset *t)
{
	for (int l = 0; l < t->levels; l++)
		free(t->w[l]);
	t->levels = 0;
}

void idset_insert(struct idset *t, int64_t x)
{
	for (int l = 0; l < t->levels; l++, x >>= 6) {
		uint64_t was = t->w[l][x >> 6];
		t->w[l][x >> 6] = was | UINT64_C(1) << (x & 63);
		if (was)
			return;
	}
}

void idset_erase(struct idset *t, int64_t x)
{
	for (int l = 0; l < t->levels; l++, x >>= 6) {
		t->w[l][x >> 6] &= ~(UINT64_C(1) << (x & 63));
		if (t->w[l][x >> 6])
			return;
	}
}

bool idset_has(const struct idset *t, int64_t x)
{
	return t->w[0][x >> 6] >> (x & 63) & 1;
}

int64_t idset_max(const struct idset *t)
{
	int l = t->levels - 1;
	if (!t->w[l][0])
		return -1;
	int64_t x = 63 - __builtin_clzll(t->w[l][0]);
	while (l-- > 0)
		x = x << 6 | (63 - __builtin_clzll(t->w[l][x]));
	return x;
}

int64_t idset_next(const struct idset *t, int64_t x)
{
	int l = 0;
	for (;; l++) {
		int64_t i = x >> 6;
		if (l == t->levels || i >= t->nw[l])
			return -1;
		uint64_t m = t->w[l][i] & (~UINT64_C(0) << (x & 63));
		if (m) {
			x = i << 6 | __builtin_ctzll(m);
			break;
		}
		x = i + 1;
	}
	while (l-- > 0)
		x = x << 6 | __builtin_ctzll(t->w[l][x]);
	return x;
}

/* ---- lists ------------------------------------------------------------------------------- */

static void bl_push(struct blist *b, int32_t v)
{
	if (b->n == b->cap) {
		b->cap = b->cap ? 2 * b->cap : 8;
		b->v = xrealloc(b->v, (size_t)b->cap * sizeof *b->v);
	}
	b->v[b->n++] = v;
}

/* ---- the pool's ids ---------------------------------------------------------------------- */

static inline int32_t phys(const struct kvids *d, int32_t l)
{
	return d->fwd ? d->fwd[l] : l;
}

/* Physical id P enters (USED) or leaves the blocks in use. */
static void mark(struct kvids *d, int32_t p, bool used)
{
	if (used) {
		idset_insert(&d->used, p);
		idset_erase(&d->freeset, p);
		d->n_used++;
	} else {
		idset_erase(&d->used, p);
		idset_insert(&d->freeset, p);
		d->n_used--;
	}
}

bool kv_ids_consistent(const struct kvpool *kv)
{
	const struct kvids *d = kv->ids;
	return !d || (d->n_used == kv->used && d->len == kv->free - kv->cached_free);
}

/* Logical id L, not in use, joins the free queue's tail. */
static void fifo_push(struct kvids *d, int32_t l)
{
	if (d->len == d->n)
		BUG("free block queue overflow");
	d->fifo[(d->head + d->len++) % d->n] = l;
}

void kv_ids_init(struct sim *s)
{
	if (!s->p.contiguous_pa || s->p.unified)
		return;
	size_t entries = (size_t)s->ngroups + (s->p.prefix_caching ? s->n : 0);
	for (int k = 0; k < s->n_pools; k++) {
		struct kvpool *kv = &s->pools[k];
		struct kvids *d = kv->ids = xcalloc(1, sizeof *d);
		d->n = (int32_t)kv->total;
		d->fifo = xmalloc((size_t)d->n * sizeof *d->fifo);
		for (int32_t i = 0; i < d->n; i++)
			d->fifo[i] = i + 1; /* 0 is the null block */
		d->len = d->n;
		if (s->p.defrag) {
			d->fwd = xmalloc(((size_t)d->n + 1) * sizeof *d->fwd);
			d->bwd = xmalloc(((size_t)d->n + 1) * sizeof *d->bwd);
			for (int32_t i = 0; i <= d->n; i++)
				d->fwd[i] = d->bwd[i] = i;
		}
		idset_init(&d->used, (int64_t)d->n + 1);
		idset_init(&d->freeset, (int64_t)d->n + 1);
		for (int32_t i = 1; i <= d->n; i++)
			idset_insert(&d->freeset, i);
		d->npcl = (int32_t)entries;
		d->pcl = xcalloc(entries ? entries : 1, sizeof *d->pcl);
	}
	s->rids = xcalloc(s->n ? s->n : 1, sizeof *s->rids);
	s->m.kv_ids = true;
	for (int i = 0; i < s->n_lanes; i++) {
		struct lane *in = &s->lanes[i];
		struct lane_ids *li = in->dids = xcalloc(1, sizeof *li);
		li->ref = xcalloc((size_t)in->kv->ids->n + 1, sizeof *li->ref);
		idset_init(&li->set, (int64_t)in->kv->ids->n + 1);
	}
}

void kv_ids_release(struct sim *s)
{
	for (int k = 0; k < s->n_pools; k++) {
		struct kvids *d = s->pools[k].ids;
		if (!d)
			continue;
		free(d->fifo);
		free(d->fwd);
		free(d->bwd);
		idset_release(&d->used);
		idset_release(&d->freeset);
		for (int32_t e = 0; e < d->npcl; e++)
			free(d->pcl[e].v);
		free(d->pcl);
		free(d);
		s->pools[k].ids = NULL;
	}
	if (s->rids)
		for (size_t i = 0; i < s->n; i++)
			free(s->rids[i].v);
	free(s->rids);
	s->rids = NULL;
	for (int i = 0; i < s->n_lanes; i++) {
		struct lane_ids *li = s->lanes[i].dids;
		if (!li)
			continue;
		free(li->ref);
		idset_release(&li->set);
		free(li);
		s->lanes[i].dids = NULL;
	}
}

void kv_ids_take_(struct sim *s, struct kvpool *kv, int32_t id, int32_t nb)
{
	struct kvids *d = kv->ids;
	if (d->len < nb)
		BUG("free block queue holds %lld ids, %d taken", (long long)d->len, nb);
	for (int32_t i = 0; i < nb; i++) {
		int32_t l = d->fifo[d->head];
		d->head = (d->head + 1) % d->n;
		d->len--;
		bl_push(&s->rids[id], l);
		mark(d, phys(d, l), true);
	}
}

void kv_ids_free_request(struct sim *s, struct kvpool *kv, int32_t id)
{
	struct kvids *d = kv->ids;
	if (!d)
		return;
	struct blist *b = &s->rids[id];
	for (int32_t i = b->n - 1; i >= 0; i--) {
		mark(d, phys(d, b->v[i]), false);
		fifo_push(d, b->v[i]);
	}
	b->n = 0;
}

void kv_ids_entry_use(struct kvpool *kv, int32_t e, bool used)
{
	struct kvids *d = kv->ids;
	if (!d)
		return;
	const struct blist *b = &d->pcl[e];
	for (int32_t i = 0; i < b->n; i++)
		mark(d, phys(d, b->v[i]), used);
}

void kv_ids_entry_evict(struct kvpool *kv, int32_t e, int32_t n)
{
	struct kvids *d = kv->ids;
	if (!d)
		return;
	struct blist *b = &d->pcl[e];
	assert(n <= b->n);
	while (n-- > 0)
		fifo_push(d, b->v[--b->n]);
}

void kv_ids_donate(struct sim *s, struct kvpool *kv, int32_t id, int32_t e, int32_t n)
{
	struct kvids *d = kv->ids;
	if (!d)
		return;
	struct blist *r = &s->rids[id], *b = &d->pcl[e];
	assert(b->n == 0 && n <= r->n);
	for (int32_t i = 0; i < n; i++)
		bl_push(b, r->v[i]);
	r->n -= n;
	for (int32_t i = 0; i < r->n; i++)
		r->v[i] = r->v[i + n];
}

void kv_ids_preempt(struct sim *s, struct kvpool *kv, int32_t id, int32_t e, int32_t kept)
{
	struct kvids *d = kv->ids;
	if (!d)
		return;
	struct blist *r = &s->rids[id], *b = &d->pcl[e];
	assert(b->n == 0 && kept <= r->n);
	for (int32_t i = r->n - 1; i >= kept; i--) {
		mark(d, phys(d, r->v[i]), false);
		fifo_push(d, r->v[i]);
	}
	for (int32_t i = 0; i < kept; i++) {
		bl_push(b, r->v[i]);
		mark(d, phys(d, r->v[i]), false);
	}
	r->n = 0;
}

void kv_ids_resume(struct sim *s, struct kvpool *kv, int32_t id, int32_t e, int32_t from,
		   int32_t own)
{
	struct kvids *d = kv->ids;
	if (!d)
		return;
	struct blist *b = &d->pcl[e];
	for (int32_t i = 0; i < b->n; i++) {
		if (i >= from && i < from + own) {
			bl_push(&s->rids[id], b->v[i]);
			mark(d, phys(d, b->v[i]), true);
		} else {
			fifo_push(d, b->v[i]);
		}
	}
	b->n = 0;
}

/* ---- the decode batch's ids -------------------------------------------------------------- */

static void lane_ref(struct lane_ids *li, int32_t p, int sign)
{
	if (sign > 0) {
		if (li->ref[p]++ == 0) {
			idset_insert(&li->set, p);
			li->distinct++;
		}
	} else if (--li->ref[p] == 0) {
		idset_erase(&li->set, p);
		li->distinct--;
	}
}

void kv_ids_decode_(struct sim *s, struct lane *in, int32_t id, int sign, int32_t from)
{
	struct lane_ids *li = in->dids;
	const struct kvids *d = in->kv->ids;
	const struct req *r = &s->r[id];
	const struct blist *b = &s->rids[id];
	for (int32_t i = from; i < b->n; i++)
		lane_ref(li, phys(d, b->v[i]), sign);
	if (from == 0 && r->shared) {
		const struct blist *g = &d->pcl[s->spec[id].prefix_group];
		for (int32_t i = 0; i < r->shared; i++)
			lane_ref(li, phys(d, g->v[i]), sign);
	}
}

int32_t kv_decode_span(struct lane *in)
{
	in->step_span = idset_max(&in->dids->set) + 1;
	in->step_distinct = in->dids->distinct;
	return (int32_t)in->step_span;
}

int64_t kv_max_id(const struct kvpool *kv)
{
	if (!kv->ids)
		return 0;
	int64_t m = idset_max(&kv->ids->used);
	return m > 0 ? m : 0;
}

/* ---- the online defragmenter ------------------------------------------------------------- */

/* Swaps the content and the mapping of physical ids H (used) and L (free), as
 * OnlineDefragmenter.defragment does for each pair, in every lane's decode set. */
static void swap_ids(struct sim *s, struct lane *in, int32_t h, int32_t l)
{
	struct kvids *d = in->kv->ids;
	int32_t a = d->bwd[h], b = d->bwd[l];
	d->fwd[a] = l;
	d->fwd[b] = h;
	d->bwd[l] = a;
	d->bwd[h] = b;
	mark(d, h, false);
	mark(d, l, true);
	const struct instance *g = in->owner;
	for (int i = 0; i < g->lanes; i++) {
		struct lane *o = &s->lanes[g->first + i];
		struct lane_ids *li = o->dids;
		if (o->kv != in->kv || !li->ref[h])
			continue;
		li->ref[l] = li->ref[h];
		li->ref[h] = 0;
		idset_erase(&li->set, h);
		idset_insert(&li->set, l);
	}
}

/* defragmentation.py: to_swap_pad_thresholds. */
static const int32_t swap_pads[] = {8, 16, 32, 64, 128, 256, 512};
#define SWAPS_MAX 512

int64_t kv_defrag_(struct sim *s, struct lane *in)
{
	struct kvids *d = in->kv->ids;
	in->step_swaps = 0;
	int64_t max_used = idset_max(&d->used);
	if (max_used < 0 || max_used - s->p.defrag_threshold <= in->kv->used)
		return 0;
	int32_t n = 0;
	while (n < SWAPS_MAX) {
		int64_t h = idset_max(&d->used), l = idset_next(&d->freeset, 1);
		if (l < 0 || l > h)
			break;
		swap_ids(s, in, (int32_t)h, (int32_t)l);
		n++;
	}
	if (!n)
		BUG("defragmenter triggered without a free id below the highest used one");
	int32_t pad = SWAPS_MAX;
	for (size_t i = 0; i < sizeof swap_pads / sizeof *swap_pads; i++)
		if (swap_pads[i] >= n) {
			pad = swap_pads[i];
			break;
		}
	int64_t ns = s->costs.kv_swap ? s->costs.kv_swap(s->costs.ctx, pad, in->owner->stages)
				      : 0;
	in->step_swaps = n;
	s->m.defrag_steps++;
	s->m.defrag_swaps += n;
	s->m.defrag_padded_swaps += pad;
	s->m.defrag_ns += ns;
	return ns;
}
