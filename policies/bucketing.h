/*
 * bucketing: vLLM-Gaudi shape bucketing, reproduced bucket for bucket.
 *
 * A bucket is a shape the server has (or will) compile a graph for:
 *   prompt  (bs, query, ctx_blocks)
 *   decode  (bs, 1, num_blocks)
 *   unified (query, shared_blocks, unique_blocks, causal)
 * stored as `struct bshape` with v[3] = 0 for prompt and decode.
 *
 * Owns the bucket lists of one configuration (sorted lexicographically, as the server sorts
 * them), which grow when a look-up creates a fallback bucket, exactly as the server's do.
 * Specification: the vllm-gaudi bucketing reference (README.md, "Shape bucketing").
 */
#ifndef BS_BUCKETING_H
#define BS_BUCKETING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sim/config.h"
#include "sim/util.h"

enum phase { PHASE_PROMPT = 0, PHASE_DECODE = 1, PHASE_UNIFIED = 2 };

struct bshape {
	int32_t v[4];
};

enum bucket_strategy {
	BUCKET_EXPONENTIAL, BUCKET_LINEAR, BUCKET_PADDING_AWARE, BUCKET_UNIFIED, BUCKET_FILE,
	BUCKET_NONE,
};
enum bucket_version { BUCKET_VERSION_DOCS, BUCKET_VERSION_CURRENT };

/* Everything that decides bucket lists, resolved from server.*, bucketing.* and the --env
 * variables with the reference's precedence and deprecation rules. */
struct bucket_params {
	enum bucket_strategy strategy;
	enum bucket_version version;
	int32_t max_model_len, max_num_seqs, max_num_batched_tokens;
	int32_t max_num_prefill_seqs;    /* after VLLM_PROMPT_BS_BUCKET_MAX / merged prefill */
	int32_t block_size;
	int64_t num_kv_blocks;
	bool prefix_caching, contiguous_pa, merged_prefill;
	bool skip_warmup;                /* bucketing.skip_warmup or VLLM_SKIP_WARMUP */
	bool enabled;                    /* false with strategy none or VLLM_ENABLE_BUCKETING=false */
	char file[512];                  /* strategy file */
	const struct config *cfg;        /* borrowed: for the remaining env variables */
	/* Warnings of the resolution (deprecated or ignored variables, overridden strategy),
	 * one per line without prefix; bucket_params_resolve() also prints each to stderr as
	 * "bucketsim: warning: ...". */
	char warnings[2048];
};

/* server.max_model_len and server.num_kv_blocks must be resolved (set or derived) first. */
int bucket_params_resolve(const struct config *cfg, struct bucket_params *p, struct bs_err *err);

struct bucketer;

/* Generates the warm-up lists.  Errors (bad bucket file, empty list, strategy not in the
 * version) come back in ERR with exit code 3. */
int bucketer_new(const struct bucket_params *p, struct bucketer **out, struct bs_err *err);
void bucketer_free(struct bucketer *b);

/* The current sorted list of PHASE (borrowed; invalidated by a look-up that adds a fallback). */
size_t bucketer_list(const struct bucketer *b, enum phase ph, const struct bshape **out);
/* The warm-up sequence in the order the server compiles it (reversed sorted list, duplicates
 * and skipped buckets removed).  Returns the count; *out is owned by the caller (NULL when
 * the count is 0).  Always taken from the warm-up lists (fallbacks added by look-ups are
 * runtime compiles, not warm-up).  Empty with bucketing disabled or skip_warmup. */
size_t bucketer_warmup(const struct bucketer *b, enum phase ph, struct bshape **out);

/* Maps a real shape to the bucket the server runs.  Returns true when the look-up created a
 * new bucket (a fallback inserted into the sorted list: the one allocation a look-up may do).
 * With bucketing disabled, or a phase the strategy does not have (prompt/decode under unified,
 * unified under the others), it returns the real shape and false.  For a unified miss,
 * *bucket is the unpadded shape and the result false.  Decode shapes are (bs, 1, num_blocks);
 * version current clamps num_blocks to the largest prepared decode ctx before the search. */
bool bucketer_lookup(struct bucketer *b, enum phase ph, const struct bshape *real,
		     struct bshape *bucket);

const char *bucket_phase_name(enum phase ph);
const char *bucket_strategy_name(enum bucket_strategy s);
const char *bucket_version_name(enum bucket_version v);

/* The warm-up list of PHASE as generated, before any look-up (borrowed). */
size_t bucketer_warmup_list(const struct bucketer *b, enum phase ph, const struct bshape **out);
/* The server's "... bucket config (min, step, max_warmup...) ..." log line of PHASE, or "" when
 * the server logs none (file strategy, bucketing off). */
const char *bucketer_config_line(const struct bucketer *b, enum phase ph);
/* Whether the reproduced server version logs that line (false: a bucketsim addition, such as
 * the decode config of version docs or the unified config). */
bool bucketer_config_logged(const struct bucketer *b, enum phase ph);
/* Dimensions of a bucket of PHASE: 3 for prompt and decode, 4 for unified. */
int bucket_phase_ndim(enum phase ph);

#endif
