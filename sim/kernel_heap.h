/*
 * kernel_heap: indexed 4-ary min-heaps of request ids keyed by (key, id), the kernel's waiting
 * queues and its decoding requests' completion and block-boundary steps (sim/kernel_heap.c).
 * Part of the kernel's internal interface (sim/kernel_int.h includes it).
 */
#ifndef BS_KERNEL_HEAP_H
#define BS_KERNEL_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IH_ARITY 4                      /* ih_place_down's tournament assumes 4 */
/* Indexed min-heap of request ids keyed by (key, id) (kernel_heap.c); the position array is
 * by request id, shared by heaps a request is never in two of at once. */
struct ih_ent {
	int64_t key;
	int32_t id;
};
struct iheap {
	struct ih_ent *e;
	size_t n, cap;
	int32_t *pos;                   /* by request id (borrowed); -1 = absent */
};

/* kernel_heap.c */
void ih_init(struct iheap *h, int32_t *pos, size_t cap);
void ih_release(struct iheap *h);
/* Out of line: placing X from the free slot I down (its least children that come before it
 * moving up), doubling the array. */
void ih_place_down(struct iheap *h, size_t i, struct ih_ent x);
void ih_grow(struct iheap *h);
/* Inline (the order, sifting up, push, remove, update): */
static inline bool ih_less(struct ih_ent a, struct ih_ent b)
{
	/* Under fcfs every key ties (its key is constant): then the id, arrival order, decides. */
	return a.key != b.key ? a.key < b.key : a.id < b.id;
}

static inline void ih_set(struct iheap *h, size_t i, struct ih_ent x)
{
	h->e[i] = x;
	h->pos[x.id] = (int32_t)i;
}

/* Places X from the free slot I up, its parents that follow it moving down. */
static inline void ih_place_up(struct iheap *h, size_t i, struct ih_ent x)
{
	while (i > 0) {
		size_t p = (i - 1) / IH_ARITY;
		if (!ih_less(x, h->e[p]))
			break;
		ih_set(h, i, h->e[p]);
		i = p;
	}
	ih_set(h, i, x);
}

static inline void ih_push(struct iheap *h, int32_t id, int64_t key)
{
	if (h->n == h->cap)
		ih_grow(h);
	ih_place_up(h, h->n++, (struct ih_ent){key, id}); /* the new slot is written once */
}

static inline void ih_remove(struct iheap *h, int32_t id)
{
	size_t i = (size_t)h->pos[id];
	h->pos[id] = -1;
	h->n--;
	if (i == h->n)
		return;
	struct ih_ent last = h->e[h->n]; /* fills the slot I, up or down */
	if (i > 0 && ih_less(last, h->e[i]))
		ih_place_up(h, i, last);
	else
		ih_place_down(h, i, last);
}

static inline void ih_update(struct iheap *h, int32_t id, int64_t key)
{
	size_t i = (size_t)h->pos[id];
	struct ih_ent x = {key, id};
	if (key < h->e[i].key)
		ih_place_up(h, i, x);
	else
		ih_place_down(h, i, x);
}

#endif
