/*
 * kernel_stepq: step queues, the decoding requests of a lane keyed by a decode step of the lane
 * (the step of completion, done_at; the step of the next KV block, cross_at), ordered by
 * (step, id) as the indexed heaps (sim/kernel_heap.h) are (sim/kernel_stepq.c).
 *
 * A step queue is a timing wheel: SQ_SLOTS lists, one per step of the window [lo, lo +
 * SQ_SLOTS), the list of step k in slot k mod SQ_SLOTS, each kept in id order (circular and
 * doubly linked through arrays by request id, so that appending after its largest id and
 * taking out any id cost O(1)); a bitmap of the non-empty slots, with a summary word of its
 * non-empty words, finds the first step at or after lo with two word scans.  Steps at lo +
 * SQ_SLOTS and later wait in an indexed heap (far) and move into the wheel when lo advances.
 * The least entry is kept (top, top_key); when it leaves, the next one is the next in its
 * slot, or found from lo, and lo advances then to the least of that step and the lane's step
 * count (CLOCK), below which nothing is pushed.  A push below lo (never in the kernel) moves
 * lo back, the wheel's steps past the new window going to far.
 *
 * Part of the kernel's internal interface (sim/kernel_int.h includes it).
 */
#ifndef BS_KERNEL_STEPQ_H
#define BS_KERNEL_STEPQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/kernel_heap.h"

#define SQ_BITS 12
#define SQ_SLOTS (1 << SQ_BITS)         /* steps of the wheel's window */
#define SQ_WORDS (SQ_SLOTS / 64)        /* bitmap words: at most 64, one summary word */
/* pos of an entry in the wheel: SQ_WHEEL - its slot (far's indices are below) */
#define SQ_WHEEL INT32_MAX

/* An entry's neighbours in its slot's list, by request id.  Its step is its slot's within
 * the window (sq_slot_key). */
struct sq_node {
	int32_t next, prev;             /* circular: the head's prev is the largest id */
};

struct stepq {
	size_t n;                       /* entries */
	int32_t top;                    /* the least entry's id, -1 when empty */
	int64_t top_key;
	int64_t lo;                     /* the window's first step: no entry's key is below */
	const int64_t *clock;           /* the lane's step count (G): pushed keys are not below */
	int32_t *pos;                   /* by request id (borrowed, far's too): -1 = absent,
					 * SQ_WHEEL - its slot in the wheel, or its index in far */
	struct sq_node *node;           /* by request id (borrowed) */
	int32_t *head;                  /* by slot: its least id, -1 = empty */
	struct iheap far;               /* entries at lo + SQ_SLOTS and later */
	uint64_t summary;               /* bit w: bits[w] is not zero */
	uint64_t bits[SQ_WORDS];        /* bit s: slot s is not empty */
};

/* kernel_stepq.c */
void sq_init(struct stepq *q, int32_t *pos, struct sq_node *node, size_t cap,
	     const int64_t *clock);
void sq_release(struct stepq *q);
/* Out of line: finding the least entry from lo (advancing lo), moving the far entries within
 * the window into the wheel (after every wheel entry: their keys are the larger), and moving
 * lo back to KEY. */
void sq_settle(struct stepq *q);
void sq_migrate(struct stepq *q);
void sq_lower(struct stepq *q, int64_t key);

/* Inline (linking, push, remove, update, the top; the order is the heaps', ih_less): */
static inline bool sq_has(const struct stepq *q, int32_t id)
{
	return q->pos[id] >= 0;
}

/* Whether the entry at POS (present) is in the wheel. */
static inline bool sq_in_wheel(int32_t pos)
{
	return pos > SQ_WHEEL - SQ_SLOTS;
}

/* The step of the wheel's slot S: the one within the window. */
static inline int64_t sq_slot_key(const struct stepq *q, size_t s)
{
	return q->lo + (int64_t)((s - (size_t)q->lo) & (SQ_SLOTS - 1));
}

/* The least entry's id, -1 when empty. */
static inline int32_t sq_top(const struct stepq *q)
{
	return q->top;
}

/* The least entry's key (not empty). */
static inline int64_t sq_top_key(const struct stepq *q)
{
	return q->top_key;
}

