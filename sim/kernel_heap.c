/*
 * kernel_heap: indexed binary min-heaps of request ids keyed by (key, id).
 */
#include "sim/kernel_int.h"

#include <stdlib.h>

/* ---- indexed heaps ----------------------------------------------------------------------- */

void ih_init(struct iheap *h, int64_t *key, int32_t *pos, size_t cap)
{
	h->cap = cap ? cap : 16;
	h->ids = xmalloc(h->cap * sizeof *h->ids);
	h->n = 0;
	h->key = key;
	h->pos = pos;
}

void ih_release(struct iheap *h)
{
	free(h->ids);
	h->ids = NULL;
}

static inline bool ih_less(const struct iheap *h, int32_t a, int32_t b)
{
	return h->key[a] < h->key[b] || (h->key[a] == h->key[b] && a < b);
}

static inline void ih_set(struct iheap *h, size_t i, int32_t id)
{
	h->ids[i] = id;
	h->pos[id] = (int32_t)i;
}

static void ih_up(struct iheap *h, size_t i)
{
	int32_t id = h->ids[i];
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (!ih_less(h, id, h->ids[p]))
			break;
		ih_set(h, i, h->ids[p]);
		i = p;
	}
	ih_set(h, i, id);
}

static void ih_down(struct iheap *h, size_t i)
{
	int32_t id = h->ids[i];
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		int32_t best = id;
		if (l < h->n && ih_less(h, h->ids[l], best)) {
			m = l;
			best = h->ids[l];
		}
		if (l + 1 < h->n && ih_less(h, h->ids[l + 1], best)) {
			m = l + 1;
			best = h->ids[l + 1];
		}
		if (m == i)
			break;
		ih_set(h, i, best);
		i = m;
	}
	ih_set(h, i, id);
}

void ih_push(struct iheap *h, int32_t id, int64_t key)
{
	if (h->n == h->cap)
		h->ids = xrealloc(h->ids, (h->cap *= 2) * sizeof *h->ids);
	h->key[id] = key;
	h->ids[h->n] = id;
	h->pos[id] = (int32_t)h->n;
	h->n++;
	ih_up(h, h->n - 1);
}

void ih_remove(struct iheap *h, int32_t id)
{
	size_t i = (size_t)h->pos[id];
	h->pos[id] = -1;
	h->n--;
	if (i == h->n)
		return;
	int32_t last = h->ids[h->n];
	ih_set(h, i, last);
	ih_down(h, i);
	ih_up(h, (size_t)h->pos[last]);
}

void ih_update(struct iheap *h, int32_t id, int64_t key)
{
	h->key[id] = key;
	ih_down(h, (size_t)h->pos[id]);
	ih_up(h, (size_t)h->pos[id]);
}

