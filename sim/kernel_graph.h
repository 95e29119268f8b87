/*
 * sim/kernel_graph.c's interface and its rules, inline: a real shape padded to its graph,
 * with the fast path's cache of recent look-ups (struct shape_slot).
 * Included through sim/kernel_int.h, as the kernel files and their white-box tests use it.
 */
#ifndef BS_KERNEL_GRAPH_H
#define BS_KERNEL_GRAPH_H

#include <string.h>

#include "sim/kernel_state.h"

/* pad_shape() (below) past the fast path: look-up, graph and compile. */
int32_t pad_shape_(struct sim *s, struct lane *in, int phase, const int32_t real[4],
		   int64_t *compile_ns);

/* pad_shape's look-up, without compiling: the graph REAL pads to, its padded shape in PADDED
 * (may be NULL).  Without MAKE no graph is created unless the look-up added a fallback bucket
 * (returns -1 then). */
int32_t shape_graph(struct sim *s, int phase, const int32_t real[4], bool make, int32_t padded[4]);

/* A shape's four sizes as two 64-bit words, so that hashing and comparing take them two at
 * a time (the cache's slots depend on the byte order, its answers do not). */
static inline void shape_words(const struct shape_key *k, uint64_t w[2])
{
	memcpy(w, k->v, 2 * sizeof *w);
}

/* The fast path's cache slot of a real shape (struct shape_slot): multiplicative hashing, the
 * slot from the product's high bits. */
static inline struct shape_slot *shape_slot(struct sim *s, const struct shape_key *k)
{
	uint64_t w[2];
	shape_words(k, w);
	uint64_t h = (w[0] + (uint64_t)k->phase) * 0x9E3779B97F4A7C15ull ^
		     w[1] * 0xC2B2AE3D27D4EB4Full;
	return &s->shape_cache[h >> (64 - SHAPE_CACHE_BITS)];
}

static inline bool same_shape(const struct shape_key *a, const struct shape_key *b)
{
	uint64_t x[2], y[2];
	shape_words(a, x);
	shape_words(b, y);
	return a->phase == b->phase && ((x[0] ^ y[0]) | (x[1] ^ y[1])) == 0;
}

/* Pads real shape REAL of PHASE to its graph on IN's instance, *COMPILE_NS the runtime
 * compile charged now (kernel_graph.c).  The fast path answers a recent look-up of a graph
 * compiled there at once. */
static inline int32_t pad_shape(struct sim *s, struct lane *in, int phase, const int32_t real[4],
				int64_t *compile_ns)
{
	if (!s->p.step_by_step) {
		struct shape_key k = {phase, {real[0], real[1], real[2], real[3]}};
		const struct shape_slot *c = shape_slot(s, &k);
		const struct instance *grp = in->owner;
		if (c->gi1 && same_shape(&c->k, &k) && (size_t)(c->gi1 - 1) < grp->compiled_cap &&
		    grp->compiled[c->gi1 - 1]) {
			*compile_ns = 0;
			return c->gi1 - 1;
		}
	}
	return pad_shape_(s, in, phase, real, compile_ns);
}

#endif
