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
 * allocation beyond amortised growth.  Inside each bucket the requests sit in a binary heap in
 * the configured order and (unless that order is FCFS) a second heap by arrival, so insert,
 * remove, peek and pop are O(log n); finding a bucket is a binary search over the k buckets.
 *
 * Orders (smaller first; every order ends with the tie-break (arrival_ns, insertion sequence),
 * so it never depends on heap layout):
 *   FCFS       arrival_ns
 *   SJF / LJF  key length ascending / descending
 *   SJF_TOTAL / LJF_TOTAL   prompt + output ascending / descending (an oracle order)
 *   PRIORITY   priority value ascending (0 = most urgent)
 *
 * Bucket indices (0..bsm_nbuckets()-1, in length order) are valid until the next bsm_adjust();
 * request ids are stable.  Lifetime: bsm_init()/bsm_release() on a caller-owned struct; the
 * params' boundary array is copied.
 */
#ifndef BS_BS_MANAGER_H
#define BS_BS_MANAGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/util.h"

enum bsm_order { BSM_FCFS, BSM_SJF, BSM_LJF, BSM_SJF_TOTAL, BSM_LJF_TOTAL, BSM_PRIORITY };
enum bsm_grouping {
	BSM_GROUP_NONE,      /* one bucket [0, L_max]; bsm_adjust() does nothing */
	BSM_GROUP_FIXED,     /* the given boundaries; bsm_adjust() does nothing */
	BSM_GROUP_ADAPTIVE,  /* Algorithm 1: starts as one bucket, split/merged by bsm_adjust() */
};

/* Largest accepted L_max (the length histogram has L_max + 1 cells). */
#define BSM_LMAX_LIMIT (1u << 24)

struct bsm_params {
	uint32_t l_max;            /* tokens, 1..BSM_LMAX_LIMIT; keys must be <= l_max */
	enum bsm_grouping grouping;
	enum bsm_order order;      /* order inside a bucket */
	double theta;              /* Algorithm 1 split threshold, in [0, 1) (paper: 0.5) */
	const uint32_t *bounds;    /* FIXED only: nbounds >= 2 strictly increasing values, */
	size_t nbounds;            /* bounds[0] = 0, bounds[nbounds-1] = l_max (copied) */
};

/* What the manager needs to know of a request. */
struct bsm_req {
	int64_t arrival_ns;
	uint32_t len;              /* grouping key S (prompt tokens), 0..l_max */
	uint32_t total;            /* prompt + output tokens (SJF_TOTAL/LJF_TOTAL, KV reserve) */
	uint8_t priority;          /* 0 = most urgent */
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
	uint32_t *work;            /* workspace for bsm_adjust() */
	uint8_t *split;
	size_t capwork;
	uint32_t *fw_cnt;          /* Fenwick trees over key lengths 0..l_max: counts and sums */
	uint64_t *fw_sum;
	size_t fw_n;
	size_t total;              /* queued requests */
	uint64_t total_len;        /* sum of queued keys */
	uint64_t seq;              /* insertion counter (tie-break) */
	uint64_t nsplits, nmerges; /* over the manager's life */
};

/* Validates P (ERR code 3 with the field name on a bad value) and builds the initial buckets:
 * one bucket for NONE and ADAPTIVE, the given ones for FIXED. */
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

/* First request of bucket K in the configured order, or -1 when it is empty. */
int64_t bsm_peek(const struct bsm *m, size_t k);
/* Removes and returns the first request of bucket K, or -1 when it is empty. */
int64_t bsm_pop(struct bsm *m, size_t k);
/* Oldest request of bucket K (by arrival, then insertion), or -1 when empty. */
int64_t bsm_oldest(const struct bsm *m, size_t k);
/* Bucket whose oldest request is the oldest of all (the paper's rule for online tasks); ties
 * go to the request inserted first.  -1 when nothing is queued.  O(k). */
int64_t bsm_earliest_bucket(const struct bsm *m);
/* Bucket whose first request comes first in the configured order over all queued requests
 * (for FCFS this is bsm_earliest_bucket()); -1 when nothing is queued.  O(k). */
int64_t bsm_best_bucket(const struct bsm *m);
/* Writes the ids of bucket K in the configured order (up to CAP) without changing it; returns
 * the bucket's count.  O(c log c) on a copy: for logs and tests, not for the hot path. */
size_t bsm_bucket_ids(const struct bsm *m, size_t k, uint32_t *out, size_t cap);

/* Algorithm 1's AdjustBuckets with threshold N_MAX (also the minimum split size m):
 *   total < N_MAX            -> merge every bucket into [0, L_max] (counted if there were >1);
 *   otherwise, one pass: every bucket b with |{S < m_b}| / |b| > theta and |b| > N_MAX and
 *   width >= 2 tokens is split at m_b = (lo + hi) / 2 (rounded up, which for integer keys is
 *   the same test as the real midpoint).  Only for ADAPTIVE grouping; a no-op otherwise.
 * RES may be NULL. */
void bsm_adjust(struct bsm *m, uint64_t n_max, struct bsm_adjust_result *res);
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
