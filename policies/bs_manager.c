/*
 * bs_manager: the BucketServe Request Bucketing Manager (Algorithm 1).  See bs_manager.h for
 * the contract and invariants.
 *
 * Layout: a pool of buckets addressed by a stable bucket id (struct bsm_bucket), a sorted array
 * of bucket ids (the bucket index the caller sees), one record per request id (struct
 * bsm_slot) holding its sort keys, its bucket id and its positions in the bucket's two heaps,
 * and two Fenwick trees over key lengths (count and sum of the queued keys) that give the
 * Algorithm 1 count |{S < m_b}| and the Eq. 6 threshold in O(log L_max).
 */
#include "policies/bs_manager.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#define NONE32 UINT32_MAX

struct bsm_slot {
	int64_t arrival_ns;
	uint64_t seq;
	uint32_t len, total;
	uint32_t bucket;          /* bucket id, NONE32 when not queued */
	uint32_t pos_ord, pos_age;
	uint8_t priority;
	bool used;                /* inserted at least once */
};

struct bsm_heap {
	uint32_t *id;
	size_t n, cap;
};

struct bsm_bucket {
	uint32_t lo, hi;
	uint32_t index;           /* position in m->sorted */
	bool live;
	struct bsm_heap ord;      /* configured order */
	struct bsm_heap age;      /* arrival order (unused when the order is FCFS) */
};

/* ---------- comparisons ---------- */

static int cmp_age(const struct bsm_slot *a, const struct bsm_slot *b)
{
	if (a->arrival_ns != b->arrival_ns)
		return a->arrival_ns < b->arrival_ns ? -1 : 1;
	if (a->seq != b->seq)
		return a->seq < b->seq ? -1 : 1;
	return 0;
}

static int cmp_u32(uint32_t a, uint32_t b)
{
	return a < b ? -1 : a > b ? 1 : 0;
}

/* <0 when A goes before B in order O. */
static int cmp_ord(enum bsm_order o, const struct bsm_slot *a, const struct bsm_slot *b)
{
	int c = 0;
	switch (o) {
	case BSM_FCFS: break;
	case BSM_SJF: c = cmp_u32(a->len, b->len); break;
	case BSM_LJF: c = cmp_u32(b->len, a->len); break;
	case BSM_SJF_TOTAL: c = cmp_u32(a->total, b->total); break;
	case BSM_LJF_TOTAL: c = cmp_u32(b->total, a->total); break;
	case BSM_PRIORITY: c = cmp_u32(a->priority, b->priority); break;
	}
	return c ? c : cmp_age(a, b);
}

static bool two_heaps(const struct bsm *m)
{
	return m->p.order != BSM_FCFS;
}

/* ---------- heaps keyed by request id, positions kept in the slot ---------- */

static bool heap_less(const struct bsm *m, bool age, uint32_t a, uint32_t b)
{
	const struct bsm_slot *sa = &m->slot[a], *sb = &m->slot[b];
	return (age ? cmp_age(sa, sb) : cmp_ord(m->p.order, sa, sb)) < 0;
}

static void heap_set(struct bsm *m, struct bsm_heap *h, bool age, size_t i, uint32_t id)
{
	h->id[i] = id;
	if (age)
		m->slot[id].pos_age = (uint32_t)i;
	else
		m->slot[id].pos_ord = (uint32_t)i;
}

static void heap_up(struct bsm *m, struct bsm_heap *h, bool age, size_t i)
{
	uint32_t id = h->id[i];
	while (i > 0) {
		size_t par = (i - 1) / 2;
		if (!heap_less(m, age, id, h->id[par]))
			break;
		heap_set(m, h, age, i, h->id[par]);
		i = par;
	}
	heap_set(m, h, age, i, id);
}

static void heap_down(struct bsm *m, struct bsm_heap *h, bool age, size_t i)
{
	uint32_t id = h->id[i];
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= h->n)
			break;
		if (c + 1 < h->n && heap_less(m, age, h->id[c + 1], h->id[c]))
			c++;
		if (!heap_less(m, age, h->id[c], id))
			break;
		heap_set(m, h, age, i, h->id[c]);
		i = c;
	}
	heap_set(m, h, age, i, id);
}

