/*
 * bs_manager: the BucketServe Request Bucketing Manager (Algorithm 1).  See bs_manager.h for
 * the contract and invariants.
 *
 * Layout: a pool of buckets addressed by a stable bucket id (struct bsm_bucket), a sorted array
 * of bucket ids (the bucket index the caller sees), one record per request id (struct
 * bsm_slot) holding its sort key, its bucket id and its position in the bucket's heap,
 * and two Fenwick trees over key lengths (count and sum of the queued keys) that give the
 * Algorithm 1 count |{S < m_b}| and the Eq. 6 threshold in O(log L_max).
 */
#include "policies/bs_manager.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#define NONE32 UINT32_MAX

struct bsm_slot {
	int64_t key;              /* the order's key (bsm_req.key) */
	int64_t arrival_ns;
	uint64_t seq;
	uint32_t len, total;
	uint32_t bucket;          /* bucket id, NONE32 when not queued */
	uint32_t pos;             /* position in the bucket's heap */
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
	struct bsm_heap ord;      /* in the order (key, arrival, insertion) */
};

/* ---------- comparison ---------- */

/* <0 when A arrived before B (ties: inserted first). */
static int cmp_age(const struct bsm_slot *a, const struct bsm_slot *b)
{
	if (a->arrival_ns != b->arrival_ns)
		return a->arrival_ns < b->arrival_ns ? -1 : 1;
	if (a->seq != b->seq)
		return a->seq < b->seq ? -1 : 1;
	return 0;
}

/* <0 when A goes before B: smaller key, then older (never a tie: seq is unique). */
static int cmp_ord(const struct bsm_slot *a, const struct bsm_slot *b)
{
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return cmp_age(a, b);
}

/* ---------- heaps keyed by request id, positions kept in the slot ---------- */

static bool heap_less(const struct bsm *m, uint32_t a, uint32_t b)
{
	return cmp_ord(&m->slot[a], &m->slot[b]) < 0;
}

static void heap_set(struct bsm *m, struct bsm_heap *h, size_t i, uint32_t id)
{
	h->id[i] = id;
	m->slot[id].pos = (uint32_t)i;
}

static void heap_up(struct bsm *m, struct bsm_heap *h, size_t i)
{
	uint32_t id = h->id[i];
	while (i > 0) {
		size_t par = (i - 1) / 2;
		if (!heap_less(m, id, h->id[par]))
			break;
		heap_set(m, h, i, h->id[par]);
		i = par;
	}
	heap_set(m, h, i, id);
}

static void heap_down(struct bsm *m, struct bsm_heap *h, size_t i)
{
	uint32_t id = h->id[i];
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= h->n)
			break;
		if (c + 1 < h->n && heap_less(m, h->id[c + 1], h->id[c]))
			c++;
		if (!heap_less(m, h->id[c], id))
			break;
		heap_set(m, h, i, h->id[c]);
		i = c;
	}
	heap_set(m, h, i, id);
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

static void heap_push(struct bsm *m, struct bsm_heap *h, uint32_t id)
{
	heap_reserve(h, h->n + 1);
	h->n++;
	heap_set(m, h, h->n - 1, id);
	heap_up(m, h, h->n - 1);
}

static void heap_delete(struct bsm *m, struct bsm_heap *h, size_t i)
{
	assert(i < h->n);
	h->n--;
	if (i == h->n)
		return;
	heap_set(m, h, i, h->id[h->n]);
	if (i > 0 && heap_less(m, h->id[i], h->id[(i - 1) / 2]))
		heap_up(m, h, i);
	else
		heap_down(m, h, i);
}

/* Restores the heap property over the whole array (O(n)), stamping positions. */
static void heap_build(struct bsm *m, struct bsm_heap *h)
{
	for (size_t i = 0; i < h->n; i++)
		heap_set(m, h, i, h->id[i]);
	for (size_t i = h->n / 2; i-- > 0;)
		heap_down(m, h, i);
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
	return b;
}

static void bucket_free(struct bsm *m, uint32_t b)
{
	m->bk[b].live = false;
	m->bk[b].ord.n = 0;
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

/* Refills bucket B's heap from ids[0..n) (which may alias nothing in B) and retags them. */
static void bucket_fill(struct bsm *m, uint32_t b, const uint32_t *ids, size_t n)
{
	struct bsm_bucket *bk = &m->bk[b];
	heap_reserve(&bk->ord, n);
	if (n)
		memcpy(bk->ord.id, ids, n * sizeof *ids);
	bk->ord.n = n;
	for (size_t i = 0; i < n; i++)
		m->slot[ids[i]].bucket = b;
	heap_build(m, &bk->ord);
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
	if (p->bounds) {
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
	if (p->bounds) {
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
	}
	free(m->bk);
	free(m->free_bk);
	free(m->sorted);
	free(m->slot);
	free(m->scratch);
	free(m->fw_cnt);
	free(m->fw_sum);
	free(m->bounds_copy);
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
	s->key = r->key;
	s->used = true;
	uint32_t b = m->sorted[bsm_find(m, r->len)];
	s->bucket = b;
	heap_push(m, &m->bk[b].ord, id);
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
	heap_delete(m, &bk->ord, s->pos);
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

int64_t bsm_earliest_bucket(const struct bsm *m)
{
	int64_t best = -1, best_id = -1;
	for (size_t k = 0; k < m->nsorted; k++) {
		int64_t id = bsm_peek(m, k);
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
		if (best_id < 0 || cmp_ord(&m->slot[id], &m->slot[best_id]) < 0) {
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
		tmp[o++] = cmp_ord(&m->slot[ids[j]], &m->slot[ids[i]]) < 0 ? ids[j++] : ids[i++];
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

/* ---------- bucket changes (a grouping's adjust()) ---------- */

bool bsm_merge_all(struct bsm *m)
{
	if (m->nsorted < 2)
		return false;
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
	m->nmerges++;
	return true;
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

void bsm_split(struct bsm *m, size_t k, uint32_t mid)
{
	const struct bsm_bucket *b = bucket_at(m, k);
	if (mid <= b->lo || mid >= b->hi)
		BUG("split of bucket [%u, %u) at %u", b->lo, b->hi, mid);
	sorted_reserve(m, m->nsorted + 1);
	uint32_t r = split_bucket(m, m->sorted[k], mid);
	memmove(m->sorted + k + 2, m->sorted + k + 1, (m->nsorted - k - 1) * sizeof *m->sorted);
	m->sorted[k + 1] = r;
	m->nsorted++;
	sorted_reindex(m);
	m->nsplits++;
}

uint64_t bsm_count_below(const struct bsm *m, uint32_t len)
{
	return fw_count_below(m, len);
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

static bool heap_ok(const struct bsm *m, const struct bsm_heap *h, uint32_t b)
{
	for (size_t i = 0; i < h->n; i++) {
		uint32_t id = h->id[i];
		if ((size_t)id >= m->nslot || m->slot[id].bucket != b)
			return false;
		if (m->slot[id].pos != i)
			return false;
		if (i > 0 && heap_less(m, id, h->id[(i - 1) / 2]))
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
		if (!heap_ok(m, &bk->ord, b))
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
		if (b >= m->nbk || !m->bk[b].live || m->bk[b].ord.id[m->slot[i].pos] != i)
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
