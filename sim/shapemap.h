/*
 * shapemap: an open-addressing hash map from a shape key (phase + four int32) to an int32
 * value, for the kernel's per-shape caches (real shape -> bucket, bucket -> statistics).
 *
 * Owns its table (shapemap_init/shapemap_release).  Never shrinks; grows at 1/2 load.  Keys
 * compare exactly; iteration order is not used for output (callers keep their own ordered
 * arrays), so results never depend on the hash.
 */
#ifndef BS_SHAPEMAP_H
#define BS_SHAPEMAP_H

#include <stddef.h>
#include <stdint.h>

struct shape_key {
	int32_t phase;
	int32_t v[4];
};

struct shapemap_slot {
	struct shape_key k;
	int32_t val;      /* -1 = empty */
};

struct shapemap {
	struct shapemap_slot *s;
	size_t cap, n;    /* cap is a power of two */
};

void shapemap_init(struct shapemap *m);
void shapemap_release(struct shapemap *m);
void shapemap_clear(struct shapemap *m);
/* Value of KEY, or -1. */
int32_t shapemap_get(const struct shapemap *m, const struct shape_key *k);
/* Sets KEY to VAL (>= 0). */
void shapemap_put(struct shapemap *m, const struct shape_key *k, int32_t val);

#endif