static void heap_reserve(struct bsm_heap *h, size_t n)
{
	if (n <= h->cap)
		return;
	size_t cap = h->cap ? h->cap : 16;
	while (cap < n)
		cap *= 2;
	h->id = xrealloc(h->id, cap * sizeof *h->id);
	h->cap = cap;
}

static void heap_push(struct bsm *m, struct bsm_heap *h, bool age, uint32_t id)
{
	heap_reserve(h, h->n + 1);
	h->n++;
	heap_set(m, h, age, h->n - 1, id);
	heap_up(m, h, age, h->n - 1);
}

static void heap_delete(struct bsm *m, struct bsm_heap *h, bool age, size_t i)
{
	assert(i < h->n);
	h->n--;
	if (i == h->n)
		return;
	heap_set(m, h, age, i, h->id[h->n]);
	if (i > 0 && heap_less(m, age, h->id[i], h->id[(i - 1) / 2]))
		heap_up(m, h, age, i);
	else
		heap_down(m, h, age, i);
}

/* Restores the heap property over the whole array (O(n)), stamping positions. */
static void heap_build(struct bsm *m, struct bsm_heap *h, bool age)
{
	for (size_t i = 0; i < h->n; i++)
		heap_set(m, h, age, i, h->id[i]);
	for (size_t i = h->n / 2; i-- > 0;)
		heap_down(m, h, age, i);
}

/* ---------- Fenwick trees over key lengths 0..l_max (1-based inside) ---------- */

static void fw_add(struct bsm *m, uint32_t len, int64_t dc)
{
	for (size_t i = (size_t)len + 1; i <= m->fw_n; i += i & (~i + 1)) {
		m->fw_cnt[i] = (uint32_t)((int64_t)m->fw_cnt[i] + dc);
		m->fw_sum[i] = (uint64_t)((int64_t)m->fw_sum[i] + dc * (int64_t)len);
	}
}

/* Number of queued keys < LEN. */
static uint64_t fw_count_below(const struct bsm *m, uint32_t len)
{
	uint64_t c = 0;
	size_t i = len < m->fw_n ? len : m->fw_n;
	for (; i > 0; i -= i & (~i + 1))
		c += m->fw_cnt[i];
	return c;
}

/* ---------- buckets ---------- */

static uint32_t bucket_new(struct bsm *m, uint32_t lo, uint32_t hi)
{
	uint32_t b;
	if (m->nfree) {
		b = m->free_bk[--m->nfree];
	} else {
		if (m->nbk == m->capbk) {
			m->capbk = m->capbk ? 2 * m->capbk : 8;
			m->bk = xrealloc(m->bk, m->capbk * sizeof *m->bk);
			m->free_bk = xrealloc(m->free_bk, m->capbk * sizeof *m->free_bk);
		}
		b = (uint32_t)m->nbk++;
		memset(&m->bk[b], 0, sizeof m->bk[b]);
	}
	struct bsm_bucket *bk = &m->bk[b];
	bk->lo = lo;
	bk->hi = hi;
	bk->live = true;
	bk->ord.n = 0;
	bk->age.n = 0;
	return b;
}

static void bucket_free(struct bsm *m, uint32_t b)
{
	m->bk[b].live = false;
	m->bk[b].ord.n = m->bk[b].age.n = 0;
	m->free_bk[m->nfree++] = b;
}

static void sorted_reserve(struct bsm *m, size_t n)
{
	if (n <= m->capsorted)
		return;
	size_t cap = m->capsorted ? m->capsorted : 8;
	while (cap < n)
		cap *= 2;
	m->sorted = xrealloc(m->sorted, cap * sizeof *m->sorted);
	m->capsorted = cap;
}

static void sorted_reindex(struct bsm *m)
{
	for (size_t k = 0; k < m->nsorted; k++)
		m->bk[m->sorted[k]].index = (uint32_t)k;
}

static void scratch_reserve(struct bsm *m, size_t n)
{
	if (n <= m->capscratch)
		return;
	size_t cap = m->capscratch ? m->capscratch : 64;
	while (cap < n)
		cap *= 2;
	m->scratch = xrealloc(m->scratch, cap * sizeof *m->scratch);
	m->capscratch = cap;
}

