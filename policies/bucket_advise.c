/*
 * bucket_advise: the bucket advisor's optimiser (see bucket_advise.h).
 */
#include "policies/bucket_advise.h"

#include <stdlib.h>
#include <string.h>

/* Most boundary candidates per dimension in one dynamic programme: above it the candidates are
 * spread evenly over the passes' cumulative weight (plus the largest value), and the programme
 * is exact over that subset. */
#define ADV_MAX_CAND 400
/* Passes of coordinate descent over the dimensions, per starting point. */
#define ADV_PASSES 4
/* Up to this many distinct shapes the lower bound tries every pair (below). */
#define ADV_LB_PAIRWISE 2000

void adv_set_free(struct adv_set *s)
{
	for (int d = 0; d < 3; d++)
		ivec_free(&s->val[d]);
}

size_t adv_set_size(const struct adv_set *s)
{
	return s->val[0].n * s->val[1].n * s->val[2].n;
}

static void set_copy(struct adv_set *dst, const struct adv_set *src)
{
	adv_set_free(dst);
	for (int d = 0; d < 3; d++)
		for (size_t i = 0; i < src->val[d].n; i++)
			ivec_push(&dst->val[d], src->val[d].v[i]);
}

/* Index of the first value >= X in R, or R->n. */
static size_t ceil_idx(const struct ivec *r, int64_t x)
{
	size_t lo = 0, hi = r->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (r->v[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int64_t adv_cost_product(int ph, const struct adv_shape *sh, size_t n, const struct adv_set *s,
			 const struct adv_cost *c)
{
	int64_t total = 0;
	for (size_t i = 0; i < n; i++) {
		int32_t pad[3];
		bool covered = true;
		for (int d = 0; d < 3 && covered; d++) {
			size_t k = ceil_idx(&s->val[d], sh[i].v[d]);
			covered = k < s->val[d].n;
			if (covered)
				pad[d] = (int32_t)s->val[d].v[k];
		}
		if (!covered)
			total += c->compile(c->ctx, ph, sh[i].v);
		else
			total += sh[i].w * (c->pass(c->ctx, ph, pad) - c->pass(c->ctx, ph, sh[i].v));
	}
	return total;
}

int64_t adv_cost_list(int ph, const struct adv_shape *sh, size_t n, const struct blist *l,
		      const struct adv_cost *c)
{
	int64_t total = 0;
	for (size_t i = 0; i < n; i++) {
		struct bshape t = {{sh[i].v[0], sh[i].v[1], sh[i].v[2], 0}};
		const struct bshape *hit = NULL;
		for (size_t k = blist_bisect_left(l, &t); k < l->n && !hit; k++)
			if (l->a[k].v[0] >= t.v[0] && l->a[k].v[1] >= t.v[1] && l->a[k].v[2] >= t.v[2])
				hit = &l->a[k];
		if (!hit)
			total += c->compile(c->ctx, ph, sh[i].v);
		else
			total += sh[i].w * (c->pass(c->ctx, ph, hit->v) - c->pass(c->ctx, ph, sh[i].v));
	}
	return total;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

int64_t adv_dp_dim(int ph, const struct adv_shape *sh, size_t n, struct adv_set *s, int d,
		   size_t k, const struct adv_cost *c)
{
	/* The shapes the other dimensions cover, their padded other dimensions (a combination o)
	 * and their value in dimension d. */
	size_t *idx = xcalloc(n + 1, sizeof *idx);
	int64_t *combo = xcalloc(n + 1, sizeof *combo);   /* packed padded other dims */
	int32_t (*pad)[3] = xcalloc(n + 1, sizeof *pad);
	size_t nc = 0;
	int64_t base = 0;   /* compiles of shapes the other dimensions leave uncovered */
	struct ivec xs = {0};
	for (size_t i = 0; i < n; i++) {
		bool covered = true;
		for (int e = 0; e < 3 && covered; e++) {
			if (e == d) {
				pad[i][e] = 0;
				continue;
			}
			size_t q = ceil_idx(&s->val[e], sh[i].v[e]);
			covered = q < s->val[e].n;
			if (covered)
				pad[i][e] = (int32_t)s->val[e].v[q];
		}
		if (!covered) {
			base += c->compile(c->ctx, ph, sh[i].v);
			continue;
		}
		idx[nc++] = i;
		ivec_push(&xs, sh[i].v[d]);
	}
	ivec_sort_unique(&xs);
	size_t m = xs.n;
	if (!m) { /* nothing to place: the smallest list that keeps the dimension */
		ivec_free(&s->val[d]);
		ivec_push(&s->val[d], d == 2 ? 0 : d == 1 && ph == PHASE_PROMPT ? 2 : 1);
		free(idx), free(combo), free(pad);
		ivec_free(&xs);
		return adv_cost_product(ph, sh, n, s, c);
	}
	/* The combinations of the other dimensions. */
	int64_t *keys = xcalloc(nc + 1, sizeof *keys);
	for (size_t j = 0; j < nc; j++) {
		size_t i = idx[j];
		int e0 = d == 0 ? 1 : 0, e1 = d == 2 ? 1 : 2;
		combo[j] = ((int64_t)pad[i][e0] << 32) | (uint32_t)pad[i][e1];
		keys[j] = combo[j];
	}
	qsort(keys, nc, sizeof *keys, cmp_i64);
	size_t no = 0;
	for (size_t j = 0; j < nc; j++)
		if (!no || keys[no - 1] != keys[j])
			keys[no++] = keys[j];
	/* Per value index: weight of each combination (prefix sums over values), the passes' own
	 * time and the compiles of the value's shapes. */
	int64_t *P = xcalloc((m + 1) * no, sizeof *P);
	int64_t *R = xcalloc(m + 1, sizeof *R), *T = xcalloc(m + 1, sizeof *T);
	for (size_t j = 0; j < nc; j++) {
		size_t i = idx[j];
		size_t xv = ceil_idx(&xs, sh[i].v[d]);
		int64_t *f = bsearch(&combo[j], keys, no, sizeof *keys, cmp_i64);
		P[(xv + 1) * no + (size_t)(f - keys)] += sh[i].w;
		R[xv + 1] += sh[i].w * c->pass(c->ctx, ph, sh[i].v);
		T[xv + 1] += c->compile(c->ctx, ph, sh[i].v);
	}
	for (size_t v = 1; v <= m; v++) {
		for (size_t o = 0; o < no; o++)
			P[v * no + o] += P[(v - 1) * no + o];
		R[v] += R[v - 1];
		T[v] += T[v - 1];
	}
	/* Boundary candidates: every value, or ADV_MAX_CAND spread by weight plus the largest. */
	size_t *cand = xcalloc(m + 1, sizeof *cand);
	size_t nca = 0;
	if (m <= ADV_MAX_CAND) {
		for (size_t v = 0; v < m; v++)
			cand[nca++] = v;
	} else {
		int64_t wt = 0, acc;
		for (size_t o = 0; o < no; o++)
			wt += P[m * no + o];
		int64_t next = 1;
		for (size_t v = 0; v < m; v++) {
			acc = 0;
			for (size_t o = 0; o < no; o++)
				acc += P[(v + 1) * no + o];
			if (v == m - 1 || (wt > 0 && acc * (ADV_MAX_CAND - 1) >= wt * next)) {
				cand[nca++] = v;
				while (wt > 0 && acc * (ADV_MAX_CAND - 1) >= wt * next)
					next++;
			}
		}
	}
	/* cost[i] of the passes of values (cand[a], cand[i]] run at value xs[cand[i]]. */
	int64_t *cv = xcalloc(nca * no, sizeof *cv);
	for (size_t i = 0; i < nca; i++)
		for (size_t o = 0; o < no; o++) {
			int32_t v[3];
			int e0 = d == 0 ? 1 : 0, e1 = d == 2 ? 1 : 2;
			v[d] = (int32_t)xs.v[cand[i]];
			v[e0] = (int32_t)(keys[o] >> 32);
			v[e1] = (int32_t)(uint32_t)keys[o];
			cv[i * no + o] = c->pass(c->ctx, ph, v);
		}
	if (k > nca)
		k = nca;
	if (k < 1)
		k = 1;
	/* f[j][i]: least cost of values up to cand[i] with j boundaries, the last at cand[i]. */
	const int64_t INF = INT64_MAX / 4;
	int64_t *f = xcalloc((k + 1) * nca, sizeof *f);
	size_t *from = xcalloc((k + 1) * nca, sizeof *from);
	for (size_t j = 0; j <= k; j++)
		for (size_t i = 0; i < nca; i++)
			f[j * nca + i] = INF;
	for (size_t i = 0; i < nca; i++)
		for (size_t a = 0; a <= i; a++) {
			/* the segment of values up to cand[i] after the boundary before it: a == i
			 * stands for no boundary before (the first segment) */
			size_t lo = a == i ? 0 : cand[a] + 1, hi = cand[i] + 1;
			int64_t seg = -(R[hi] - R[lo]);
			for (size_t o = 0; o < no; o++)
				seg += cv[i * no + o] * (P[hi * no + o] - P[lo * no + o]);
			if (a == i) {
				f[1 * nca + i] = seg;
				from[1 * nca + i] = nca;
				continue;
			}
			for (size_t j = 2; j <= k; j++) {
				int64_t prev = f[(j - 1) * nca + a];
				if (prev < INF && prev + seg < f[j * nca + i]) {
					f[j * nca + i] = prev + seg;
					from[j * nca + i] = a;
				}
			}
		}
	int64_t best = INF;
	size_t bj = 0, bi = 0;
	/* No boundary at an observed value: every shape left to its compile, with the list one
	 * value below them all, when the dimension has such a value (batch size and query from 1,
	 * a prompt's query from 2, context from 0). */
	int64_t vmin = d == 2 ? 0 : d == 1 && ph == PHASE_PROMPT ? 2 : 1;
	bool empty = xs.v[0] - 1 >= vmin && T[m] < INF;
	if (empty)
		best = T[m];
	for (size_t j = 1; j <= k; j++)
		for (size_t i = 0; i < nca; i++) {
			if (f[j * nca + i] >= INF)
				continue;
			int64_t tot = f[j * nca + i] + (T[m] - T[cand[i] + 1]);
			if (tot < best)
				best = tot, bj = j, bi = i;
		}
	ivec_free(&s->val[d]);
	if (!bj)
		ivec_push(&s->val[d], xs.v[0] - 1);
	for (size_t j = bj, i = bi; j >= 1 && i != nca; i = from[j * nca + i], j--)
		ivec_push(&s->val[d], xs.v[cand[i]]);
	ivec_sort_unique(&s->val[d]);
	free(idx), free(combo), free(pad), free(keys), free(P), free(R), free(T), free(cand);
	free(cv), free(f), free(from);
	ivec_free(&xs);
	(void)base;
	return adv_cost_product(ph, sh, n, s, c);
}

/* Distinct observed values of dimension D. */
static void observed(const struct adv_shape *sh, size_t n, int d, struct ivec *out)
{
	for (size_t i = 0; i < n; i++)
		ivec_push(out, sh[i].v[d]);
	ivec_sort_unique(out);
}

/* K values of dimension D spread evenly over the passes' cumulative weight, the largest
 * included. */
static void spread(const struct adv_shape *sh, size_t n, int d, size_t k, struct ivec *out)
{
	struct ivec xs = {0};
	observed(sh, n, d, &xs);
	int64_t *w = xcalloc(xs.n + 1, sizeof *w), tot = 0;
	for (size_t i = 0; i < n; i++)
		w[ceil_idx(&xs, sh[i].v[d])] += sh[i].w;
	for (size_t i = 0; i < xs.n; i++)
		tot += w[i];
	int64_t acc = 0;
	size_t next = 1;
	for (size_t i = 0; i < xs.n; i++) {
		acc += w[i];
		if (i == xs.n - 1 || (tot && (double)acc >= (double)tot * (double)next / (double)k)) {
			ivec_push(out, xs.v[i]);
			while (tot && (double)acc >= (double)tot * (double)next / (double)k)
				next++;
		}
	}
	ivec_sort_unique(out);
	free(w);
	ivec_free(&xs);
}

/* Coordinate descent from S with list sizes K[d]; returns the cost. */
static int64_t descend(int ph, const struct adv_shape *sh, size_t n, struct adv_set *s,
		       const size_t *k, const bool *active, const struct adv_cost *c)
{
	int64_t cur = adv_cost_product(ph, sh, n, s, c);
	for (int pass = 0; pass < ADV_PASSES; pass++) {
		int64_t before = cur;
		for (int d = 0; d < 3; d++) {
			if (!active[d])
				continue;
			struct adv_set trial = {0};
			set_copy(&trial, s);
			int64_t v = adv_dp_dim(ph, sh, n, &trial, d, k[d], c);
			if (v <= cur) {
				set_copy(s, &trial);
				cur = v;
			}
			adv_set_free(&trial);
		}
		if (cur >= before)
			break;
	}
	return cur;
}

int64_t adv_optimise(int ph, const struct adv_shape *sh, size_t n, size_t k,
		     const struct adv_set *init, const struct adv_cost *c, struct adv_set *out)
{
	struct ivec obs[3] = {{0}, {0}, {0}};
	bool active[3];
	int na = 0, ad[3];
	for (int d = 0; d < 3; d++) {
		observed(sh, n, d, &obs[d]);
		active[d] = obs[d].n > 1;
		if (active[d])
			ad[na++] = d;
	}
	int64_t best = INT64_MAX;
	memset(out, 0, sizeof *out);
	/* The splits of K over the active dimensions: the first sizes on a grid (about x1.5), the
	 * last dimension taking what is left. */
	size_t grid[64], ng = 0;
	for (size_t g = 1; g <= k && ng < 64; g = g < 4 ? g + 1 : g + g / 2)
		grid[ng++] = g;
	size_t tries0 = na >= 2 ? ng : 1, tries1 = na >= 3 ? ng : 1;
	for (size_t t0 = 0; t0 < tries0; t0++)
		for (size_t t1 = 0; t1 < tries1; t1++) {
			size_t ks[3] = {1, 1, 1}, rest = k;
			if (na >= 2) {
				ks[ad[0]] = grid[t0] < obs[ad[0]].n ? grid[t0] : obs[ad[0]].n;
				rest /= ks[ad[0]];
			}
			if (na >= 3) {
				ks[ad[1]] = grid[t1] < obs[ad[1]].n ? grid[t1] : obs[ad[1]].n;
				rest /= ks[ad[1]];
			}
			if (na && !rest)
				continue;
			if (na)
				ks[ad[na - 1]] = rest < obs[ad[na - 1]].n ? rest : obs[ad[na - 1]].n;
			struct adv_set s = {0};
			for (int d = 0; d < 3; d++) {
				if (active[d])
					spread(sh, n, d, ks[d], &s.val[d]);
				else
					ivec_push(&s.val[d], obs[d].n ? obs[d].v[0] : 0);
			}
			int64_t v = descend(ph, sh, n, &s, ks, active, c);
			if (v < best) {
				best = v;
				set_copy(out, &s);
			}
			adv_set_free(&s);
		}
	if (init && adv_set_size(init) <= k) {
		struct adv_set s = {0};
		set_copy(&s, init);
		size_t ks[3] = {s.val[0].n, s.val[1].n, s.val[2].n};
		int64_t v = descend(ph, sh, n, &s, ks, active, c);
		if (v < best) {
			best = v;
			set_copy(out, &s);
		}
		adv_set_free(&s);
	}
	for (int d = 0; d < 3; d++)
		ivec_free(&obs[d]);
	return best;
}

void adv_set_list(int ph, const struct adv_set *s, struct blist *out)
{
	(void)ph;
	for (size_t a = 0; a < s->val[0].n; a++)
		for (size_t b = 0; b < s->val[1].n; b++)
			for (size_t d = 0; d < s->val[2].n; d++)
				blist_push(out, s->val[0].v[a], s->val[1].v[b], s->val[2].v[d], 0);
	blist_sort_unique(out);
}

void adv_set_of_list(const struct blist *l, struct adv_set *out)
{
	memset(out, 0, sizeof *out);
	for (size_t i = 0; i < l->n; i++)
		for (int d = 0; d < 3; d++)
			ivec_push(&out->val[d], l->a[i].v[d]);
	for (int d = 0; d < 3; d++)
		ivec_sort_unique(&out->val[d]);
}

/* ---- a free set of points ---- */

static bool dominates(const int32_t b[3], const int32_t s[3])
{
	return b[0] >= s[0] && b[1] >= s[1] && b[2] >= s[2];
}

/* Lexicographic order of two points (the server's look-up order). */
static int lex(const int32_t x[3], const int32_t y[3])
{
	for (int d = 0; d < 3; d++)
		if (x[d] != y[d])
			return x[d] < y[d] ? -1 : 1;
	return 0;
}

int64_t adv_lower_bound(int ph, const struct adv_shape *sh, size_t n, size_t k,
			const struct adv_cost *c)
{
	if (k >= n)
		return 0;
	int64_t *delta = xcalloc(n + 1, sizeof *delta);
	/* The next observed value above each shape's, per dimension (the weak form). */
	struct ivec obs[3] = {{0}, {0}, {0}};
	for (int d = 0; d < 3; d++)
		observed(sh, n, d, &obs[d]);
	for (size_t i = 0; i < n; i++) {
		int64_t ts = c->pass(c->ctx, ph, sh[i].v);
		int64_t best = c->compile(c->ctx, ph, sh[i].v);
		if (n <= ADV_LB_PAIRWISE) {
			/* every join of the shape with another it does not dominate */
			for (size_t j = 0; j < n; j++) {
				if (dominates(sh[i].v, sh[j].v))
					continue;
				int32_t u[3];
				for (int d = 0; d < 3; d++)
					u[d] = sh[i].v[d] > sh[j].v[d] ? sh[i].v[d] : sh[j].v[d];
				int64_t p = sh[i].w * (c->pass(c->ctx, ph, u) - ts);
				if (p < best)
					best = p;
			}
		} else {
			for (int d = 0; d < 3; d++) {
				size_t q = ceil_idx(&obs[d], (int64_t)sh[i].v[d] + 1);
				if (q == obs[d].n)
					continue;
				int32_t u[3] = {sh[i].v[0], sh[i].v[1], sh[i].v[2]};
				u[d] = (int32_t)obs[d].v[q];
				int64_t p = sh[i].w * (c->pass(c->ctx, ph, u) - ts);
				if (p < best)
					best = p;
			}
		}
		delta[i] = best < 0 ? 0 : best;
	}
	/* Every shape but the K of largest delta pays at least its delta. */
	qsort(delta, n, sizeof *delta, cmp_i64);
	int64_t lb = 0;
	for (size_t i = 0; i < n - k; i++)
		lb += delta[i];
	free(delta);
	for (int d = 0; d < 3; d++)
		ivec_free(&obs[d]);
	return lb;
}

/* The free set's state: the buckets, each shape's bucket (the lexicographically smallest that
 * dominates it, or -1) and its cost. */
struct fset {
	int32_t (*b)[3];
	size_t m;
	long *asg;
	int64_t *cost, *ts;
	int64_t total;
};

static void fset_assign(int ph, const struct adv_shape *sh, size_t n, struct fset *f,
			const struct adv_cost *c)
{
	f->total = 0;
	for (size_t i = 0; i < n; i++) {
		long a = -1;
		for (size_t j = 0; j < f->m; j++)
			if (dominates(f->b[j], sh[i].v) && (a < 0 || lex(f->b[j], f->b[a]) < 0))
				a = (long)j;
		f->asg[i] = a;
		f->cost[i] = a < 0 ? c->compile(c->ctx, ph, sh[i].v)
				   : sh[i].w * (c->pass(c->ctx, ph, f->b[a]) - f->ts[i]);
		f->total += f->cost[i];
	}
}

/* The change in cost if P joined the set as bucket J (replacing bucket J when J < m, whose
 * shapes P dominates and which P does not follow lexicographically); applies it when APPLY. */
static int64_t fset_put(int ph, const struct adv_shape *sh, size_t n, struct fset *f, size_t j,
			const int32_t p[3], bool apply, const struct adv_cost *c)
{
	int64_t tp = c->pass(c->ctx, ph, p), delta = 0;
	for (size_t i = 0; i < n; i++) {
		bool take = (long)j == f->asg[i] ||
			    (dominates(p, sh[i].v) && (f->asg[i] < 0 || lex(p, f->b[f->asg[i]]) < 0));
		if (!take)
			continue;
		int64_t nc = sh[i].w * (tp - f->ts[i]);
		delta += nc - f->cost[i];
		if (apply) {
			f->asg[i] = (long)j;
			f->cost[i] = nc;
		}
	}
	if (apply) {
		memcpy(f->b[j], p, sizeof f->b[j]);
		if (j == f->m)
			f->m++;
		f->total += delta;
	}
	return delta;
}

/* The indices of the WANT shapes of highest positive cost, costliest first (ties: by index). */
static size_t top_costs(const struct fset *f, size_t n, size_t *out, size_t want)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (f->cost[i] <= 0)
			continue;
		if (k == want) {
			if (f->cost[i] <= f->cost[out[want - 1]])
				continue;
			k--;
		}
		size_t at = k++;
		while (at > 0 && f->cost[out[at - 1]] < f->cost[i]) {
			out[at] = out[at - 1];
			at--;
		}
		out[at] = i;
	}
	return k;
}

int64_t adv_free_set(int ph, const struct adv_shape *sh, size_t n, size_t k,
		     const struct blist *start, const struct adv_cost *c, struct blist *out)
{
	struct fset f = {0};
	f.b = xcalloc(k + start->n + n + 1, sizeof *f.b);
	f.asg = xcalloc(n + 1, sizeof *f.asg);
	f.cost = xcalloc(n + 1, sizeof *f.cost);
	f.ts = xcalloc(n + 1, sizeof *f.ts);
	for (size_t i = 0; i < n; i++)
		f.ts[i] = c->pass(c->ctx, ph, sh[i].v);
	for (size_t j = 0; j < start->n && f.m < k; j++)
		for (int d = 0; d < 3; d++)
			f.b[f.m][d] = (int32_t)start->a[j].v[d], f.m += d == 2;
	fset_assign(ph, sh, n, &f, c);
	/* 1. Drop the buckets no shape runs in (nothing changes). */
	size_t *used = xcalloc(f.m + 1, sizeof *used);
	for (size_t i = 0; i < n; i++)
		if (f.asg[i] >= 0)
			used[f.asg[i]] = 1;
	size_t m = 0;
	for (size_t j = 0; j < f.m; j++)
		if (used[j])
			memcpy(f.b[m++], f.b[j], sizeof f.b[j]);
	f.m = m;
	free(used);
	fset_assign(ph, sh, n, &f, c);
	/* 2. Lower each bucket to the join of its shapes: they still run in it (no bucket before
	 * it in the look-up order dominates them), others may move to it; kept when cheaper. */
	for (size_t j = 0; j < f.m; j++) {
		int32_t u[3] = {0, 0, 0};
		bool any = false;
		for (size_t i = 0; i < n; i++)
			if (f.asg[i] == (long)j) {
				for (int d = 0; d < 3; d++)
					if (!any || sh[i].v[d] > u[d])
						u[d] = sh[i].v[d];
				any = true;
			}
		if (any && lex(u, f.b[j]) && fset_put(ph, sh, n, &f, j, u, false, c) < 0)
			fset_put(ph, sh, n, &f, j, u, true, c);
	}
	/* 3. Fill the budget: add, as an exact bucket, the shape (among the costliest) whose
	 * addition lowers the cost most, while one does. */
	size_t want = n <= 256 ? n : 64;
	size_t *top = xcalloc(want + 1, sizeof *top);
	while (f.m < k) {
		size_t nt = top_costs(&f, n, top, want);
		int64_t best = 0;
		size_t bi = 0;
		for (size_t t = 0; t < nt; t++) {
			int64_t dl = fset_put(ph, sh, n, &f, f.m, sh[top[t]].v, false, c);
			if (dl < best)
				best = dl, bi = top[t];
		}
		if (best >= 0)
			break;
		fset_put(ph, sh, n, &f, f.m, sh[bi].v, true, c);
	}
	free(top);
	/* 4. A budget of a bucket per shape: every shape its own bucket costs nothing. */
	if (n <= k && f.total > 0) {
		for (size_t i = 0; i < n; i++)
			memcpy(f.b[i], sh[i].v, sizeof f.b[i]);
		f.m = n;
		fset_assign(ph, sh, n, &f, c);
	}
	for (size_t j = 0; j < f.m; j++)
		blist_push(out, f.b[j][0], f.b[j][1], f.b[j][2], 0);
	blist_sort_unique(out);
	int64_t total = f.total;
	free(f.b), free(f.asg), free(f.cost), free(f.ts);
	return total;
}
