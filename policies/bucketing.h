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

#include "policies/policy.h"
#include "sim/config.h"
#include "sim/util.h"

enum phase { PHASE_PROMPT = 0, PHASE_DECODE = 1, PHASE_UNIFIED = 2 };

struct bshape {
	int32_t v[4];
};

enum bucket_version { BUCKET_VERSION_DOCS, BUCKET_VERSION_CURRENT };

struct bucket_params;
struct bgen;   /* the generated lists and config lines (policies/bucket_int.h) */

/* Generates the warm-up lists of one strategy and version into G (zeroed by the caller; on
 * error the caller releases it).  Errors come back in ERR with exit code 3. */
typedef int bucket_gen_fn(const struct bucket_params *p, struct bgen *g, struct bs_err *err);

/*
 * A shape-bucketing strategy: the family "bucketing", chosen by bucketing.strategy.  One
 * `const struct bucket_strategy` per file (policies/bucket_<name>.c), registered by one line in
 * policies/registry.c; see policies/README.md, "Adding a bucketing strategy".
 *
 * The reproduced server version enters as one generator per version, because the two versions
 * are two different upstream code bases: a strategy either has its own code per version, or
 * points both members at one function when they agree.  A NULL member means the strategy does
 * not exist in that version, which bucket_params_resolve() reports as an error naming the
 * version.  Look-ups, fallbacks and the warm-up order are per version, not per strategy, and
 * live in bucketing.c.
 */
struct bucket_strategy {
	struct policy_info info;          /* first member (see policies/policy.h) */
	bucket_gen_fn *gen_docs, *gen_current;
	/* The phases its buckets serve, a bit (1u << PHASE_x) each: prompt and decode, or
	 * unified; 0 for no bucketing (every look-up returns the real shape). */
	unsigned phases;
	/* Upstream class named in the server's "Overriding bucketing strategy A with B" warning;
	 * NULL: the strategy's name. */
	const char *upstream_class;
	/* The VLLM_{PROMPT,DECODE}_*_BUCKET_* variables it reads in each version (NULL-terminated,
	 * or NULL for none); every other one given warns "will be overwritten".  Each name is a
	 * row of env_var_defs[]. */
	const char *const *env_docs, *const *env_current;
	/* The `ideal` reference: passes at their real shape are never compiled (sim/kernel_graph.c). */
	bool ideal;
};

#define BUCKET_PHASES_PROMPT_DECODE ((1u << PHASE_PROMPT) | (1u << PHASE_DECODE))
#define BUCKET_PHASES_UNIFIED (1u << PHASE_UNIFIED)

/* The registered strategy named NAME (the registry's "bucketing" family), or NULL. */
const struct bucket_strategy *bucket_strategy_find(const char *name);
/* The generator of version V, or NULL when the strategy does not exist in V. */
bucket_gen_fn *bucket_strategy_gen(const struct bucket_strategy *s, enum bucket_version v);

/* One environment variable bucketsim reads (given with --env or a config file's "env"). */
struct env_var_def {
	const char *name;
	const char *doc;   /* one line */
	const char *unit;  /* CFG_UNIT_FILE when its value names a file (config_files), else NULL */
	const char *key;   /* the config key that sets the same thing, or NULL: a user-set key and
			    * the variable given different values are an error
			    * (bucket_params_resolve) */
};
/* Every variable bucketsim reads, NULL-terminated (policies/bucket_env.c).  A name given that is
 * not here warns "is not a variable bucketsim reads" (an error with sim.strict). */
extern const struct env_var_def env_var_defs[];
const struct env_var_def *env_var_find(const char *name);
/* Every --env name of CFG not in env_var_defs[]: one warning each on stderr (suggesting the
 * nearest known name), or, with sim.strict, an error (exit 3) for the first.  For the commands
 * that do not resolve bucketing parameters (bucket_params_resolve() does the same). */
int env_var_check_names(const struct config *cfg, struct bs_err *err);

/* Everything that decides bucket lists, resolved from server.*, bucketing.* and the --env
 * variables with the reference's precedence and deprecation rules. */
struct bucket_params {
	const struct bucket_strategy *strategy;   /* registered, never NULL after resolution */
	enum bucket_version version;
	int32_t max_model_len, max_num_seqs, max_num_batched_tokens;
	int32_t max_num_prefill_seqs;    /* after VLLM_PROMPT_BS_BUCKET_MAX / merged prefill */
	int32_t block_size;
	int64_t num_kv_blocks;
	bool prefix_caching, contiguous_pa, merged_prefill;
	bool skip_warmup;                /* bucketing.skip_warmup or VLLM_SKIP_WARMUP */
	bool enabled;                    /* false with strategy none (no phases) or VLLM_ENABLE_BUCKETING=false */
	char file[512];                  /* strategy file */
	const struct config *cfg;        /* borrowed: for the remaining env variables */
	/* Warnings of the resolution (deprecated or ignored variables, overridden strategy),
	 * one per line without prefix; bucket_params_resolve() also prints each to stderr as
	 * "bucketsim: warning: ...". */
	char warnings[2048];
};

/* server.contiguous_pa when it is not set: in version docs not server.prefix_caching, in
 * version current false (VLLM_CONTIGUOUS_PA alone turns it on). */
bool bucket_contiguous_pa_auto(enum bucket_version v, bool prefix_caching);

/* server.max_model_len and server.num_kv_blocks must be resolved (set or derived) first.
 * Also checks every --env name against env_var_defs[]: an unknown one warns (with the nearest
 * known name when one is close), or is an error (exit 3) when sim.strict is true; so is a
 * variable given but not read (a bucket knob the resolved strategy ignores, a strategy variable
 * the version ignores, a bucket file unified attention ignores).  A variable and its config
 * key (env_var_def.key) both set by the user to different values are an error (exit 3). */
int bucket_params_resolve(const struct config *cfg, struct bucket_params *p, struct bs_err *err);

/* The resolved strategy's buckets are unified ones (whether or not VLLM_ENABLE_BUCKETING
 * turned bucketing off). */
bool bucket_params_unified(const struct bucket_params *p);
/* The resolved strategy's buckets are prompt and decode ones (same remark). */
bool bucket_params_prompt_decode(const struct bucket_params *p);

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
const char *bucket_version_name(enum bucket_version v);

/* Whether the prompt pass of N fresh prompts (no context), the longest LONGEST tokens and
 * TOTAL in all, runs in a bucket of the warm-up list that vllm-gaudi's runner accepts for one
 * merged prefill pass (vllm_gaudi/v1/worker/hpu_model_runner.py, _can_merge_prefill_contents:
 * the bucket's bs <= max_prefill_batch_size and bs x query <= max_num_batched_tokens, the
 * filter the warm-up grid was generated with).  The pass is (N, LONGEST)
 * (_bucketize_2d_prompt), or (1, TOTAL) with merged prefill (_bucketize_merged_prompt); its
 * bucket is the server's look-up (reference 7), the lexicographically smallest warm-up bucket
 * dominating it, so a pass this accepts compiles nothing at run time.  False with bucketing
 * off or without prompt buckets. */
bool bucketer_prompt_warm(const struct bucketer *b, int64_t n, int64_t longest, int64_t total);
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