/* Refills bucket B's heaps from ids[0..n) (which may alias nothing in B) and retags them. */
static void bucket_fill(struct bsm *m, uint32_t b, const uint32_t *ids, size_t n)
{
	struct bsm_bucket *bk = &m->bk[b];
	heap_reserve(&bk->ord, n);
	if (n)
		memcpy(bk->ord.id, ids, n * sizeof *ids);
	bk->ord.n = n;
	for (size_t i = 0; i < n; i++)
		m->slot[ids[i]].bucket = b;
	heap_build(m, &bk->ord, false);
	if (two_heaps(m)) {
		heap_reserve(&bk->age, n);
		if (n)
			memcpy(bk->age.id, ids, n * sizeof *ids);
		bk->age.n = n;
		heap_build(m, &bk->age, true);
	}
}

/* ---------- parsing ---------- */

int bsm_parse_bounds(const char *text, uint32_t l_max, const char *field, uint32_t **out,
		     size_t *n, struct bs_err *err)
{
	*out = NULL;
	*n = 0;
	if (!text || !*text)
		return bs_errf(err, BS_EXIT_INPUT, NULL, 0, field, "expected a list like '0,256,max'");
	size_t cap = 8, cnt = 0;
	uint32_t *v = xmalloc(cap * sizeof *v);
	const char *s = text;
	for (;;) {
		const char *e = strchr(s, ',');
		size_t len = e ? (size_t)(e - s) : strlen(s);
		char tok[32], why[96];
		if (len == 0 || len >= sizeof tok) {
			free(v);
			return bs_errf(err, BS_EXIT_INPUT, NULL, 0, field,
				       "expected a comma-separated list of token counts, got '%s'", text);
		}
		memcpy(tok, s, len);
		tok[len] = '\0';
		int64_t x;
		if (strcmp(tok, "max") == 0) {
			x = l_max;
		} else if (parse_i64(tok, 0, l_max, &x, why, sizeof why) < 0) {
			free(v);
			return bs_errf(err, BS_EXIT_INPUT, NULL, 0, field, "%s (L_max is %u)", why,
				       l_max);
		}
		if (cnt && (uint32_t)x <= v[cnt - 1]) {
			free(v);
			return bs_errf(err, BS_EXIT_INPUT, NULL, 0, field,
				       "boundaries must increase strictly, got '%s'", text);
		}
		if (cnt == cap)
			v = xrealloc(v, (cap *= 2) * sizeof *v);
		v[cnt++] = (uint32_t)x;
		if (!e)
			break;
		s = e + 1;
	}
	if (v[0] != 0 || v[cnt - 1] != l_max || cnt < 2) {
		free(v);
		return bs_errf(err, BS_EXIT_INPUT, NULL, 0, field,
			       "boundaries must start at 0 and end at L_max (%u or 'max'), got '%s'",
			       l_max, text);
	}
	*out = v;
	*n = cnt;
	return 0;
}

/* ---------- lifecycle ---------- */

int bsm_init(struct bsm *m, const struct bsm_params *p, struct bs_err *err)
{
	memset(m, 0, sizeof *m);
	if (p->l_max < 1 || p->l_max > BSM_LMAX_LIMIT)
		return bs_errf(err, BS_EXIT_INPUT, NULL, 0, "scheduler.l_max",
			       "expected 1..%u tokens, got %u", BSM_LMAX_LIMIT, p->l_max);
	if (!(p->theta >= 0 && p->theta < 1))
		return bs_errf(err, BS_EXIT_INPUT, NULL, 0, "scheduler.theta",
			       "expected a value in [0, 1), got %g", p->theta);
	if ((unsigned)p->order > BSM_PRIORITY)
		BUG("bad order %d", (int)p->order);
	if (p->grouping == BSM_GROUP_FIXED) {
		if (p->nbounds < 2 || !p->bounds || p->bounds[0] != 0 ||
		    p->bounds[p->nbounds - 1] != p->l_max)
			return bs_errf(err, BS_EXIT_INPUT, NULL, 0, "scheduler.boundaries",
				       "boundaries must start at 0 and end at L_max (%u)", p->l_max);
		for (size_t i = 1; i < p->nbounds; i++)
			if (p->bounds[i] <= p->bounds[i - 1])
				return bs_errf(err, BS_EXIT_INPUT, NULL, 0, "scheduler.boundaries",
					       "boundaries must increase strictly");
	}
	m->p = *p;
	m->p.bounds = NULL;
	m->p.nbounds = 0;
	m->fw_n = (size_t)p->l_max + 1;
	m->fw_cnt = xcalloc(m->fw_n + 1, sizeof *m->fw_cnt);
	m->fw_sum = xcalloc(m->fw_n + 1, sizeof *m->fw_sum);
	if (p->grouping == BSM_GROUP_FIXED) {
		m->bounds_copy = xmalloc(p->nbounds * sizeof *m->bounds_copy);
		memcpy(m->bounds_copy, p->bounds, p->nbounds * sizeof *p->bounds);
		m->p.bounds = m->bounds_copy;
		m->p.nbounds = p->nbounds;
		sorted_reserve(m, p->nbounds - 1);
		for (size_t i = 0; i + 1 < p->nbounds; i++)
			m->sorted[m->nsorted++] = bucket_new(m, p->bounds[i], p->bounds[i + 1]);
	} else {
		sorted_reserve(m, 1);
		m->sorted[m->nsorted++] = bucket_new(m, 0, p->l_max);
	}
	sorted_reindex(m);
	return 0;
}

