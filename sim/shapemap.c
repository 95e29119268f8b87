/*
 * shapemap: see shapemap.h.
 */
#include "sim/shapemap.h"

#include <stdlib.h>
#include <string.h>

#include "sim/util.h"

static uint64_t hash(const struct shape_key *k)
{
	uint64_t h = (uint64_t)(uint32_t)k->phase * 0x9E3779B97F4A7C15ull;
	for (int i = 0; i < 4; i++) {
		h ^= (uint64_t)(uint32_t)k->v[i] + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
		h *= 0xBF58476D1CE4E5B9ull;
	}
	return h ^ (h >> 31);
}

static int eq(const struct shape_key *a, const struct shape_key *b)
{
	return a->phase == b->phase && a->v[0] == b->v[0] && a->v[1] == b->v[1] &&
	       a->v[2] == b->v[2] && a->v[3] == b->v[3];
}

static void alloc_table(struct shapemap *m, size_t cap)
{
	m->s = xmalloc(cap * sizeof *m->s);
	for (size_t i = 0; i < cap; i++)
		m->s[i].val = -1;
	m->cap = cap;
	m->n = 0;
}

void shapemap_init(struct shapemap *m)
{
	alloc_table(m, 64);
}

void shapemap_release(struct shapemap *m)
{
	free(m->s);
	memset(m, 0, sizeof *m);
}

void shapemap_clear(struct shapemap *m)
{
	for (size_t i = 0; i < m->cap; i++)
		m->s[i].val = -1;
	m->n = 0;
}

int32_t shapemap_get(const struct shapemap *m, const struct shape_key *k)
{
	size_t mask = m->cap - 1;
	for (size_t i = hash(k) & mask;; i = (i + 1) & mask) {
		if (m->s[i].val < 0)
			return -1;
		if (eq(&m->s[i].k, k))
			return m->s[i].val;
	}
}

void shapemap_put(struct shapemap *m, const struct shape_key *k, int32_t val)
{
	if (2 * (m->n + 1) > m->cap) {
		struct shapemap old = *m;
		alloc_table(m, old.cap * 2);
		for (size_t i = 0; i < old.cap; i++)
			if (old.s[i].val >= 0)
				shapemap_put(m, &old.s[i].k, old.s[i].val);
		free(old.s);
	}
	size_t mask = m->cap - 1;
	for (size_t i = hash(k) & mask;; i = (i + 1) & mask) {
		if (m->s[i].val < 0) {
			m->s[i].k = *k;
			m->s[i].val = val;
			m->n++;
			return;
		}
		if (eq(&m->s[i].k, k)) {
			m->s[i].val = val;
			return;
		}
	}
}
