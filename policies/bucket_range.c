/*
 * bucket_range: the one-dimensional range generators of vLLM-Gaudi bucketing, the vector
 * helpers and the fallback rounding.  Floating-point steps follow the reference exactly: the
 * exponent is computed as (1.0/(n-1))*i in IEEE double and rounded with ceil, as upstream does
 * with numpy; see bucket_int.h for the contract of each function.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "policies/bucket_int.h"

void ivec_push(struct ivec *r, int64_t x)
{
	if (r->n == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 16;
		r->v = xrealloc(r->v, r->cap * sizeof *r->v);
	}
	r->v[r->n++] = x;
}

void ivec_reserve(struct ivec *r, size_t n)
{
	if (n > r->cap) {
		r->cap = n;
		r->v = xrealloc(r->v, r->cap * sizeof *r->v);
	}
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

void ivec_sort_unique(struct ivec *r)
{
	if (!r->n)
		return;
	/* Sorted already (most generators push in order, but for a value or two): no sort. */
	size_t s = 1;
	while (s < r->n && r->v[s - 1] <= r->v[s])
		s++;
	if (s < r->n)
		qsort(r->v, r->n, sizeof *r->v, cmp_i64);
	size_t k = 1;
	for (size_t i = 1; i < r->n; i++)
		if (r->v[i] != r->v[k - 1])
			r->v[k++] = r->v[i];
	r->n = k;
}

void ivec_free(struct ivec *r)
{
	free(r->v);
	memset(r, 0, sizeof *r);
}

bool ivec_has(const struct ivec *r, int64_t x)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->v[i] == x)
			return true;
	return false;
}

int64_t ivec_max(const struct ivec *r)
{
	int64_t m = INT64_MIN;
	for (size_t i = 0; i < r->n; i++)
		if (r->v[i] > m)
			m = r->v[i];
	return m;
}

int64_t bucket_ceil_log2(int64_t x)
{
	int64_t k = 0;
	while (k < 62 && ((int64_t)1 << k) < x)
		k++;
	return k;
}

int64_t bucket_ceil_div(int64_t a, int64_t b)
{
	int64_t q = a / b;
	return (a % b != 0 && ((a < 0) == (b < 0))) ? q + 1 : q;
}

void brange_exp(struct ivec *out, int64_t bmin, int64_t bstep, int64_t bmax, int64_t n,
		bool contiguous_pa)
{
	bool has_extra = false;
	int64_t extra = 0;
	if (bmin == 0 || bmin == 1) {
		has_extra = true;
		extra = bmin;
		bmin = bstep;
	}
	if (n <= 1) {
		ivec_push(out, bmax);
		return;
	}
	struct ivec s = {0};
	double ratio = (double)bmax / (double)bmin;
	for (int64_t i = 0; i < n; i++) {
		double v = (double)bmin * pow(ratio, (1.0 / (double)(n - 1)) * (double)i);
		int64_t b = (i == n - 1 && contiguous_pa) ? bmax
			: (int64_t)ceil(v / (double)bstep) * bstep;
		ivec_push(&s, b);
	}
	if (has_extra)
		ivec_push(&s, extra);
	ivec_sort_unique(&s);
	if (s.v[s.n - 1] > bmax)
		s.v[s.n - 1] = bmax;
	for (size_t i = 0; i < s.n; i++)
		ivec_push(out, s.v[i]);
	ivec_free(&s);
}

/* Closest candidate bmin + k*bstep (0 <= k < m) to V not yet in TAKEN; ties go to the smaller
 * value.  Returns false when every candidate is taken. */
static bool closest_unused(const struct ivec *taken, int64_t bmin, int64_t bstep, int64_t m,
			   double v, int64_t *out)
{
	int64_t k0 = (int64_t)floor((v - (double)bmin) / (double)bstep);
	int64_t lo = k0, hi = k0 + 1;
	if (lo >= m) {
		lo = m - 1;
		hi = m;
	}
	if (hi < 0) {
		lo = -1;
		hi = 0;
	}
	while (lo >= 0 || hi < m) {
		bool use_lo;
		if (lo < 0)
			use_lo = false;
		else if (hi >= m)
			use_lo = true;
		else
			use_lo = fabs((double)(bmin + lo * bstep) - v) <=
				 fabs((double)(bmin + hi * bstep) - v);
		int64_t x = bmin + (use_lo ? lo : hi) * bstep;
		if (!ivec_has(taken, x)) {
			*out = x;
			return true;
		}
		if (use_lo)
			lo--;
		else
			hi++;
	}
	return false;
}