void bsm_release(struct bsm *m)
{
	for (size_t b = 0; b < m->nbk; b++) {
		free(m->bk[b].ord.id);
		free(m->bk[b].age.id);
	}
	free(m->bk);
	free(m->free_bk);
	free(m->sorted);
	free(m->slot);
	free(m->scratch);
	free(m->fw_cnt);
	free(m->fw_sum);
	free(m->bounds_copy);
	free(m->work);
	free(m->split);
	memset(m, 0, sizeof *m);
}

void bsm_reserve(struct bsm *m, size_t n_ids)
{
	if (n_ids <= m->nslot)
		return;
	m->slot = xrealloc(m->slot, n_ids * sizeof *m->slot);
	memset(m->slot + m->nslot, 0, (n_ids - m->nslot) * sizeof *m->slot);
	for (size_t i = m->nslot; i < n_ids; i++)
		m->slot[i].bucket = NONE32;
	m->nslot = n_ids;
}

/* ---------- queue operations ---------- */

size_t bsm_find(const struct bsm *m, uint32_t len)
{
	assert(len <= m->p.l_max);
	size_t lo = 0, hi = m->nsorted; /* last bucket with lo <= len */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->bk[m->sorted[mid]].lo <= len)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

int bsm_insert(struct bsm *m, uint32_t id, const struct bsm_req *r, struct bs_err *err)
{
	if (r->len > m->p.l_max)
		return bs_errf(err, BS_EXIT_INPUT, NULL, 0, "prompt_tokens",
			       "request %u has %u tokens, above L_max %u", id, r->len, m->p.l_max);
	if (id == NONE32)
		BUG("request id %u out of range", id);
	if ((size_t)id >= m->nslot) {
		size_t n = m->nslot ? m->nslot : 64;
		while (n <= id)
			n *= 2;
		bsm_reserve(m, n);
	}
	struct bsm_slot *s = &m->slot[id];
	if (s->bucket != NONE32)
		BUG("request %u queued twice", id);
	s->arrival_ns = r->arrival_ns;
	s->seq = m->seq++;
	s->len = r->len;
	s->total = r->total;
	s->priority = r->priority;
	s->used = true;
	uint32_t b = m->sorted[bsm_find(m, r->len)];
	s->bucket = b;
	heap_push(m, &m->bk[b].ord, false, id);
	if (two_heaps(m))
		heap_push(m, &m->bk[b].age, true, id);
	fw_add(m, r->len, 1);
	m->total++;
	m->total_len += r->len;
	return 0;
}

void bsm_remove(struct bsm *m, uint32_t id)
{
	if ((size_t)id >= m->nslot || m->slot[id].bucket == NONE32)
		BUG("request %u removed but not queued", id);
	struct bsm_slot *s = &m->slot[id];
	struct bsm_bucket *bk = &m->bk[s->bucket];
	heap_delete(m, &bk->ord, false, s->pos_ord);
	if (two_heaps(m))
		heap_delete(m, &bk->age, true, s->pos_age);
	s->bucket = NONE32;
	fw_add(m, s->len, -1);
	m->total--;
	m->total_len -= s->len;
}

bool bsm_queued(const struct bsm *m, uint32_t id)
{
	return (size_t)id < m->nslot && m->slot[id].bucket != NONE32;
}