/* Puts ID in the list of KEY's slot (KEY within the window), after the largest id before it. */
static inline void sq_link(struct stepq *q, int32_t id, int64_t key)
{
	size_t s = (size_t)key & (SQ_SLOTS - 1);
	struct sq_node *nd = q->node;
	int32_t h = q->head[s];
	q->pos[id] = SQ_WHEEL - (int32_t)s;
	if (h < 0) {
		nd[id].next = nd[id].prev = id;
		q->head[s] = id;
		q->bits[s >> 6] |= (uint64_t)1 << (s & 63);
		q->summary |= (uint64_t)1 << (s >> 6);
		return;
	}
	int32_t after = nd[h].prev;     /* the largest id: an id arriving last goes after it */
	if (id < h)
		q->head[s] = id;
	else if (id < after)
		for (after = h; nd[after].next < id;)
			after = nd[after].next;
	int32_t nx = nd[after].next;
	nd[id].prev = after;
	nd[id].next = nx;
	nd[after].next = id;
	nd[nx].prev = id;
}

/* Takes ID (in the wheel) out of its slot's list; returns the slot. */
static inline size_t sq_unlink(struct stepq *q, int32_t id)
{
	struct sq_node *nd = q->node;
	size_t s = (size_t)(SQ_WHEEL - q->pos[id]);
	int32_t nx = nd[id].next, pv = nd[id].prev;
	if (nx == id) {
		q->head[s] = -1;
		if (!(q->bits[s >> 6] &= ~((uint64_t)1 << (s & 63))))
			q->summary &= ~((uint64_t)1 << (s >> 6));
		return s;
	}
	nd[pv].next = nx;
	nd[nx].prev = pv;
	if (q->head[s] == id)
		q->head[s] = nx;
	return s;
}

/* Files ID at KEY: in the wheel, in far, or (below lo) after moving lo back. */
static inline void sq_attach(struct stepq *q, int32_t id, int64_t key)
{
	if ((uint64_t)(key - q->lo) < SQ_SLOTS) {
		sq_link(q, id, key);
		return;
	}
	if (key < q->lo)
		sq_lower(q, key);
	if (key - q->lo < SQ_SLOTS)
		sq_link(q, id, key);
	else
		ih_push(&q->far, id, key);
}

/* Takes ID out; returns its slot, or -1 when it was in far. */
static inline int64_t sq_detach(struct stepq *q, int32_t id)
{
	if (!sq_in_wheel(q->pos[id])) {
		ih_remove(&q->far, id);
		return -1;
	}
	size_t s = sq_unlink(q, id);
	q->pos[id] = -1;
	return (int64_t)s;
}

/* Whether ID at KEY comes before the least entry (not empty), in the heaps' order. */
static inline bool sq_before_top(const struct stepq *q, int32_t id, int64_t key)
{
	return ih_less((struct ih_ent){key, id}, (struct ih_ent){q->top_key, q->top});
}

/* After the top left slot S (-1: far), the next least entry. */
static inline void sq_next_top(struct stepq *q, int64_t s)
{
	if (s >= 0 && q->head[s] >= 0)
		q->top = q->head[s];    /* the same step, the next id */
	else
		sq_settle(q);
}

static inline void sq_push(struct stepq *q, int32_t id, int64_t key)
{
	sq_attach(q, id, key);
	q->n++;
	if (q->top < 0 || sq_before_top(q, id, key)) {
		q->top = id;
		q->top_key = key;
	}
}

static inline void sq_remove(struct stepq *q, int32_t id)
{
	int64_t s = sq_detach(q, id);
	q->n--;
	if (id == q->top)
		sq_next_top(q, s);
}

static inline void sq_update(struct stepq *q, int32_t id, int64_t key)
{
	int64_t s = sq_detach(q, id);
	sq_attach(q, id, key);
	if (id == q->top && key > q->top_key) {
		sq_next_top(q, s);      /* the rest of its old step, if any, come first */
		return;
	}
	if (id == q->top || sq_before_top(q, id, key)) {
		q->top = id;
		q->top_key = key;
	}
}

#endif