void brange_exp_fill(struct ivec *out, int64_t bmin, int64_t bstep, int64_t bmax, int64_t n,
		     bool contiguous_pa)
{
	if (n <= 1) {
		ivec_push(out, bmax);
		return;
	}
	int64_t m = bmax >= bmin ? (bmax - bmin) / bstep + 1 : 0;   /* np.arange(bmin, bmax+1, bstep) */
	struct ivec s = {0};
	double ratio = (double)bmax / (double)bmin;
	for (int64_t i = 0; i < n; i++) {
		double v = (double)bmin * pow(ratio, (1.0 / (double)(n - 1)) * (double)i);
		int64_t b = (i == n - 1 && contiguous_pa) ? bmax
			: (int64_t)ceil(v / (double)bstep) * bstep;
		if (ivec_has(&s, b)) {
			int64_t nb;
			if (!closest_unused(&s, bmin, bstep, m, v, &nb))
				break;
			ivec_push(&s, nb);
		} else {
			ivec_push(&s, b);
		}
	}
	ivec_sort_unique(&s);
	for (size_t i = 0; i < s.n; i++)
		ivec_push(out, s.v[i]);
	ivec_free(&s);
}

int brange_lin(struct ivec *out, int64_t bmin, int64_t bstep, int64_t bmax, bool head_zero)
{
	/* upstream linear.warmup_range asserts min <= max on the given minimum, before the 0
	 * case replaces it by the step: (0, 13, 1) is valid and gives [0] */
	if (bstep < 1 || bmin > bmax)
		return -1;
	bool add0 = false;
	if (bmin == 0 && head_zero) {
		if (bmax == 0) {
			ivec_push(out, 0);
			return 0;
		}
		add0 = true;
		bmin = bstep;
	}
	if (bmin < 1)
		return -1;
	/* The values come out ascending and distinct, so they are appended as they are made:
	 * 0 (for a zero minimum), the doubling ramp from bmin below the step, then the multiples
	 * of the step from the first one >= bmin (all above the ramp).  The multiples loop starts
	 * there rather than at the step, so a large minimum costs nothing. */
	int64_t first = bucket_ceil_div(bmin, bstep) * bstep;
	size_t nmul = first <= bmax ? (size_t)((bmax - first) / bstep) + 1 : 0;
	ivec_reserve(out, out->n + nmul + 64 + add0);
	if (add0)
		ivec_push(out, 0);
	for (int64_t x = bmin; x < bstep && x <= bmax; x *= 2)
		ivec_push(out, x);
	for (int64_t x = first; x <= bmax; x += bstep)
		ivec_push(out, x);
	return 0;
}

int brange_pad(struct ivec *out, int64_t min, int64_t step, int64_t max, int64_t pad_max,
	       int64_t pad_percent)
{
	if (step < 1 || min < 0 || min > max)
		return -1;
	if (pad_max == 0)
		pad_max = max;
	struct ivec s = {0};
	ivec_push(&s, min);
	int64_t cur = min;
	while (cur <= max) {
		int64_t last = s.v[s.n - 1], nxt;
		if (cur <= step) {
			nxt = last * 2;
			if (nxt == 0)
				nxt = 1;
			if (nxt <= max)
				ivec_push(&s, nxt);
		} else {
			nxt = cur + step;
			int64_t pad = nxt - last - 1;
			bool need = (double)pad / (double)nxt > (double)pad_percent / 100.0 ||
				    pad > pad_max || (pad_max != 0 && cur % pad_max == 0);
			if (need && cur != last)
				ivec_push(&s, cur);
		}
		cur = nxt;
	}
	if (s.v[s.n - 1] != max)
		ivec_push(&s, max);
	ivec_sort_unique(&s);
	for (size_t i = 0; i < s.n; i++)
		ivec_push(out, s.v[i]);
	ivec_free(&s);
	return 0;
}

void brange_unified_alpha(struct ivec *out, int64_t min, int64_t max, int64_t tp)
{
	struct ivec s = {0};
	if (min == 0)
		ivec_push(&s, 0);
	int64_t pts[6] = {tp / 4, tp / 2, tp, max / 4, max / 2, max};
	for (int i = 0; i < 6; i++)
		ivec_push(&s, pts[i]);
	ivec_sort_unique(&s);
	for (size_t i = 0; i < s.n; i++)
		ivec_push(out, s.v[i]);
	ivec_free(&s);
}