uint32_t bsm_len(const struct bsm *m, uint32_t id)
{
	assert((size_t)id < m->nslot && m->slot[id].used);
	return m->slot[id].len;
}

uint32_t bsm_total_len(const struct bsm *m, uint32_t id)
{
	assert((size_t)id < m->nslot && m->slot[id].used);
	return m->slot[id].total;
}

size_t bsm_total(const struct bsm *m)
{
	return m->total;
}

size_t bsm_nbuckets(const struct bsm *m)
{
	return m->nsorted;
}

size_t bsm_bucket_of(const struct bsm *m, uint32_t id)
{
	if (!bsm_queued(m, id))
		BUG("request %u is not queued", id);
	return m->bk[m->slot[id].bucket].index;
}

static const struct bsm_bucket *bucket_at(const struct bsm *m, size_t k)
{
	if (k >= m->nsorted)
		BUG("bucket index %zu of %zu", k, m->nsorted);
	return &m->bk[m->sorted[k]];
}

void bsm_bucket_range(const struct bsm *m, size_t k, uint32_t *lo, uint32_t *hi)
{
	const struct bsm_bucket *b = bucket_at(m, k);
	*lo = b->lo;
	*hi = b->hi;
}

size_t bsm_bucket_count(const struct bsm *m, size_t k)
{
	return bucket_at(m, k)->ord.n;
}

size_t bsm_boundaries(const struct bsm *m, uint32_t *out, size_t cap)
{
	for (size_t k = 0; k < m->nsorted && k < cap; k++)
		out[k] = m->bk[m->sorted[k]].lo;
	if (m->nsorted < cap)
		out[m->nsorted] = m->p.l_max;
	return m->nsorted + 1;
}

int64_t bsm_peek(const struct bsm *m, size_t k)
{
	const struct bsm_bucket *b = bucket_at(m, k);
	return b->ord.n ? (int64_t)b->ord.id[0] : -1;
}

int64_t bsm_pop(struct bsm *m, size_t k)
{
	int64_t id = bsm_peek(m, k);
	if (id >= 0)
		bsm_remove(m, (uint32_t)id);
	return id;
}

int64_t bsm_oldest(const struct bsm *m, size_t k)
{
	const struct bsm_bucket *b = bucket_at(m, k);
	const struct bsm_heap *h = two_heaps(m) ? &b->age : &b->ord;
	return h->n ? (int64_t)h->id[0] : -1;
}

int64_t bsm_earliest_bucket(const struct bsm *m)
{
	int64_t best = -1, best_id = -1;
	for (size_t k = 0; k < m->nsorted; k++) {
		int64_t id = bsm_oldest(m, k);
		if (id < 0)
			continue;
		if (best_id < 0 || cmp_age(&m->slot[id], &m->slot[best_id]) < 0) {
			best = (int64_t)k;
			best_id = id;
		}
	}
	return best;
}

int64_t bsm_best_bucket(const struct bsm *m)
{
	int64_t best = -1, best_id = -1;
	for (size_t k = 0; k < m->nsorted; k++) {
		int64_t id = bsm_peek(m, k);
		if (id < 0)
			continue;
		if (best_id < 0 || cmp_ord(m->p.order, &m->slot[id], &m->slot[best_id]) < 0) {
			best = (int64_t)k;
			best_id = id;
		}
	}
	return best;
}

/* Stable merge sort of ids[0..n) in the configured order, using tmp[0..n). */
static void sort_ids(const struct bsm *m, uint32_t *ids, uint32_t *tmp, size_t n)
{
	if (n < 2)
		return;
	size_t h = n / 2;
	sort_ids(m, ids, tmp, h);
	sort_ids(m, ids + h, tmp, n - h);
	size_t i = 0, j = h, o = 0;
	while (i < h && j < n)
		tmp[o++] = cmp_ord(m->p.order, &m->slot[ids[j]], &m->slot[ids[i]]) < 0 ? ids[j++]
										      : ids[i++];
	while (i < h)
		tmp[o++] = ids[i++];
	while (j < n)
		tmp[o++] = ids[j++];
	memcpy(ids, tmp, n * sizeof *ids);
}

