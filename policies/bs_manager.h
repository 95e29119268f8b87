/*
 * bs_manager: the BucketServe Request Bucketing Manager (paper Algorithm 1).
 *
 * Owns a partition of the sequence-length range into buckets and the queue of waiting requests
 * held in them.  Buckets are half-open ranges [lo, hi) of the grouping key S (the length the
 * caller passes, normally the prompt length), except the last one, which is closed at L_max,
 * so the buckets together cover exactly [0, L_max] (README.md, "Where the paper is ambiguous").
 *
 * Invariants (checked by bsm_check()):
 *  - the buckets are sorted by lo, the first starts at 0, each starts where the previous ends,
 *    the last ends at L_max; there is at least one bucket;
 *  - every queued request is in exactly one bucket, the one whose range contains its key;
 *  - the per-bucket counts add up to bsm_total(); the length histogram agrees with the queue.
 *
 * Requests are named by a caller-chosen dense id (the kernel's request index, 0..n-1); the
 * manager keeps a small record per id in an array grown by doubling, so insert and remove do no
 * allocation beyond amortised growth.  Inside each bucket the requests sit in a binary heap, so
 * insert, remove, peek and pop are O(log n); finding a bucket is a binary search over the k
 * buckets.
 *
 * Order inside a bucket: the caller's key (bsm_req.key: the order policy's key(), policies/
 * order.h) ascending, ties by arrival_ns, then by insertion (a request queued again, after a
 * preemption, goes behind those with the same key and arrival).  The order is total, so it
 * never depends on heap layout.  The manager knows no order policy: an order is its key.
 *
 * The buckets change only through bsm_split() and bsm_merge_all(), which a grouping's adjust()
 * calls (policies/grouping.h; Algorithm 1 is policies/grouping_adaptive.c).  Bucket indices
 * (0..bsm_nbuckets()-1, in length order) are valid until the next such call; request ids are
 * stable.  Lifetime: bsm_init()/bsm_release() on a caller-owned struct; the
 * params' boundary array is copied.
 */
#ifndef BS_BS_MANAGER_H
#define BS_BS_MANAGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/util.h"

/* Largest accepted L_max (the length histogram has L_max + 1 cells). */
#define BSM_LMAX_LIMIT (1u << 24)

struct bsm_params {
	uint32_t l_max;            /* tokens, 1..BSM_LMAX_LIMIT; keys must be <= l_max */
	/* The initial buckets (a grouping's bounds(), policies/grouping.h): NULL for one bucket
	 * [0, L_max], else nbounds >= 2 strictly increasing values, bounds[0] = 0,
	 * bounds[nbounds-1] = l_max (copied). */
	const uint32_t *bounds;
	size_t nbounds;
};

/* What the manager needs to know of a request. */
struct bsm_req {
	int64_t arrival_ns;
	uint32_t len;              /* grouping key S (prompt tokens), 0..l_max */
	uint32_t total;            /* prompt + output tokens (the KV reserve of kv_charge=total) */
	int64_t key;               /* order inside the bucket: smaller first (the order policy's
				    * key(), fixed while the request waits) */
};

struct bsm_adjust_result {
	size_t splits;             /* buckets split in this call */
	bool merged;               /* true when several buckets were merged into one */
};

struct bsm_slot;
struct bsm_bucket;

struct bsm {
	struct bsm_params p;       /* p.bounds points to an owned copy */
	uint32_t *bounds_copy;
	struct bsm_slot *slot;     /* by request id */
	size_t nslot;
	struct bsm_bucket *bk;     /* pool of buckets, by stable bucket id */
	size_t nbk, capbk;
	uint32_t *free_bk;         /* unused bucket ids */
	size_t nfree;
	uint32_t *sorted;          /* bucket ids in length order (index = bucket index) */
	size_t nsorted, capsorted;
	uint32_t *scratch;         /* workspace for split/merge */
	size_t capscratch;
	uint32_t *fw_cnt;          /* Fenwick trees over key lengths 0..l_max: counts and sums */
	uint64_t *fw_sum;
	size_t fw_n;
	size_t total;              /* queued requests */
	uint64_t total_len;        /* sum of queued keys */
	uint64_t seq;              /* insertion counter (tie-break) */
	uint64_t nsplits, nmerges; /* over the manager's life */
};

/* Validates P (ERR code 3 with the field name on a bad value) and builds the initial buckets:
 * one bucket without P->bounds, else the given ones. */
int bsm_init(struct bsm *m, const struct bsm_params *p, struct bs_err *err);
void bsm_release(struct bsm *m);
/* Preallocates the per-request records for ids 0..n_ids-1 (optional). */
void bsm_reserve(struct bsm *m, size_t n_ids);