void brange_unified_last(struct ivec *out, int64_t min, int64_t max, int64_t tp)
{
	struct ivec s = {0};
	int64_t m = min > 1 ? min : 1;
	double ratio = (double)max / (double)m;
	for (int i = 0; i < 10; i++) {
		double v = (double)m * pow(ratio, (1.0 / 9.0) * (double)i);
		ivec_push(&s, i == 9 ? max : (int64_t)ceil(v / (double)tp) * tp);
	}
	if (min == 0)
		ivec_push(&s, 0);
	ivec_sort_unique(&s);
	for (size_t i = 0; i < s.n; i++)
		ivec_push(out, s.v[i]);
	ivec_free(&s);
}

int64_t bucket_fb(int64_t n, int64_t step)
{
	if (n <= 1)
		return n;
	int64_t s = (int64_t)ceil(pow((double)n, 1.0 / 3.0)) * step;
	return bucket_ceil_div(n, s) * s;
}

/* ---- bucket lists ---- */

/* Two members as one unsigned key that orders as the pair of signed values does. */
static uint64_t pair_key(int32_t hi, int32_t lo)
{
	return (uint64_t)((uint32_t)hi ^ 0x80000000u) << 32 | ((uint32_t)lo ^ 0x80000000u);
}

int bshape_cmp(const struct bshape *x, const struct bshape *y)
{
	uint64_t a = pair_key(x->v[0], x->v[1]), b = pair_key(y->v[0], y->v[1]);
	if (a == b) {
		a = pair_key(x->v[2], x->v[3]);
		b = pair_key(y->v[2], y->v[3]);
	}
	return (a > b) - (a < b);
}

static int cmp_shape(const void *a, const void *b) { return bshape_cmp(a, b); }

void blist_reserve(struct blist *l, size_t n)
{
	if (n > l->cap) {
		l->cap = n;
		l->a = xrealloc(l->a, l->cap * sizeof *l->a);
	}
}

void blist_push(struct blist *l, int64_t a, int64_t b, int64_t c, int64_t d)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 64;
		l->a = xrealloc(l->a, l->cap * sizeof *l->a);
	}
	struct bshape *s = &l->a[l->n++];
	s->v[0] = (int32_t)a;
	s->v[1] = (int32_t)b;
	s->v[2] = (int32_t)c;
	s->v[3] = (int32_t)d;
}

void blist_sort_unique(struct blist *l)
{
	if (!l->n)
		return;
	/* One pass drops repeats while the list is in order (the generators' nested loops over
	 * sorted ranges mostly push in order); at the first tuple out of order, the rest is
	 * moved down behind the part kept so far (only repeats were dropped), sorted and
	 * deduplicated whole. */
	size_t k = 1, i = 1;
	for (; i < l->n; i++) {
		int c = bshape_cmp(&l->a[k - 1], &l->a[i]);
		if (c > 0)
			break;
		if (c && k++ != i)
			l->a[k - 1] = l->a[i];
	}
	if (i < l->n) {
		memmove(&l->a[k], &l->a[i], (l->n - i) * sizeof *l->a);
		l->n = k + (l->n - i);
		qsort(l->a, l->n, sizeof *l->a, cmp_shape);
		k = 1;
		for (i = 1; i < l->n; i++)
			if (bshape_cmp(&l->a[i], &l->a[k - 1]))
				l->a[k++] = l->a[i];
	}
	l->n = k;
}

void blist_free(struct blist *l)
{
	free(l->a);
	memset(l, 0, sizeof *l);
}

size_t blist_bisect_left(const struct blist *l, const struct bshape *t)
{
	size_t lo = 0, hi = l->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (bshape_cmp(&l->a[mid], t) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

bool blist_insert_sorted(struct blist *l, const struct bshape *s)
{
	size_t i = blist_bisect_left(l, s);
	if (i < l->n && !bshape_cmp(&l->a[i], s))
		return false;
	blist_push(l, 0, 0, 0, 0);
	memmove(&l->a[i + 1], &l->a[i], (l->n - 1 - i) * sizeof *l->a);
	l->a[i] = *s;
	return true;
}

void blist_print_py(const struct blist *l, int ndim, FILE *out)
{
	fputc('[', out);
	for (size_t i = 0; i < l->n; i++) {
		fputs(i ? ", (" : "(", out);
		for (int d = 0; d < ndim; d++)
			fprintf(out, d ? ", %d" : "%d", (int)l->a[i].v[d]);
		fputc(')', out);
	}
	fputc(']', out);
}