size_t bsm_bucket_ids(const struct bsm *m, size_t k, uint32_t *out, size_t cap)
{
	const struct bsm_bucket *b = bucket_at(m, k);
	size_t n = b->ord.n;
	uint32_t *tmp = xmalloc((2 * n + 1) * sizeof *tmp);
	if (n)
		memcpy(tmp, b->ord.id, n * sizeof *tmp);
	sort_ids(m, tmp, tmp + n, n);
	if (n && cap)
		memcpy(out, tmp, (n < cap ? n : cap) * sizeof *tmp);
	free(tmp);
	return n;
}

/* ---------- Algorithm 1: AdjustBuckets ---------- */

static void merge_all(struct bsm *m)
{
	scratch_reserve(m, m->total);
	size_t n = 0;
	for (size_t k = 0; k < m->nsorted; k++) {
		const struct bsm_bucket *b = &m->bk[m->sorted[k]];
		if (b->ord.n)
			memcpy(m->scratch + n, b->ord.id, b->ord.n * sizeof *m->scratch);
		n += b->ord.n;
	}
	assert(n == m->total);
	uint32_t keep = m->sorted[0];
	for (size_t k = 1; k < m->nsorted; k++)
		bucket_free(m, m->sorted[k]);
	m->bk[keep].lo = 0;
	m->bk[keep].hi = m->p.l_max;
	m->nsorted = 1;
	bucket_fill(m, keep, m->scratch, n);
	sorted_reindex(m);
}

/* Splits bucket id B at MID; returns the id of the new right bucket [MID, hi). */
static uint32_t split_bucket(struct bsm *m, uint32_t b, uint32_t mid)
{
	uint32_t r = bucket_new(m, mid, m->bk[b].hi); /* may move m->bk */
	struct bsm_bucket *bk = &m->bk[b];
	size_t n = bk->ord.n;
	scratch_reserve(m, n);
	size_t nl = 0, nr = n;
	for (size_t i = 0; i < n; i++) { /* left from the front, right from the back */
		uint32_t id = bk->ord.id[i];
		if (m->slot[id].len < mid)
			m->scratch[nl++] = id;
		else
			m->scratch[--nr] = id;
	}
	bk->hi = mid;
	bucket_fill(m, b, m->scratch, nl);
	bucket_fill(m, r, m->scratch + nr, n - nr);
	return r;
}

void bsm_adjust(struct bsm *m, uint64_t n_max, struct bsm_adjust_result *res)
{
	struct bsm_adjust_result dummy;
	if (!res)
		res = &dummy;
	res->splits = 0;
	res->merged = false;
	if (m->p.grouping != BSM_GROUP_ADAPTIVE)
		return;
	if ((uint64_t)m->total < n_max) { /* lines 11-13 */
		if (m->nsorted > 1) {
			merge_all(m);
			res->merged = true;
			m->nmerges++;
		}
		return;
	}
	/* Lines 15-20: decide on the buckets as they are, then split (lines 21-27): one pass. */
	size_t nold = m->nsorted;
	if (nold > m->capwork) {
		m->capwork = 2 * nold;
		m->work = xrealloc(m->work, m->capwork * sizeof *m->work);
		m->split = xrealloc(m->split, m->capwork * sizeof *m->split);
	}
	uint32_t *old = m->work;
	uint8_t *split = m->split;
	size_t nsplit = 0;
	for (size_t k = 0; k < nold; k++) {
		const struct bsm_bucket *b = &m->bk[m->sorted[k]];
		split[k] = 0;
		uint64_t cnt = b->ord.n;
		if (b->hi - b->lo < 2 || cnt <= n_max || cnt == 0)
			continue;
		uint32_t mid = b->lo + (b->hi - b->lo + 1) / 2;
		uint64_t cs = fw_count_below(m, mid) - fw_count_below(m, b->lo);
		if ((double)cs > m->p.theta * (double)cnt) {
			split[k] = 1;
			nsplit++;
		}
	}
	if (nsplit) {
		memcpy(old, m->sorted, nold * sizeof *old);
		sorted_reserve(m, nold + nsplit);
		size_t j = 0;
		for (size_t k = 0; k < nold; k++) {
			uint32_t b = old[k];
			m->sorted[j++] = b;
			if (split[k]) {
				uint32_t mid = m->bk[b].lo + (m->bk[b].hi - m->bk[b].lo + 1) / 2;
				m->sorted[j++] = split_bucket(m, b, mid);
			}
		}
		m->nsorted = j;
		sorted_reindex(m);
	}
	res->splits = nsplit;
	m->nsplits += nsplit;
}