/* Queues request ID in the bucket containing R->len.  A key above L_max is an input error
 * (returns -1, ERR code 3).  Queuing an id already queued is a bug (aborts). */
int bsm_insert(struct bsm *m, uint32_t id, const struct bsm_req *r, struct bs_err *err);
/* Removes a queued request (it was batched or cancelled).  Removing an unqueued id is a bug. */
void bsm_remove(struct bsm *m, uint32_t id);
bool bsm_queued(const struct bsm *m, uint32_t id);
/* Key length and total length recorded for ID (queued or not, once inserted). */
uint32_t bsm_len(const struct bsm *m, uint32_t id);
uint32_t bsm_total_len(const struct bsm *m, uint32_t id);

size_t bsm_total(const struct bsm *m);
size_t bsm_nbuckets(const struct bsm *m);
/* Bucket index of a queued request. */
size_t bsm_bucket_of(const struct bsm *m, uint32_t id);
/* Bucket index whose range contains LEN (LEN <= L_max). */
size_t bsm_find(const struct bsm *m, uint32_t len);
/* Range of bucket K: [*lo, *hi), or [*lo, *hi] for the last bucket. */
void bsm_bucket_range(const struct bsm *m, size_t k, uint32_t *lo, uint32_t *hi);
size_t bsm_bucket_count(const struct bsm *m, size_t k);
/* Writes min(cap, nbuckets + 1) boundaries (0, ..., L_max) to OUT; returns nbuckets + 1. */
size_t bsm_boundaries(const struct bsm *m, uint32_t *out, size_t cap);

/* First request of bucket K in its order (key, arrival, insertion), or -1 when it is empty. */
int64_t bsm_peek(const struct bsm *m, size_t k);
/* Removes and returns the first request of bucket K, or -1 when it is empty. */
int64_t bsm_pop(struct bsm *m, size_t k);
/* Bucket whose first request (bsm_peek) arrived first (ties: inserted first): with a constant
 * key, the order inside a bucket is arrival order and this is the bucket holding the oldest
 * request (the paper's rule for online tasks).  -1 when nothing is queued.  O(k). */
int64_t bsm_earliest_bucket(const struct bsm *m);
/* Bucket whose first request comes first in the order over all queued requests (with a
 * constant key this is bsm_earliest_bucket()); -1 when nothing is queued.  O(k). */
int64_t bsm_best_bucket(const struct bsm *m);
/* Writes the ids of bucket K in its order (up to CAP) without changing it; returns
 * the bucket's count.  O(c log c) on a copy: for logs and tests, not for the hot path. */
size_t bsm_bucket_ids(const struct bsm *m, size_t k, uint32_t *out, size_t cap);

/* The changes a grouping's adjust() makes (policies/grouping.h).  bsm_split: splits bucket K
 * [lo, hi) at MID (lo < MID < hi) into [lo, MID) at K and [MID, hi) at K + 1; the buckets
 * after K move up one index.  bsm_merge_all: merges every bucket into [0, L_max]; false (and
 * nothing done) when there is one bucket.  Each counts itself in bsm_nsplits / bsm_nmerges. */
void bsm_split(struct bsm *m, size_t k, uint32_t mid);
bool bsm_merge_all(struct bsm *m);
/* Number of queued keys (lengths) below LEN.  O(log L_max). */
uint64_t bsm_count_below(const struct bsm *m, uint32_t len);
uint64_t bsm_nsplits(const struct bsm *m);
uint64_t bsm_nmerges(const struct bsm *m);

/* Eq. 6 for the queue as the Algorithm 1 threshold: the largest N such that N sequences fit in
 * BUDGET_TOKENS (= floor(M_safe / (2LHDB)), bsb_budget_tokens()).  The S_i are the queued keys
 * in ascending order; once the whole queue fits, further S_i are taken to be the mean queued
 * key (N ranges over all naturals in Eq. 6).  UINT64_MAX when the queue is empty or its mean is
 * zero.  O(log L_max). */
uint64_t bsm_nmax_auto(const struct bsm *m, uint64_t budget_tokens);

/* Parses fixed boundaries written "0,256,1024,4096" ("max" stands for L_max) into an owned
 * array.  Must start at 0, increase strictly and end at L_max.  ERR names FIELD. */
int bsm_parse_bounds(const char *text, uint32_t l_max, const char *field, uint32_t **out,
		     size_t *n, struct bs_err *err);

/* Checks every invariant listed at the top of this file (O(n + k + L_max)). */
bool bsm_check(const struct bsm *m);

#endif
