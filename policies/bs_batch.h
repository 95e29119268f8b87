/*
 * bs_batch: the BucketServe Dynamic Batching Controller (paper Eq. 1, 5 and 6).
 *
 * Pure arithmetic plus one function that takes a batch out of a bs_manager bucket.  Units:
 * bytes for memory, tokens for lengths and budgets.  Owns no memory; every function borrows.
 *
 *   Eq. 1  KV bytes of a padded batch   = 2 * L * H * D * S_max * B * N
 *          bytes per token              = 2 * L * H * D * B, with H the number of KV heads
 *          (equal to the attention heads for multi-head attention, fewer for grouped-query
 *          attention)
 *   Eq. 5  M_safe = fraction * M_remain  (fraction 0.9 in the paper), floored to whole bytes
 *   Eq. 6  N_max  = max{ N : S_1 + ... + S_N <= M_safe / (2LHDB) }
 *          with integer S_i this is S_1 + ... + S_N <= floor(M_safe / (2LHDB)), the "token
 *          budget" below, so every test is exact integer arithmetic.
 */
#ifndef BS_BS_BATCH_H
#define BS_BS_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policies/bs_manager.h"

/* The model shape Eq. 1 needs. */
struct bsb_model {
	uint32_t layers;        /* L */
	uint32_t kv_heads;      /* H: key/value heads (not query heads under GQA) */
	uint32_t head_dim;      /* D */
	uint32_t dtype_bytes;   /* B: 2 for fp16/bf16 */
};

/* How a batch's KV footprint is counted. */
enum bsb_accounting {
	BSB_SUM,      /* Eq. 6: sum of the sequence lengths (no padding) */
	BSB_PADDED,   /* Eq. 1: N * S_max (every sequence padded to the longest) */
};

/* Which length of a request is charged to the budget. */
enum bsb_charge {
	BSB_CHARGE_KEY,    /* the grouping key (prompt tokens): the KV of the prefill */
	BSB_CHARGE_TOTAL,  /* prompt + output: reserves the KV the request will reach */
};

/* Eq. 1 per token: 2 * L * H * D * B. */
uint64_t bsb_kv_bytes_per_token(const struct bsb_model *md);
/* Eq. 1: bytes of N sequences padded to S_MAX tokens. */
uint64_t bsb_kv_bytes(const struct bsb_model *md, uint64_t s_max, uint64_t n);
/* Eq. 5: floor(FRACTION * M_REMAIN) bytes (FRACTION in (0, 1]). */
uint64_t bsb_safe_bytes(double fraction, uint64_t m_remain);
/* floor(M_SAFE / BYTES_PER_TOKEN): the right-hand side of Eq. 6 in whole tokens. */
uint64_t bsb_budget_tokens(uint64_t m_safe, uint64_t bytes_per_token);

/* The batch test of Eq. 6 / Eq. 1: whether a sequence charged LEN still fits after N
 * sequences of total SUM and longest SMAX within BUDGET tokens under ACC.  The one rule of
 * memory-safe batching: bsb_fit(), bsb_take() and the simulator's memory_safe controller
 * (policies/batching_memory_safe.c) all apply it. */
bool bsb_fits(uint64_t n, uint64_t sum, uint64_t smax, uint64_t len, uint64_t budget,
	      enum bsb_accounting acc);

/* Eq. 6: the largest N <= n with lens[0] + ... + lens[N-1] <= BUDGET (lens in the order the
 * batch is formed). */
size_t bsb_nmax(const uint32_t *lens, size_t n, uint64_t budget);
/* Like bsb_nmax() with accounting ACC and at most MAX_N sequences (0 = no cap).  Both
 * accountings are monotone in N, so the answer is the first prefix that does not fit. */
size_t bsb_fit(const uint32_t *lens, size_t n, uint64_t budget, enum bsb_accounting acc,
	       size_t max_n);

/* Forms the next batch from bucket K of M: pops requests in the bucket's order while the batch
 * still fits in BUDGET tokens under ACC, charging each request CHARGE, at most MAX_N (0 = no
 * cap) and at most CAP; writes their ids to OUT in order and returns how many.  0 when the
 * bucket is empty or its first request alone does not fit (the caller waits for memory, or
 * rejects a request that cannot fit even in an empty device). */
size_t bsb_take(struct bsm *m, size_t k, uint64_t budget, enum bsb_accounting acc,
		enum bsb_charge charge, size_t max_n, uint32_t *out, size_t cap);

#endif