uint64_t bsm_nsplits(const struct bsm *m)
{
	return m->nsplits;
}

uint64_t bsm_nmerges(const struct bsm *m)
{
	return m->nmerges;
}

/* ---------- Eq. 6 over the queue ---------- */

uint64_t bsm_nmax_auto(const struct bsm *m, uint64_t budget_tokens)
{
	if (m->total == 0 || m->total_len == 0)
		return UINT64_MAX;
	if (m->total_len <= budget_tokens) {
		/* The whole queue fits: continue with mean-length sequences. */
		uint64_t room = budget_tokens - m->total_len;
		uint64_t more = room <= UINT64_MAX / m->total
					? room * m->total / m->total_len
					: (uint64_t)((long double)room * m->total / m->total_len);
		return (uint64_t)m->total + more;
	}
	/* Largest prefix of length cells 0..p-1 whose keys all fit (Fenwick descent). */
	size_t pos = 0, step = 1;
	uint64_t cnt = 0, sum = 0;
	while (step * 2 <= m->fw_n)
		step *= 2;
	for (; step; step /= 2) {
		size_t nxt = pos + step;
		if (nxt <= m->fw_n && sum + m->fw_sum[nxt] <= budget_tokens) {
			pos = nxt;
			sum += m->fw_sum[nxt];
			cnt += m->fw_cnt[nxt];
		}
	}
	/* Cells 1..pos fit, i.e. keys 0..pos-1; keys equal to pos fit partly. */
	if (pos < m->fw_n && pos > 0) {
		uint64_t here = fw_count_below(m, (uint32_t)pos + 1) - cnt;
		uint64_t fit = (budget_tokens - sum) / pos;
		cnt += fit < here ? fit : here;
	}
	return cnt;
}

/* ---------- invariants ---------- */

static bool heap_ok(const struct bsm *m, const struct bsm_heap *h, bool age, uint32_t b)
{
	for (size_t i = 0; i < h->n; i++) {
		uint32_t id = h->id[i];
		if ((size_t)id >= m->nslot || m->slot[id].bucket != b)
			return false;
		if ((age ? m->slot[id].pos_age : m->slot[id].pos_ord) != i)
			return false;
		if (i > 0 && heap_less(m, age, id, h->id[(i - 1) / 2]))
			return false;
	}
	return true;
}

bool bsm_check(const struct bsm *m)
{
	if (m->nsorted < 1 || m->bk[m->sorted[0]].lo != 0 ||
	    m->bk[m->sorted[m->nsorted - 1]].hi != m->p.l_max)
		return false;
	size_t sum = 0;
	for (size_t k = 0; k < m->nsorted; k++) {
		uint32_t b = m->sorted[k];
		const struct bsm_bucket *bk = &m->bk[b];
		if (!bk->live || bk->index != k || bk->lo >= bk->hi)
			return false;
		if (k > 0 && m->bk[m->sorted[k - 1]].hi != bk->lo)
			return false;
		if (!heap_ok(m, &bk->ord, false, b))
			return false;
		if (two_heaps(m) && (bk->age.n != bk->ord.n || !heap_ok(m, &bk->age, true, b)))
			return false;
		for (size_t i = 0; i < bk->ord.n; i++) {
			uint32_t len = m->slot[bk->ord.id[i]].len;
			bool last = k + 1 == m->nsorted;
			if (len < bk->lo || (last ? len > bk->hi : len >= bk->hi))
				return false;
		}
		sum += bk->ord.n;
	}
	if (sum != m->total)
		return false;
	size_t queued = 0;
	uint64_t lens = 0;
	for (size_t i = 0; i < m->nslot; i++) {
		uint32_t b = m->slot[i].bucket;
		if (b == NONE32)
			continue;
		if (b >= m->nbk || !m->bk[b].live || m->bk[b].ord.id[m->slot[i].pos_ord] != i)
			return false;
		queued++;
		lens += m->slot[i].len;
	}
	if (queued != m->total || lens != m->total_len)
		return false;
	if (fw_count_below(m, m->p.l_max + 1) != m->total)
		return false;
	return true;
}
