/*
 * kernel_stepq: step queues (sim/kernel_stepq.h): a timing wheel of request ids by decode step
 * for the steps within SQ_SLOTS of the lane's step count, an indexed heap for the later ones.
 * The order is the heaps' (step, then id), so the queue's shape never shows in the results.
 */
#include "sim/kernel_int.h"

#include <stdlib.h>
#include <string.h>

void sq_init(struct stepq *q, int32_t *pos, struct sq_node *node, size_t cap,
	     const int64_t *clock)
{
	memset(q, 0, sizeof *q);
	q->top = -1;
	q->clock = clock;
	q->lo = *clock;
	q->pos = pos;
	q->node = node;
	q->head = xmalloc(SQ_SLOTS * sizeof *q->head);
	memset(q->head, 0xff, SQ_SLOTS * sizeof *q->head); /* every slot -1: empty */
	ih_init(&q->far, pos, cap);
}

void sq_release(struct stepq *q)
{
	free(q->head);
	q->head = NULL;
	ih_release(&q->far);
}

/* The first non-empty slot from lo's, round the wheel (the wheel not empty). */
static size_t sq_first(const struct stepq *q)
{
	size_t s = (size_t)q->lo & (SQ_SLOTS - 1), w = s >> 6;
	uint64_t b = q->bits[w] & (~(uint64_t)0 << (s & 63));
	if (b)
		return w << 6 | (size_t)__builtin_ctzll(b);
	uint64_t later = q->summary & (~(uint64_t)1 << w); /* the words after w */
	w = (size_t)__builtin_ctzll(later ? later : q->summary); /* or round from word 0 */
	return w << 6 | (size_t)__builtin_ctzll(q->bits[w]);
}

void sq_settle(struct stepq *q)
{
	if (q->summary) {
		size_t first = sq_first(q);
		q->top = q->head[first];
		q->top_key = sq_slot_key(q, first);
	} else if (q->far.n) {
		q->top = q->far.e[0].id;
		q->top_key = q->far.e[0].key;
	} else {
		q->top = -1;
		return;
	}
	/* The window moves up to the least key, or the clock when that is earlier (a key pushed
	 * later is not below the clock); far keys now within it join the wheel. */
	int64_t lo = q->top_key < *q->clock ? q->top_key : *q->clock;
	if (lo <= q->lo)
		return;
	q->lo = lo;
	if (q->far.n && q->far.e[0].key - lo < SQ_SLOTS)
		sq_migrate(q);
}

void sq_migrate(struct stepq *q)
{
	while (q->far.n && q->far.e[0].key - q->lo < SQ_SLOTS) {
		struct ih_ent x = q->far.e[0];
		ih_remove(&q->far, x.id);
		sq_link(q, x.id, x.key);
	}
}

void sq_lower(struct stepq *q, int64_t key)
{
	int64_t end = key + SQ_SLOTS;
	for (size_t w = 0; w < SQ_WORDS; w++)
		for (uint64_t b = q->bits[w]; b; b &= b - 1) {
			size_t s = w << 6 | (size_t)__builtin_ctzll(b);
			int64_t at = sq_slot_key(q, s); /* its entries' step (the old window's) */
			if (at < end)
				continue;
			for (int32_t h; (h = q->head[s]) >= 0;) {
				sq_unlink(q, h);
				ih_push(&q->far, h, at);
			}
		}
	q->lo = key;
}
