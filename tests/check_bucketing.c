/*
 * check_bucketing: every worked example and upstream unit-test case of the bucketing
 * reference, for both versions: ranges, configs, combination and filters, file syntax,
 * unified buckets, look-ups with fallbacks, warm-up order, parameters and env precedence;
 * then the properties every registered strategy must have, looped over the registry (a new
 * strategy is covered without editing this file), and the --env name check.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policies/bucket_int.h"
#include "policies/bucketing.h"
#include "policies/policy.h"
#include "tests/check_main.h"

static struct config cfg;

static void cset(const char *k, const char *v)
{
	struct bs_err e = {0};
	ck_assert_msg(!config_set(&cfg, k, v, CFG_ORIGIN_CMDLINE, NULL, 0, &e), "%s: %s", k, e.msg);
}

/* A key as a preset sets it: a variable then wins over it. */
static void cpreset(const char *k, const char *v)
{
	struct bs_err e = {0};
	ck_assert_msg(!config_set(&cfg, k, v, CFG_ORIGIN_PRESET, "preset", 0, &e), "%s: %s", k,
		      e.msg);
}

static void cenv(const char *nv)
{
	struct bs_err e = {0};
	ck_assert_msg(!config_set_env_arg(&cfg, nv, CFG_ORIGIN_CMDLINE, &e), "%s: %s", nv, e.msg);
}

static void base(const char *version, const char *mml, const char *mns, const char *nhb)
{
	config_init(&cfg);
	cset("bucketing.version", version);
	cset("server.max_model_len", mml);
	cset("server.max_num_seqs", mns);
	cset("server.num_kv_blocks", nhb);
}

static struct bucketer *make(struct bucket_params *p)
{
	struct bs_err e = {0};
	struct bucketer *b = NULL;
	ck_assert_msg(!bucket_params_resolve(&cfg, p, &e), "resolve: %s: %s", e.field, e.msg);
	ck_assert_msg(!bucketer_new(p, &b, &e), "new: %s", e.msg);
	return b;
}

/* Resolve + new expected to fail: returns the error. */
static struct bs_err make_fail(void)
{
	struct bs_err e = {0};
	struct bucket_params p;
	struct bucketer *b = NULL;
	if (!bucket_params_resolve(&cfg, &p, &e)) {
		ck_assert_int_ne(bucketer_new(&p, &b, &e), 0);
		ck_assert_ptr_null(b);
	}
	ck_assert_int_ne(e.code, 0);
	return e;
}

static void done(struct bucketer *b)
{
	bucketer_free(b);
	config_release(&cfg);
}

static char *list_str(const struct bucketer *b, enum phase ph)
{
	const struct bshape *l;
	size_t n = bucketer_list(b, ph, &l);
	struct blist v = {(struct bshape *)l, n, n};
	char *s = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&s, &len);
	blist_print_py(&v, bucket_phase_ndim(ph), f);
	fclose(f);
	return s;
}

static size_t count(const struct bucketer *b, enum phase ph)
{
	const struct bshape *l;
	return bucketer_list(b, ph, &l);
}

static bool has(const struct bucketer *b, enum phase ph, int a, int q, int c, int d)
{
	const struct bshape *l;
	size_t n = bucketer_list(b, ph, &l);
	for (size_t i = 0; i < n; i++)
		if (l[i].v[0] == a && l[i].v[1] == q && l[i].v[2] == c && l[i].v[3] == d)
			return true;
	return false;
}

static void range_is(const struct ivec *r, const int64_t *want, size_t n)
{
	ck_assert_uint_eq(r->n, n);
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(r->v[i] == want[i], "element %zu: got %lld want %lld", i,
			      (long long)r->v[i], (long long)want[i]);
}
#define RANGE_IS(r, ...) do { const int64_t w_[] = {__VA_ARGS__}; \
	range_is(r, w_, sizeof w_ / sizeof w_[0]); } while (0)

static struct bshape look(struct bucketer *b, enum phase ph, int a, int q, int c, int d,
			  bool *fallback)
{
	struct bshape t = {{a, q, c, d}}, out;
	*fallback = bucketer_lookup(b, ph, &t, &out);
	return out;
}

#define SHAPE_IS(s, a, q, c) do { ck_assert_int_eq((s).v[0], a); ck_assert_int_eq((s).v[1], q); \
	ck_assert_int_eq((s).v[2], c); } while (0)

/* ---------------- ranges ---------------- */

START_TEST(exp_range_head)
{
	struct ivec r = {0};
	brange_exp(&r, 128, 128, 2048, 11, false);
	RANGE_IS(&r, 128, 256, 384, 512, 768, 896, 1280, 1664, 2048);
	ivec_free(&r);
	brange_exp(&r, 1, 2, 256, 9, false);
	RANGE_IS(&r, 1, 2, 4, 8, 14, 24, 42, 78, 140, 256);
	ivec_free(&r);
	brange_exp(&r, 0, 1, 31, 6, false);
	RANGE_IS(&r, 0, 1, 2, 4, 8, 16, 31);
	ivec_free(&r);
	brange_exp(&r, 1, 64, 2048, 12, false);
	RANGE_IS(&r, 1, 64, 128, 192, 256, 320, 448, 640, 832, 1152, 1536, 2048);
	ivec_free(&r);
	brange_exp(&r, 1, 256, 10779, 14, false);
	RANGE_IS(&r, 1, 256, 512, 768, 1024, 1280, 1536, 2048, 2560, 3584, 4608, 6144, 8192, 10779);
	ivec_free(&r);
	/* test_exponential_warmup_range_contiguous_pa: last bucket is exactly the max */
	brange_exp(&r, 1, 256, 3593, 13, true);
	ck_assert_int_eq(r.v[r.n - 1], 3593);
	ck_assert_int_ge(r.v[0], 1);
	ivec_free(&r);
	/* n <= 1 gives [bmax] without the extra point */
	brange_exp(&r, 1, 2, 1, 1, false);
	RANGE_IS(&r, 1);
	ivec_free(&r);
	brange_exp(&r, 0, 1, 7, 4, false);
	RANGE_IS(&r, 0, 1, 2, 4, 7);
	ivec_free(&r);
}
END_TEST

START_TEST(exp_range_fill_legacy)
{
	struct ivec r = {0};
	brange_exp_fill(&r, 128, 128, 1024, 11, false);
	RANGE_IS(&r, 128, 256, 384, 512, 640, 768, 896, 1024);
	ivec_free(&r);
	brange_exp_fill(&r, 128, 128, 5781, 14, false);
	RANGE_IS(&r, 128, 256, 384, 512, 640, 768, 896, 1024, 1408, 1792, 2432, 3328, 4352, 5888);
	ivec_free(&r);
	/* the upstream docstring example: fill adds 768 */
	brange_exp_fill(&r, 128, 128, 2048, 10, false);
	RANGE_IS(&r, 128, 256, 384, 512, 640, 768, 896, 1152, 1536, 2048);
	ivec_free(&r);
	brange_exp_fill(&r, 1, 1, 4, 3, false);
	RANGE_IS(&r, 1, 2, 4);
	ivec_free(&r);
	brange_exp_fill(&r, 128, 128, 5781, 14, true);   /* contiguous PA: last point = bmax */
	ck_assert_int_eq(r.v[r.n - 1], 5781);
	ivec_free(&r);
	brange_exp_fill(&r, 1, 1, 1, 1, false);
	RANGE_IS(&r, 1);
	ivec_free(&r);
}
END_TEST

START_TEST(lin_range)
{
	struct ivec r = {0};
	ck_assert_int_eq(brange_lin(&r, 2, 32, 64, true), 0);
	RANGE_IS(&r, 2, 4, 8, 16, 32, 64);
	ivec_free(&r);
	brange_lin(&r, 128, 128, 512, true);
	RANGE_IS(&r, 128, 256, 384, 512);
	ivec_free(&r);
	brange_lin(&r, 2, 64, 128, true);   /* test_warmup_range */
	RANGE_IS(&r, 2, 4, 8, 16, 32, 64, 128);
	ivec_free(&r);
	brange_lin(&r, 1, 64, 128, true);   /* test_warmup_range_with_one */
	RANGE_IS(&r, 1, 2, 4, 8, 16, 32, 64, 128);
	ivec_free(&r);
	brange_lin(&r, 0, 1, 7, true);
	RANGE_IS(&r, 0, 1, 2, 3, 4, 5, 6, 7);
	ivec_free(&r);
	brange_lin(&r, 0, 1, 0, true);
	RANGE_IS(&r, 0);
	ivec_free(&r);
	brange_lin(&r, 1, 32, 4, true);
	RANGE_IS(&r, 1, 2, 4);
	ivec_free(&r);
	brange_lin(&r, 1, 128, 200, true);   /* bmax itself only when a multiple of the step */
	RANGE_IS(&r, 1, 2, 4, 8, 16, 32, 64, 128);
	ivec_free(&r);
	/* upstream asserts min <= max on the given minimum, then min := step: 0 <= 2 holds, the
	 * ramp (4 < 4) and the multiples of 4 up to 2 are empty, so only the 0 remains */
	ck_assert_int_eq(brange_lin(&r, 0, 4, 2, true), 0);
	RANGE_IS(&r, 0);
	ivec_free(&r);
	ck_assert_int_eq(brange_lin(&r, 8, 4, 2, true), -1);
	ck_assert_int_eq(brange_lin(&r, 0, 4, 64, false), -1);   /* legacy: no 0 case */
	ck_assert_int_eq(brange_lin(&r, 1, 0, 64, true), -1);
	ivec_free(&r);
	/* a minimum above the step and not a multiple of it: no ramp (5 < 4 fails), then the
	 * multiples of 4 from 5 on; appended after what the output already holds */
	ivec_push(&r, 99);
	ck_assert_int_eq(brange_lin(&r, 5, 4, 17, true), 0);
	RANGE_IS(&r, 99, 8, 12, 16);
	ivec_free(&r);
	/* a huge minimum costs nothing: the multiples start at the first one >= min, not at the
	 * step (2^62 iterations before) */
	int64_t big = (int64_t)1 << 62;
	ck_assert_int_eq(brange_lin(&r, big, 1, big + 2, false), 0);
	RANGE_IS(&r, big, big + 1, big + 2);
	ivec_free(&r);
	ck_assert_int_eq(brange_lin(&r, big + 1, big / 4, big + big / 2, true), 0);
	RANGE_IS(&r, big + big / 4, big + big / 2);
	ivec_free(&r);
}
END_TEST

START_TEST(pad_range)
{
	struct ivec r = {0};
	brange_pad(&r, 0, 8, 64, 64, 0);
	RANGE_IS(&r, 0, 1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64);
	ivec_free(&r);
	brange_pad(&r, 0, 8, 64, 64, 50);
	RANGE_IS(&r, 0, 1, 2, 4, 8, 16, 32, 64);
	ivec_free(&r);
	brange_pad(&r, 0, 8, 64, 16, 50);
	RANGE_IS(&r, 0, 1, 2, 4, 8, 16, 32, 48, 64);
	ivec_free(&r);
	brange_pad(&r, 16, 16, 128, 32, 25);
	RANGE_IS(&r, 16, 32, 48, 64, 80, 96, 128);
	ivec_free(&r);
	brange_pad(&r, 0, 8, 64, 0, 50);   /* pad_max 0 means max */
	RANGE_IS(&r, 0, 1, 2, 4, 8, 16, 32, 64);
	ivec_free(&r);
	ck_assert_int_eq(brange_pad(&r, 0, 0, 64, 0, 50), -1);
	ivec_free(&r);
}
END_TEST

START_TEST(unified_ranges)
{
	struct ivec r = {0};
	brange_unified_alpha(&r, 128, 2048, 32);
	RANGE_IS(&r, 8, 16, 32, 512, 1024, 2048);
	ivec_free(&r);
	brange_unified_alpha(&r, 0, 256, 32);
	RANGE_IS(&r, 0, 8, 16, 32, 64, 128, 256);
	ivec_free(&r);
	brange_unified_alpha(&r, 0, 5781, 32);
	RANGE_IS(&r, 0, 8, 16, 32, 1445, 2890, 5781);
	ivec_free(&r);
	brange_unified_last(&r, 0, 8, 32);   /* values can exceed the max */
	RANGE_IS(&r, 0, 8, 32);
	ivec_free(&r);
}
END_TEST

START_TEST(fallback_function)
{
	ck_assert_int_eq(bucket_fb(31, 32), 128);
	ck_assert_int_eq(bucket_fb(1024, 32), 1056);
	ck_assert_int_eq(bucket_fb(1000, 32), 1280);
	ck_assert_int_eq(bucket_fb(4026, 32), 4096);
	ck_assert_int_eq(bucket_fb(4001, 32), 4096);
	ck_assert_int_eq(bucket_fb(7365, 32), 7680);
	ck_assert_int_eq(bucket_fb(50000, 32), 50912);
	ck_assert_int_eq(bucket_fb(22, 2), 24);
	ck_assert_int_eq(bucket_fb(43, 2), 48);
	ck_assert_int_eq(bucket_fb(129, 2), 132);
	ck_assert_int_eq(bucket_fb(1, 32), 1);
	ck_assert_int_eq(bucket_fb(0, 32), 0);
}
END_TEST

START_TEST(fallback_buckets_current)
{
	/* test_fallback_bucket_ctx_uses_calc_fallback and the real-scenario fallbacks */
	struct bucket_params p = {0};
	p.max_num_seqs = 256;
	p.max_num_batched_tokens = 131072;
	p.block_size = 128;
	struct bshape s = bucket_fallback_current(&p, 64, 512, 50000, 10779);
	ck_assert_int_eq(s.v[2], 10779);
	s = bucket_fallback_current(&p, 64, 512, 7365, 10779);
	ck_assert_int_eq(s.v[2], 7680);
	p.max_num_batched_tokens = 2048;
	s = bucket_fallback_current(&p, 24, 1, 4026, 10779);
	ck_assert_int_eq(s.v[2], 4096);
	ck_assert_int_ge(s.v[0], 24);
	ck_assert_int_eq(s.v[1], 1);
	s = bucket_fallback_current(&p, 22, 1, 3833, 10779);
	ck_assert_int_eq(s.v[2], 4096);
	ck_assert_int_eq(s.v[0], 24);
	s = bucket_fallback_current(&p, 43, 1, 7365, 10779);
	ck_assert_int_eq(s.v[2], 7680);
	ck_assert_int_eq(s.v[0], 48);
	s = bucket_fallback_current(&p, 44, 1, 7408, 10779);
	ck_assert_int_eq(s.v[2], 7680);
	s = bucket_fallback_current(&p, 300, 1, 10, 10779);   /* bs capped at max_num_seqs */
	ck_assert_int_eq(s.v[0], 256);
	/* A query past max_num_batched_tokens gets upstream's bucket, shorter than itself
	 * (generate_fallback_bucket: new_seq_len = min(calc_fallback_value(seq_len, 32),
	 * max_num_batched_tokens)): calc_fallback_value(4062, 32) = ceil(4062 / (ceil(4062^(1/3))
	 * x 32)) x 512 = 8 x 512 = 4096, capped at 2048; bs calc_fallback_value(1, 2) = 1; ctx 0.
	 * (The kernel never looks such a pass up: sim/kernel_graph.c; check_kernel's
	 * over_budget_prompt_pass.) */
	s = bucket_fallback_current(&p, 1, 4062, 0, 10779);
	SHAPE_IS(s, 1, 2048, 0);
	s = bucket_fallback_current(&p, 1, 2000, 0, 10779);   /* fb(2000, 32) = 5 x 416 = 2080 */
	SHAPE_IS(s, 1, 2048, 0);
	/* The cross-check's prompt:5,2366,0 (max_num_seqs 64): bs ceil(5 / (2 x 2)) x 4 = 8,
	 * query ceil(2366 / (14 x 32)) x 448 = 2688, capped at 2048. */
	p.max_num_seqs = 64;
	s = bucket_fallback_current(&p, 5, 2366, 0, 3);
	SHAPE_IS(s, 8, 2048, 0);
	p.max_num_seqs = 256;
	/* legacy */
	p.block_size = 128;
	s = bucket_fallback_docs(&p, PHASE_PROMPT, 3, 1100, 3);
	SHAPE_IS(s, 4, 1152, 4);
	s = bucket_fallback_docs(&p, PHASE_DECODE, 5, 1, 7001);
	SHAPE_IS(s, 8, 1, 7002);
}
END_TEST

/* ---------------- version current: configs ---------------- */

START_TEST(current_exp_real_scenario)
{
	/* mns=256, B=128, mnbt=2048, mml=91964, nhb=3593, non-contiguous PA */
	base("current", "91964", "256", "3593");
	struct bucket_params p;
	struct bucketer *b = make(&p);
	ck_assert_str_eq(bucketer_config_line(b, PHASE_PROMPT),
			 "Prompt bucket config (min, step, max_warmup, limit) bs:[1, 2, 1, 1], "
			 "query:[128, 128, 2048, 11], blocks:[0, 1, 702, 11]");
	ck_assert_str_eq(bucketer_config_line(b, PHASE_DECODE),
			 "Decode bucket config (min, step, max_warmup, limit) bs:[1, 2, 256, 9], "
			 "block:[1, 256, 10779, 15]");
	const struct bshape *l;
	size_t n = bucketer_list(b, PHASE_DECODE, &l);
	int32_t maxc = 0;
	for (size_t i = 0; i < n; i++) {
		if (l[i].v[2] > maxc)
			maxc = l[i].v[2];
		ck_assert_int_ge(l[i].v[2], 1);
		ck_assert_int_le(l[i].v[2], l[i].v[0] * 719);
	}
	ck_assert_int_eq(maxc, 10779);
	/* the decode bs range matches the log */
	const int want_bs[] = {1, 2, 4, 8, 14, 24, 42, 78, 140, 256};
	for (size_t i = 0; i < 10; i++) {
		bool found = false;
		for (size_t k = 0; k < n && !found; k++)
			found = l[k].v[0] == want_bs[i];
		ck_assert_msg(found, "bs %d missing", want_bs[i]);
	}
	/* long-context edge: the largest ctx column becomes (mml - q) // B for each query */
	ck_assert(has(b, PHASE_PROMPT, 1, 128, 717, 0));
	ck_assert(has(b, PHASE_PROMPT, 1, 2048, 702, 0));
	ck_assert(has(b, PHASE_PROMPT, 1, 896, 711, 0));
	ck_assert(!has(b, PHASE_PROMPT, 1, 2048, 717, 0));
	ck_assert(!has(b, PHASE_PROMPT, 1, 128, 702, 0));
	ck_assert(has(b, PHASE_PROMPT, 1, 128, 0, 0) && has(b, PHASE_PROMPT, 1, 128, 1, 0));
	done(b);
	/* VLLM_PROMPT_CTX_BUCKET_MAX bounds the edge value (e < MAX), for every strategy */
	base("current", "91964", "256", "3593");
	cenv("VLLM_PROMPT_CTX_BUCKET_MAX=712");
	b = make(&p);
	ck_assert(has(b, PHASE_PROMPT, 1, 128, 702, 0));
	ck_assert(!has(b, PHASE_PROMPT, 1, 128, 717, 0));
	ck_assert(has(b, PHASE_PROMPT, 1, 1280, 708, 0));
	ck_assert_str_eq(p.warnings, "");
	done(b);

	base("current", "91964", "256", "3593");
	cset("server.contiguous_pa", "true");
	b = make(&p);
	ck_assert_str_eq(bucketer_config_line(b, PHASE_DECODE),
			 "Decode bucket config (min, step, max_warmup, limit) bs:[1, 2, 256, 9], "
			 "block:[1, 256, 3593, 13]");
	n = bucketer_list(b, PHASE_DECODE, &l);
	ck_assert_int_eq(l[n - 1].v[2], 3593);
	done(b);
}
END_TEST

START_TEST(current_exp_small)
{
	/* reference 2.5: 30 prompt and 13 decode buckets */
	base("current", "1024", "4", "5781");
	struct bucket_params p;
	struct bucketer *b = make(&p);
	ck_assert_uint_eq(count(b, PHASE_PROMPT), 30);
	ck_assert_uint_eq(count(b, PHASE_DECODE), 13);
	char *s = list_str(b, PHASE_DECODE);
	ck_assert_str_eq(s, "[(1, 1, 1), (1, 1, 4), (1, 1, 8), (2, 1, 4), (2, 1, 8), (2, 1, 12), "
			    "(2, 1, 16), (4, 1, 4), (4, 1, 8), (4, 1, 12), (4, 1, 16), (4, 1, 24), "
			    "(4, 1, 32)]");
	free(s);
	ck_assert(has(b, PHASE_PROMPT, 1, 896, 7, 0));
	ck_assert(!has(b, PHASE_PROMPT, 1, 1280, 0, 0));
	ck_assert(!has(b, PHASE_PROMPT, 1, 128, 3, 0));
	done(b);
	/* VLLM_PROMPT_QUERY_BUCKET_MIN=1 is honoured by exp */
	base("current", "1024", "4", "5781");
	cenv("VLLM_PROMPT_QUERY_BUCKET_MIN=1");
	b = make(&p);
	ck_assert_str_eq(bucketer_config_line(b, PHASE_PROMPT),
			 "Prompt bucket config (min, step, max_warmup, limit) bs:[1, 2, 1, 1], "
			 "query:[1, 128, 2048, 11], blocks:[0, 1, 7, 4]");
	ck_assert(has(b, PHASE_PROMPT, 1, 1, 0, 0));
	done(b);
}
END_TEST

/* The warmed prompt grid a prefill batch stays in (bucketer_prompt_warm), worked from reference
 * 2.1/2.2/2.4: mnps 16, mnbt 2048, B 128, mml 4096: bs ExpRange(1,2,16,5) = {1,2,4,6,10,16},
 * query ExpRange(128,128,2048,11) = {128,256,384,512,768,896,1280,1664,2048}, kept while
 * bs x query <= 2048. */
START_TEST(prompt_pass_warm)
{
	base("current", "4096", "256", "4025");
	cset("server.max_num_prefill_seqs", "16");
	struct bucket_params p;
	struct bucketer *b = make(&p);
	ck_assert(bucketer_prompt_warm(b, 1, 2048, 2048));   /* (1, 2048) */
	ck_assert(!bucketer_prompt_warm(b, 1, 2049, 2049));  /* no query bucket above 2048 */
	ck_assert(bucketer_prompt_warm(b, 2, 896, 1000));    /* (2, 896): 1792 */
	ck_assert(!bucketer_prompt_warm(b, 2, 897, 1000));   /* (2, 1280) is 2560: not warmed */
	ck_assert(bucketer_prompt_warm(b, 3, 512, 600));     /* (4, 512): 2048 */
	ck_assert(!bucketer_prompt_warm(b, 5, 384, 600));    /* (6, 384) is 2304 */
	ck_assert(bucketer_prompt_warm(b, 11, 128, 600));    /* (16, 128): 2048 */
	ck_assert(!bucketer_prompt_warm(b, 16, 129, 600));   /* (16, 256) is 4096 */
	ck_assert(!bucketer_prompt_warm(b, 17, 1, 17));      /* bs > max_num_prefill_seqs */
	done(b);
	/* vllm-gaudi's default max_num_prefill_seqs 1: one prompt a pass */
	base("current", "4096", "256", "4025");
	b = make(&p);
	ck_assert(bucketer_prompt_warm(b, 1, 100, 100));
	ck_assert(!bucketer_prompt_warm(b, 2, 100, 200));
	done(b);
	/* merged prefill: one sequence of the summed tokens, bucket (1, query) */
	base("current", "4096", "256", "4025");
	cset("server.merged_prefill", "true");
	b = make(&p);
	ck_assert(bucketer_prompt_warm(b, 5, 100, 2000));
	ck_assert(!bucketer_prompt_warm(b, 5, 100, 2100));
	done(b);
	/* no buckets: nothing is a warm-up bucket */
	base("current", "4096", "256", "4025");
	cset("bucketing.strategy", "none");
	b = make(&p);
	ck_assert(!bucketer_prompt_warm(b, 1, 100, 100));
	done(b);
}
END_TEST

START_TEST(current_linear)
{
	base("current", "1024", "4", "5781");
	cset("bucketing.strategy", "linear");
	struct bucket_params p;
	struct bucketer *b = make(&p);
	ck_assert_uint_eq(count(b, PHASE_PROMPT), 64);
	ck_assert_uint_eq(count(b, PHASE_DECODE), 12);
	done(b);
	/* test_read_bucket_settings: env PROMPT_BS 1/16/64 */
	base("current", "1024", "4", "5781");
	cenv("VLLM_BUCKETING_STRATEGY=lin");
	cenv("VLLM_PROMPT_BS_BUCKET_MIN=1");
	cenv("VLLM_PROMPT_BS_BUCKET_STEP=16");
	cenv("VLLM_PROMPT_BS_BUCKET_MAX=64");
	cset("server.max_num_batched_tokens", "65536");
	b = make(&p);
	ck_assert_int_eq(p.max_num_prefill_seqs, 64);
	ck_assert_ptr_nonnull(strstr(bucketer_config_line(b, PHASE_PROMPT), "bs:[1, 16, 64]"));
	done(b);
	/* test_read_bucket_settings_empty_flags: defaults (1, 32, mns=128) */
	base("current", "1024", "128", "5781");
	cset("bucketing.strategy", "linear");
	b = make(&p);
	ck_assert_ptr_nonnull(strstr(bucketer_config_line(b, PHASE_DECODE), "bs:[1, 32, 128]"));
	done(b);
	/* contiguous PA: user block max above nhb is clamped, min > max corrected */
	base("current", "4096", "64", "3593");
	cset("bucketing.strategy", "linear");
	cenv("VLLM_CONTIGUOUS_PA=true");
	cenv("VLLM_DECODE_BLOCK_BUCKET_MIN=4096");
	cenv("VLLM_DECODE_BLOCK_BUCKET_MAX=8192");
	b = make(&p);
	ck_assert_ptr_nonnull(strstr(bucketer_config_line(b, PHASE_DECODE),
				     "blocks:[3465, 128, 3593]"));
	done(b);
}
END_TEST

START_TEST(current_padding_aware_cfgs)
{
	struct bucket_params p;
	base("current", "4096", "64", "3593");
	cset("bucketing.strategy", "padding_aware");
	cset("server.max_num_prefill_seqs", "16");
	struct bucketer *b = make(&p);
	ck_assert_str_eq(bucketer_config_line(b, PHASE_PROMPT),
			 "Prompt bucket config (min, step, max_warmup, pad_max, pad_percent) "
			 "bs:[1, 1, 16, 4, 25], query:[128, 128, 2048, 512, 25], "
			 "blocks:[0, 2, 31, 16, 25]");
	done(b);
	/* merged prefill: mnps = max_num_seqs = 16 */
	base("current", "4096", "16", "3593");
	cenv("VLLM_BUCKETING_STRATEGY=pad");
	cenv("VLLM_MERGED_PREFILL=true");
	b = make(&p);
	ck_assert_int_eq(p.max_num_prefill_seqs, 16);
	ck_assert_str_eq(bucketer_config_line(b, PHASE_PROMPT),
			 "Prompt bucket config (min, step, max_warmup, pad_max, pad_percent) "
			 "bs:(1, 1, 1, 4, 25), query:(128, 512, 2048, 512, 25), "
			 "blocks:[0, 4, 496, 16, 25]");
	done(b);
	/* merged prefill preserves the user's padding limits */
	base("current", "4096", "16", "3593");
	cenv("VLLM_BUCKETING_STRATEGY=pad");
	cset("server.merged_prefill", "true");
	cenv("VLLM_PROMPT_BS_BUCKET_PAD_MAX=8");
	cenv("VLLM_PROMPT_BS_BUCKET_PAD_PERCENT=10");
	cenv("VLLM_PROMPT_QUERY_BUCKET_STEP=256");
	cenv("VLLM_PROMPT_QUERY_BUCKET_PAD_MAX=640");
	cenv("VLLM_PROMPT_QUERY_BUCKET_PAD_PERCENT=15");
	cenv("VLLM_PROMPT_CTX_BUCKET_PAD_MAX=32");
	cenv("VLLM_PROMPT_CTX_BUCKET_PAD_PERCENT=5");
	b = make(&p);
	ck_assert_str_eq(bucketer_config_line(b, PHASE_PROMPT),
			 "Prompt bucket config (min, step, max_warmup, pad_max, pad_percent) "
			 "bs:(1, 1, 1, 8, 10), query:(128, 1024, 2048, 640, 15), "
			 "blocks:[0, 4, 496, 32, 5]");
	done(b);
	/* contiguous PA clamps the decode block range */
	base("current", "4096", "64", "3593");
	cenv("VLLM_BUCKETING_STRATEGY=pad");
	cenv("VLLM_CONTIGUOUS_PA=true");
	cenv("VLLM_DECODE_BLOCK_BUCKET_MIN=4096");
	cenv("VLLM_DECODE_BLOCK_BUCKET_STEP=128");
	cenv("VLLM_DECODE_BLOCK_BUCKET_MAX=8192");
	b = make(&p);
	ck_assert_ptr_nonnull(strstr(bucketer_config_line(b, PHASE_DECODE),
				     "blocks:[3465, 128, 3593, 899, 25]"));
	done(b);
	/* non-contiguous PA: no clamp of the maximum; a minimum above num_kv_blocks is still
	 * lowered; pad_max defaults to a quarter of the default maximum (ceil(4096*64/128) = 2048) */
	base("current", "4096", "64", "3593");
	cenv("VLLM_BUCKETING_STRATEGY=pad");
	cenv("VLLM_DECODE_BLOCK_BUCKET_MIN=4096");
	cenv("VLLM_DECODE_BLOCK_BUCKET_MAX=8192");
	b = make(&p);
	ck_assert_ptr_nonnull(strstr(bucketer_config_line(b, PHASE_DECODE),
				     "blocks:[3465, 128, 8192, 512, 25]"));
	done(b);
	/* the legacy SEQ names are a fallback for QUERY, padding limits included */
	base("current", "4096", "64", "3593");
	cenv("VLLM_BUCKETING_STRATEGY=pad");
	cenv("VLLM_PROMPT_SEQ_BUCKET_MIN=64");
	cenv("VLLM_PROMPT_SEQ_BUCKET_STEP=128");
	cenv("VLLM_PROMPT_SEQ_BUCKET_MAX=1024");
	cenv("VLLM_PROMPT_SEQ_BUCKET_PAD_MAX=256");
	cenv("VLLM_PROMPT_SEQ_BUCKET_PAD_PERCENT=10");
	b = make(&p);
	ck_assert_ptr_nonnull(strstr(bucketer_config_line(b, PHASE_PROMPT),
				     "query:[64, 128, 1024, 256, 10]"));
	done(b);
}
END_TEST

START_TEST(current_generate_buckets)
{
	/* test_generate_prompt_buckets: 25 buckets */
	struct bucket_params p = {0};
	p.max_model_len = 2048;
	p.max_num_seqs = 16;
	p.max_num_prefill_seqs = 16;
	p.max_num_batched_tokens = 2048;
	p.block_size = 64;
	p.num_kv_blocks = 1024;
	struct ivec bs = {0}, q = {0}, ctx = {0};
	for (int i = 1; i <= 16; i *= 2)
		ivec_push(&bs, i);
	ivec_push(&q, 512);
	ivec_push(&q, 1024);
	for (int i = 0; i <= 4; i++)
		ivec_push(&ctx, i);
	struct blist out = {0};
	struct bs_err e = {0};
	ck_assert_int_eq(bucket_combine_prompt(&p, &bs, &q, &ctx, &out, &e), 0);
	ck_assert_uint_eq(out.n, 25);
	blist_free(&out);
	ivec_free(&bs);
	/* test_generate_decode_buckets: 18 buckets, ctx <= bs*16 */
	p.max_num_seqs = 64;
	p.max_num_batched_tokens = 131072;
	p.block_size = 128;
	for (int i = 1; i <= 64; i *= 2)
		ivec_push(&bs, i);
	struct ivec blk = {0};
	for (int i = 128; i <= 2048; i += 128)
		ivec_push(&blk, i);
	ck_assert_int_eq(bucket_combine_decode(&p, &bs, &blk, &out, &e), 0);
	ck_assert_uint_eq(out.n, 18);
	for (size_t i = 0; i < out.n; i++)
		ck_assert_int_le(out.a[i].v[2], out.a[i].v[0] * 16);
	blist_free(&out);
	/* contiguous PA: the full product */
	p.contiguous_pa = true;
	ck_assert_int_eq(bucket_combine_decode(&p, &bs, &blk, &out, &e), 0);
	ck_assert_uint_eq(out.n, 7 * 16);
	blist_free(&out);
	/* empty result is an error */
	p.max_num_batched_tokens = 100;
	ck_assert_int_eq(bucket_combine_prompt(&p, &bs, &q, &ctx, &out, &e), -1);
	ck_assert_int_eq(e.code, BS_EXIT_INPUT);
	blist_free(&out);
	ivec_free(&bs);
	ivec_free(&q);
	ivec_free(&ctx);
	ivec_free(&blk);
}
END_TEST

/* Merged prefill with max_model_len >= 8192: upstream common.generate_buckets applies the
 * long-context edge rule whenever is_prompt (it does not test merged_prefill), so the largest
 * ctx column (48) becomes (mml - q) // B = 28 (q 1024) and 24 (q 2048), which the
 * merged-prefill filter keeps.  Expected list computed with a re-implementation of
 * vllm-gaudi vllm_gaudi/extension/bucketing/{common,exponential}.py (newest stored common.py,
 * the one that imports padding_aware; the rule is unchanged since #739). */
/* Configurations the cross-check against upstream's Python (tests/upstream_buckets.sh) found
 * diverging; expected lists worked out by hand from upstream's rules. */
START_TEST(current_upstream_found)
{
	struct bucket_params p;
	struct bucketer *b;
	/* LinearBucketingStrategy.get_decode_cfgs: a block minimum above the maximum becomes
	 * max(1, max - step).  mml 435, mns 8, B 128: max = max(435*8 // 128, 128) = 128, min 300 ->
	 * max(1, 128 - 128) = 1; blocks (1, 128, 128) = 1, 2, 4, ..., 64, 128; bs (1, 32, 8) =
	 * 1, 2, 4, 8; keep bs <= blocks, then blocks := min(blocks, bs * ceil(435 / 128) = 4 bs) */
	base("current", "435", "8", "3593");
	cset("bucketing.strategy", "linear");
	cenv("VLLM_DECODE_BLOCK_BUCKET_MIN=300");
	b = make(&p);
	char *s = list_str(b, PHASE_DECODE);
	ck_assert_str_eq(s, "[(1, 1, 1), (1, 1, 2), (1, 1, 4), (2, 1, 2), (2, 1, 4), (2, 1, 8), "
			 "(4, 1, 4), (4, 1, 8), (4, 1, 16), (8, 1, 8), (8, 1, 16), (8, 1, 32)]");
	free(s);
	done(b);
	/* padding-aware compares the minimum with num_kv_blocks instead (PaddingAware
	 * get_decode_cfgs): min 300 <= 3593 stays, blocks (300, 128, max(ceil(435*8/128), 128) =
	 * 128) is min > max, which upstream's range asserts against */
	base("current", "435", "8", "3593");
	cset("bucketing.strategy", "padding_aware");
	cenv("VLLM_DECODE_BLOCK_BUCKET_MIN=300");
	ck_assert_str_eq(make_fail().field, "VLLM_DECODE_BLOCK_BUCKET_MAX");
	config_release(&cfg);
	/* HPUBucketingManager.generate_decode_buckets appends num_hpu_blocks to the block range of
	 * every strategy when contiguous PA ends it below: linear blocks (1, 128, nhb = 1000) =
	 * 1 .. 64 doubling, 128 .. 896 by 128, then 1000; bs 1, 2, 4; no filter with contiguous PA:
	 * 3 x 15 buckets */
	base("current", "1024", "4", "1000");
	cset("bucketing.strategy", "linear");
	cset("server.contiguous_pa", "true");
	b = make(&p);
	ck_assert_uint_eq(count(b, PHASE_DECODE), 45);
	ck_assert(has(b, PHASE_DECODE, 1, 1, 896, 0));
	ck_assert(has(b, PHASE_DECODE, 4, 1, 1000, 0));
	done(b);
	/* padding-aware with a user maximum 512: blocks (128, 128, 512, pad_max ceil(1000/4) = 250,
	 * 25 %) = 128, 256, 384, 512 (each step pads over 25 %), then 1000; bs (1, 2, 4, 1, 25) =
	 * 1, 2, 4: 3 x 5 buckets */
	base("current", "1024", "4", "1000");
	cset("bucketing.strategy", "padding_aware");
	cset("server.contiguous_pa", "true");
	cenv("VLLM_DECODE_BLOCK_BUCKET_MAX=512");
	b = make(&p);
	s = list_str(b, PHASE_DECODE);
	ck_assert_str_eq(s, "[(1, 1, 128), (1, 1, 256), (1, 1, 384), (1, 1, 512), (1, 1, 1000), "
			 "(2, 1, 128), (2, 1, 256), (2, 1, 384), (2, 1, 512), (2, 1, 1000), "
			 "(4, 1, 128), (4, 1, 256), (4, 1, 384), (4, 1, 512), (4, 1, 1000)]");
	free(s);
	done(b);
	/* linear prompt ctx (0, 13, (95 - 32) // 32 = 1): warmup_range asserts 0 <= 1, then the
	 * step 13 leaves only the 0; B 32, queries 32, 64 (<= 95 and <= mnbt), bs 1 */
	base("current", "95", "32", "26");
	cset("server.block_size", "32");
	cset("bucketing.strategy", "linear");
	cenv("VLLM_PROMPT_CTX_BUCKET_STEP=13");
	b = make(&p);
	s = list_str(b, PHASE_PROMPT);
	ck_assert_str_eq(s, "[(1, 32, 0), (1, 64, 0)]");
	free(s);
	done(b);
	/* unified: upstream's generate_unified_buckets divides by zero when max_num_seqs = 1
	 * (current: query 1, shared_blocks * B // (1 // 2)) or < 4 (docs: query max_num_seqs // 4
	 * = 0 in a causal bucket): an error naming the key */
	base("current", "1024", "1", "500");
	cset("bucketing.strategy", "unified");
	struct bs_err e = make_fail();
	ck_assert_str_eq(e.field, "server.max_num_seqs");
	ck_assert_ptr_nonnull(strstr(e.msg, "divide by zero"));
	config_release(&cfg);
	base("docs", "1024", "3", "500");
	cset("bucketing.strategy", "unified");
	ck_assert_str_eq(make_fail().field, "server.max_num_seqs");
	config_release(&cfg);
	/* generate_fallback_bucket caps a prompt fallback's ctx at ceil((mml - 1) / B) only (the
	 * prepared decode maximum caps decode fallbacks): mml 1024, nhb 5 with contiguous PA, so
	 * decode blocks end at 5; prompt (2, 100, 5) misses (bs 2 > mnps 1) and falls back to
	 * (min(fb(2, 2) = 4, mns 4), fb(100, 32) = 5 * 32 = 160, min(fb(5, 32) = 64, 1023 // 128 + 1
	 * = 8)) = (4, 160, 8) */
	base("current", "1024", "4", "5");
	cset("server.contiguous_pa", "true");
	b = make(&p);
	bool fb = false;
	struct bshape got = look(b, PHASE_PROMPT, 2, 100, 5, 0, &fb);
	ck_assert(fb);
	ck_assert_int_eq(got.v[0], 4);
	ck_assert_int_eq(got.v[1], 160);
	ck_assert_int_eq(got.v[2], 8);
	done(b);
	base("current", "1024", "2", "500");
	cset("bucketing.strategy", "unified");
	b = make(&p);
	/* query points ceil(2048^(i/9) / 2) * 2 start at 2; shared (0, 8, 2) = 0, 2, 4, 6, 8;
	 * (2, 2, 0, 0): 2 <= max_num_seqs and 2 * 128 // (2 // 2) = 256 <= 1024 */
	ck_assert(has(b, PHASE_UNIFIED, 2, 2, 0, 0));
	ck_assert(!has(b, PHASE_UNIFIED, 1, 2, 0, 0));
	done(b);
}
END_TEST

START_TEST(current_merged_long_edge)
{
	base("current", "8192", "2", "100");
	cset("server.block_size", "256");
	cset("server.max_num_batched_tokens", "2048");
	cset("server.merged_prefill", "true");
	struct bucket_params p;
	struct bucketer *b = make(&p);
	ck_assert_str_eq(bucketer_config_line(b, PHASE_PROMPT),
			 "Prompt bucket config (min, step, max_warmup, limit) bs:(1, 1, 1, 1), "
			 "query:(256, 1024, 2048, 11), blocks:(0, 4, 48, 6)");
	char *s = list_str(b, PHASE_PROMPT);
	ck_assert_str_eq(s, "[(1, 1024, 0), (1, 1024, 4), (1, 1024, 8), (1, 1024, 12), "
			    "(1, 1024, 20), (1, 1024, 28), (1, 1024, 32), (1, 2048, 0), (1, 2048, 4), "
			    "(1, 2048, 8), (1, 2048, 12), (1, 2048, 20), (1, 2048, 24), (1, 2048, 32)]");
	free(s);
	done(b);
}
END_TEST

/* ---------------- version docs ---------------- */

static const char *seed_prompt =
	"[(1, 128, 0), (1, 128, 1), (1, 128, 2), (1, 128, 3), (1, 128, 4), (1, 128, 5), (1, 128, 6), "
	"(1, 128, 7), (1, 256, 0), (1, 256, 1), (1, 256, 2), (1, 256, 3), (1, 256, 4), (1, 256, 5), "
	"(1, 256, 6), (1, 384, 0), (1, 384, 1), (1, 384, 2), (1, 384, 3), (1, 384, 4), (1, 384, 5), "
	"(1, 512, 0), (1, 512, 1), (1, 512, 2), (1, 512, 3), (1, 512, 4), (1, 640, 0), (1, 640, 1), "
	"(1, 640, 2), (1, 640, 3), (1, 768, 0), (1, 768, 1), (1, 768, 2), (1, 896, 0), (1, 896, 1), "
	"(1, 1024, 0)]";

START_TEST(docs_seed)
{
	const char *nhbs[] = {"5761", "5781", "5790"};
	for (int i = 0; i < 3; i++) {
		base("docs", "1024", "4", nhbs[i]);
		cenv("VLLM_EXPONENTIAL_BUCKETING=true");
		struct bucket_params p;
		struct bucketer *b = make(&p);
		ck_assert_str_eq(bucketer_config_line(b, PHASE_PROMPT),
				 "Prompt bucket config (min, step, max_warmup, limit) bs:[1, 1, 1, 1], "
				 "seq:[128, 128, 1024, 11]");
		char *s = list_str(b, PHASE_PROMPT);
		ck_assert_str_eq(s, seed_prompt);
		free(s);
		ck_assert_uint_eq(count(b, PHASE_DECODE), 42);
		ck_assert(has(b, PHASE_DECODE, 4, 1, 5888, 0));
		ck_assert(has(b, PHASE_DECODE, 2, 1, 1408, 0));
		ck_assert(!bucketer_config_logged(b, PHASE_DECODE));
		ck_assert(bucketer_config_logged(b, PHASE_PROMPT));
		done(b);
	}
	/* outside [5761, 5790] the list differs (5791: 1920 instead of 1792; 5760: top 5760) */
	base("docs", "1024", "4", "5791");
	struct bucket_params p;
	struct bucketer *b = make(&p);
	ck_assert(!has(b, PHASE_DECODE, 4, 1, 1792, 0));
	ck_assert(has(b, PHASE_DECODE, 4, 1, 1920, 0));
	done(b);
	base("docs", "1024", "4", "5760");
	b = make(&p);
	ck_assert(!has(b, PHASE_DECODE, 4, 1, 5888, 0));
	done(b);
	/* mnbt below 1024 cuts the triangle (the legacy filter is bs*(q+ctx*B) <= mnbt) */
	base("docs", "1024", "4", "5781");
	cset("server.max_num_batched_tokens", "512");
	b = make(&p);
	ck_assert_uint_eq(count(b, PHASE_PROMPT), 4 + 3 + 2 + 1);
	done(b);
	/* nothing fits: all kept, as the server does */
	base("docs", "1024", "4", "5781");
	cset("server.max_num_batched_tokens", "64");
	b = make(&p);
	ck_assert_uint_eq(count(b, PHASE_PROMPT), 36);
	done(b);
	/* prefix caching off: ctx 0 only */
	base("docs", "1024", "4", "5781");
	cset("server.prefix_caching", "false");
	b = make(&p);
	ck_assert_uint_eq(count(b, PHASE_PROMPT), 8);
	ck_assert(p.contiguous_pa);
	ck_assert(has(b, PHASE_DECODE, 1, 1, 5781, 0));   /* contiguous PA: last point = nhb */
	done(b);
	/* the LIMIT variables are honoured */
	base("docs", "1024", "4", "5781");
	cenv("VLLM_DECODE_BLOCK_BUCKET_LIMIT=2");
	b = make(&p);
	ck_assert_uint_eq(count(b, PHASE_DECODE), 6);
	done(b);
}
END_TEST

START_TEST(docs_linear)
{
	base("docs", "1024", "4", "1024");
	cenv("VLLM_EXPONENTIAL_BUCKETING=false");
	struct bucket_params p;
	struct bucketer *b = make(&p);
	ck_assert_str_eq(p.strategy->info.name, "linear");
	ck_assert_str_eq(bucketer_config_line(b, PHASE_PROMPT),
			 "Prompt bucket config (min, step, max_warmup) bs:[1, 32, 1], "
			 "seq:[128, 128, 1024]");
	ck_assert_uint_eq(count(b, PHASE_PROMPT), 36);
	ck_assert_uint_eq(count(b, PHASE_DECODE), 3 * 8);
	done(b);
	/* the docs' ramp-up example as bucket settings */
	base("docs", "1024", "64", "1024");
	cset("bucketing.strategy", "linear");
	cenv("VLLM_DECODE_BS_BUCKET_MIN=2");
	b = make(&p);
	ck_assert_str_eq(bucketer_config_line(b, PHASE_DECODE),
			 "Decode bucket config (min, step, max_warmup) bs:[2, 32, 64], "
			 "blocks:[128, 128, 1024]");
	ck_assert(has(b, PHASE_DECODE, 16, 1, 128, 0));
	ck_assert(has(b, PHASE_DECODE, 32, 1, 128, 0));
	ck_assert(!has(b, PHASE_DECODE, 1, 1, 128, 0));
	ck_assert(bucketer_config_logged(b, PHASE_DECODE));
	done(b);
	/* legacy linear decode: bs > blocks skipped; blocks >= num_kv_blocks become num_kv_blocks;
	 * contiguous PA appends num_kv_blocks */
	base("docs", "1024", "256", "1000");
	cset("bucketing.strategy", "linear");
	cset("server.prefix_caching", "false");
	b = make(&p);
	ck_assert(!has(b, PHASE_DECODE, 256, 1, 128, 0));
	ck_assert(has(b, PHASE_DECODE, 256, 1, 256, 0));
	ck_assert(has(b, PHASE_DECODE, 1, 1, 1000, 0));
	ck_assert(has(b, PHASE_DECODE, 1, 1, 896, 0));
	ck_assert_uint_eq(count(b, PHASE_PROMPT), 8);
	done(b);
	/* legacy linear merged prefill: bs (1, 1, 1), seq max min(max_bs * seq max, mnbt) */
	base("docs", "1024", "4", "1000");
	cset("bucketing.strategy", "linear");
	cset("server.merged_prefill", "true");
	b = make(&p);
	ck_assert_str_eq(bucketer_config_line(b, PHASE_PROMPT),
			 "Prompt bucket config (min, step, max_warmup) bs:(1, 1, 1), seq:(128, 128, 2048)");
	done(b);
}
END_TEST

/* The legacy linear decode list may be empty (found by the cross-check against the July 2025
 * code): blocks (412, 128, 433) keep no value (the ramp starts above the step, the multiples of
 * 128 up to 433 are below the minimum), so nothing is warmed up and a decode look-up falls back
 * to (2^ceil(log2 3), 1, ceil(100 / 2) * 2) = (4, 1, 100). */
START_TEST(docs_linear_empty_decode)
{
	base("docs", "1024", "8", "3593");
	cset("bucketing.strategy", "linear");
	cenv("VLLM_DECODE_BLOCK_BUCKET_MIN=412");
	cenv("VLLM_DECODE_BLOCK_BUCKET_MAX=433");
	struct bucket_params p;
	struct bucketer *b = make(&p);
	ck_assert_uint_eq(count(b, PHASE_DECODE), 0);
	ck_assert_uint_gt(count(b, PHASE_PROMPT), 0);
	struct bshape *w = NULL;
	ck_assert_uint_eq(bucketer_warmup(b, PHASE_DECODE, &w), 0);
	free(w);
	bool fb = false;
	struct bshape got = look(b, PHASE_DECODE, 3, 1, 100, 0, &fb);
	ck_assert(fb);
	SHAPE_IS(got, 4, 1, 100);
	done(b);
}
END_TEST

/* Ranges and products that would exhaust memory are errors before they are expanded. */
START_TEST(product_blowup_is_error)
{
	/* block_size 1: query 1..2048 step 1 (2048 values) x ctx blocks 0..2047 (2048) x bs 1,
	 * every one kept by the filter (query <= max_model_len and max_num_batched_tokens, ctx <=
	 * 2047): 4,194,304 buckets */
	base("current", "2048", "4", "5781");
	cset("bucketing.strategy", "linear");
	cset("server.block_size", "1");
	struct bs_err e = make_fail();
	ck_assert_int_eq(e.code, BS_EXIT_INPUT);
	ck_assert_str_eq(e.msg, "the prompt bucket filters keep more than 1000000 buckets (no "
				"server warms up that many): raise the bucket steps or "
				"server.block_size");
	config_release(&cfg);
	/* 20000 queries x 20000 contexts: refused before any is examined */
	base("current", "20000", "4", "5781");
	cset("bucketing.strategy", "linear");
	cset("server.block_size", "1");
	cset("server.max_num_batched_tokens", "20000");
	e = make_fail();
	ck_assert_str_eq(e.msg, "the prompt bucket ranges combine to 400000000 candidate buckets, "
				"more than 10000000 (no server warms up that many): raise the bucket "
				"steps or server.block_size");
	config_release(&cfg);
	/* the same in version docs: 2048 queries x 2048 contexts (prefix caching) */
	base("docs", "2048", "4", "5781");
	cset("bucketing.strategy", "linear");
	cset("server.block_size", "1");
	e = make_fail();
	ck_assert_ptr_nonnull(strstr(e.msg, "more than 1000000"));
	config_release(&cfg);
	/* one linear range of 2e9 values */
	base("current", "1024", "4", "5781");
	cset("bucketing.strategy", "linear");
	cenv("VLLM_CONTIGUOUS_PA=false");
	cenv("VLLM_DECODE_BLOCK_BUCKET_STEP=1");
	cenv("VLLM_DECODE_BLOCK_BUCKET_MAX=2000000000");
	e = make_fail();
	ck_assert_str_eq(e.field, "VLLM_DECODE_BLOCK_BUCKET_STEP");
	ck_assert_str_eq(e.msg, "decode block linear bucket config (min, step, max) = (1, 1, "
				"2000000000) spans more than 1000000 steps: raise the step");
	config_release(&cfg);
}
END_TEST

/* Version current's prompt limit is on the buckets kept, as upstream generates them: 1,048,576
 * candidates (bs 1..128 x query 16..2048 step 16 x ctx 0..63), of which the filter keeps the
 * queries up to max_model_len (1024) with bs x query <= max_num_batched_tokens (2048), every
 * ctx (<= ceil(1023 / 16) = 64): sum over bs of min(64, 128 / bs) x 64 = 37,184 buckets (the
 * count vllm-gaudi's generate_buckets gives for this configuration). */
START_TEST(prompt_limit_counts_kept_buckets)
{
	base("current", "1024", "128", "32207");
	cset("bucketing.strategy", "linear");
	cset("server.block_size", "16");
	cset("server.max_num_batched_tokens", "2048");
	cset("server.prefix_caching", "true");
	cenv("VLLM_PROMPT_BS_BUCKET_STEP=1");
	cenv("VLLM_PROMPT_BS_BUCKET_MAX=128");
	struct bucket_params p;
	struct bucketer *b = make(&p);
	size_t want = 0;
	for (int bs = 1; bs <= 128; bs++)
		want += (size_t)(128 / bs < 64 ? 128 / bs : 64) * 64;
	ck_assert_uint_eq(want, 37184);
	const struct bshape *l;
	size_t n = bucketer_list(b, PHASE_PROMPT, &l);
	ck_assert_uint_eq(n, want);
	/* the first and last buckets: (1, 16, 0) and (128, 16, 63) */
	ck_assert_int_eq(l[0].v[0], 1);
	ck_assert_int_eq(l[0].v[1], 16);
	ck_assert_int_eq(l[0].v[2], 0);
	ck_assert_int_eq(l[n - 1].v[0], 128);
	ck_assert_int_eq(l[n - 1].v[1], 16);
	ck_assert_int_eq(l[n - 1].v[2], 63);
	done(b);
}
END_TEST

START_TEST(docs_padding_aware_is_error)
{
	base("docs", "1024", "4", "5781");
	cset("bucketing.strategy", "padding_aware");
	struct bs_err e = make_fail();
	ck_assert_int_eq(e.code, BS_EXIT_INPUT);
	ck_assert_str_eq(e.field, "bucketing.strategy");
	config_release(&cfg);
	/* VLLM_BUCKETING_STRATEGY does not exist in docs: ignored with a warning */
	base("docs", "1024", "4", "5781");
	cenv("VLLM_BUCKETING_STRATEGY=pad");
	struct bucket_params p;
	struct bucketer *b = make(&p);
	ck_assert_str_eq(p.strategy->info.name, "exponential");
	ck_assert_ptr_nonnull(strstr(p.warnings, "VLLM_BUCKETING_STRATEGY"));
	done(b);
}
END_TEST

/* ---------------- unified ---------------- */

START_TEST(unified_counts)
{
	base("docs", "1024", "32", "5781");
	cenv("VLLM_UNIFIED_ATTN=true");
	struct bucket_params p;
	struct bucketer *b = make(&p);
	ck_assert_str_eq(p.strategy->info.name, "unified");
	ck_assert(p.contiguous_pa && p.merged_prefill);
	ck_assert_uint_eq(count(b, PHASE_UNIFIED), 375);
	const struct bshape *l;
	size_t n = bucketer_list(b, PHASE_UNIFIED, &l);
	ck_assert(l[0].v[0] == 8 && l[0].v[1] == 0 && l[0].v[2] == 0 && l[0].v[3] == 1);
	ck_assert(l[1].v[0] == 8 && l[1].v[1] == 0 && l[1].v[2] == 8 && l[1].v[3] == 0);
	ck_assert(l[n - 1].v[0] == 2048 && l[n - 1].v[1] == 256 && l[n - 1].v[2] == 5781);
	ck_assert(l[n - 2].v[0] == 2048 && l[n - 2].v[1] == 256 && l[n - 2].v[2] == 2890);
	/* warm-up walks the reversed list: 2048/256/2890 causal is the 2nd of 375 */
	struct bshape *w;
	size_t nw = bucketer_warmup(b, PHASE_UNIFIED, &w);
	ck_assert_uint_eq(nw, 375);
	ck_assert(w[1].v[2] == 2890 && w[2].v[2] == 1445 && w[3].v[2] == 32);
	free(w);
	ck_assert_uint_eq(count(b, PHASE_PROMPT), 0);
	done(b);
	/* the last version before removal: 167 on the same configuration */
	base("current", "1024", "32", "5781");
	cset("bucketing.strategy", "unified");
	b = make(&p);
	ck_assert_uint_eq(count(b, PHASE_UNIFIED), 167);
	done(b);
}
END_TEST

START_TEST(unified_lookup)
{
	base("docs", "1024", "32", "5781");
	cset("bucketing.strategy", "unified");
	struct bucket_params p;
	struct bucketer *b = make(&p);
	bool fb;
	struct bshape s = look(b, PHASE_UNIFIED, 100, 5, 40, 1, &fb);
	ck_assert(!fb);
	ck_assert(s.v[0] == 512 && s.v[1] == 8 && s.v[2] == 1445);
	/* only the first three dimensions are compared: a causal batch may land on causal 0 */
	s = look(b, PHASE_UNIFIED, 8, 0, 8, 1, &fb);
	ck_assert(s.v[0] == 8 && s.v[1] == 0 && s.v[2] == 8 && s.v[3] == 1);
	s = look(b, PHASE_UNIFIED, 9, 0, 0, 1, &fb);
	ck_assert(s.v[0] == 16 && s.v[1] == 0 && s.v[2] == 0);
	/* a miss runs unpadded and appends nothing */
	s = look(b, PHASE_UNIFIED, 3000, 0, 0, 1, &fb);
	ck_assert(!fb);
	ck_assert(s.v[0] == 3000 && s.v[1] == 0 && s.v[2] == 0 && s.v[3] == 1);
	ck_assert_uint_eq(count(b, PHASE_UNIFIED), 375);
	/* prompt/decode look-ups under unified are the identity */
	s = look(b, PHASE_PROMPT, 3, 100, 0, 0, &fb);
	SHAPE_IS(s, 3, 100, 0);
	done(b);
}
END_TEST

/* ---------------- look-ups ---------------- */

START_TEST(lookup_current)
{
	base("current", "1024", "4", "5781");
	struct bucket_params p;
	struct bucketer *b = make(&p);
	bool fb;
	struct bshape s = look(b, PHASE_PROMPT, 1, 1000, 0, 0, &fb);
	SHAPE_IS(s, 1, 1280, 0);
	ck_assert(fb);
	ck_assert_uint_eq(count(b, PHASE_PROMPT), 31);
	s = look(b, PHASE_PROMPT, 1, 900, 0, 0, &fb);
	SHAPE_IS(s, 1, 1280, 0);
	ck_assert(!fb);
	s = look(b, PHASE_PROMPT, 1, 100, 3, 0, &fb);
	SHAPE_IS(s, 1, 128, 4);
	ck_assert(!fb);
	/* lexicographic, not least padding: smallest query first */
	s = look(b, PHASE_PROMPT, 1, 129, 0, 0, &fb);
	SHAPE_IS(s, 1, 256, 0);
	/* prompt ctx fallback: fb(ctx, 32) capped at ceil((mml-1)/B) = 8 */
	s = look(b, PHASE_PROMPT, 1, 100, 9, 0, &fb);
	SHAPE_IS(s, 1, 160, 8);
	ck_assert(fb);
	/* decode: blocks clamped to the largest prepared ctx (32) */
	s = look(b, PHASE_DECODE, 4, 1, 5000, 0, &fb);
	SHAPE_IS(s, 4, 1, 32);
	ck_assert(!fb);
	s = look(b, PHASE_DECODE, 3, 1, 5, 0, &fb);
	SHAPE_IS(s, 4, 1, 8);
	s = look(b, PHASE_DECODE, 1, 1, 9, 0, &fb);
	SHAPE_IS(s, 2, 1, 12);
	/* bs overflow: fallback (min(fb(bs,2), mns), 1, min(fb(n,32), 32)), here already present */
	s = look(b, PHASE_DECODE, 8, 1, 5, 0, &fb);
	SHAPE_IS(s, 4, 1, 32);
	ck_assert(!fb);
	ck_assert_uint_eq(count(b, PHASE_DECODE), 13);
	/* warm-up lists are unchanged by look-ups */
	const struct bshape *w;
	ck_assert_uint_eq(bucketer_warmup_list(b, PHASE_PROMPT, &w), 30);
	done(b);
	/* a decode fallback next to an existing larger bucket */
	base("current", "1024", "256", "5781");
	b = make(&p);
	size_t nw = bucketer_warmup_list(b, PHASE_DECODE, &w);
	ck_assert_uint_eq(count(b, PHASE_DECODE), nw);
	ck_assert(!has(b, PHASE_DECODE, 256, 1, 64, 0));
	s = look(b, PHASE_DECODE, 300, 1, 3, 0, &fb);
	SHAPE_IS(s, 256, 1, 64);   /* (min(fb(300,2), 256), 1, fb(3,32) = 64) */
	ck_assert(fb);
	ck_assert(has(b, PHASE_DECODE, 256, 1, 64, 0));
	/* the current list gained it, the warm-up list did not */
	ck_assert_uint_eq(count(b, PHASE_DECODE), nw + 1);
	ck_assert_uint_eq(bucketer_warmup_list(b, PHASE_DECODE, &w), nw);
	for (size_t i = 0; i < nw; i++)
		ck_assert(w[i].v[0] != 256 || w[i].v[2] != 64);
	s = look(b, PHASE_DECODE, 300, 1, 3, 0, &fb);
	SHAPE_IS(s, 256, 1, 64);
	ck_assert(!fb);
	done(b);
}
END_TEST

/* Prompt look-ups with a query above max_num_batched_tokens get upstream's fallback, its query
 * capped at max_num_batched_tokens (HPUBucketingManager.generate_fallback_bucket), and later
 * look-ups find that bucket: the cross-check's configuration #1494 (seed 1), whose look-ups
 * vllm-gaudi 091bbadd answers as below.  Linear buckets of max_model_len 456 hold queries up to
 * 456 only, so each long query falls back (fb as in fallback_buckets_current; prompt ctx cap
 * ceil(455 / 128) = 4). */
START_TEST(lookup_current_beyond_budget)
{
	base("current", "456", "64", "3593");
	cset("server.max_num_batched_tokens", "2048");
	cset("server.block_size", "128");
	cset("server.max_num_prefill_seqs", "4");
	cset("server.prefix_caching", "true");
	cset("server.merged_prefill", "false");
	cset("server.contiguous_pa", "false");
	cset("bucketing.strategy", "linear");
	struct bucket_params p;
	struct bucketer *b = make(&p);
	size_t n0 = count(b, PHASE_PROMPT);
	bool fb;
	/* (fb(2,2), fb(1404,32) = 4 x 384, 1) */
	struct bshape s = look(b, PHASE_PROMPT, 2, 1404, 1, 0, &fb);
	SHAPE_IS(s, 4, 1536, 1);
	ck_assert(fb);
	/* (fb(5,2) = 8, min(fb(2366,32) = 2688, 2048), 0): shorter than the query */
	s = look(b, PHASE_PROMPT, 5, 2366, 0, 0, &fb);
	SHAPE_IS(s, 8, 2048, 0);
	ck_assert(fb);
	/* (4, min(fb(1865,32) = 2080, 2048), min(fb(2,32) = 64, 4)) */
	s = look(b, PHASE_PROMPT, 2, 1865, 2, 0, &fb);
	SHAPE_IS(s, 4, 2048, 4);
	ck_assert(fb);
	/* no bucket holds 2091 tokens: the fallback (4, 2048, 4) is already there */
	s = look(b, PHASE_PROMPT, 2, 2091, 5, 0, &fb);
	SHAPE_IS(s, 4, 2048, 4);
	ck_assert(!fb);
	/* a later short pass of 7 prompts runs in the (8, 2048, 0) fallback */
	s = look(b, PHASE_PROMPT, 7, 300, 0, 0, &fb);
	SHAPE_IS(s, 8, 2048, 0);
	ck_assert(!fb);
	ck_assert_uint_eq(count(b, PHASE_PROMPT), n0 + 3);
	done(b);
}
END_TEST

START_TEST(lookup_docs)
{
	base("docs", "1024", "4", "5781");
	struct bucket_params p;
	struct bucketer *b = make(&p);
	bool fb;
	struct bshape s = look(b, PHASE_PROMPT, 1, 1000, 0, 0, &fb);
	SHAPE_IS(s, 1, 1024, 0);
	ck_assert(!fb);
	s = look(b, PHASE_PROMPT, 1, 1100, 3, 0, &fb);
	SHAPE_IS(s, 1, 1152, 4);
	ck_assert(fb);
	ck_assert_uint_eq(count(b, PHASE_PROMPT), 37);
	s = look(b, PHASE_PROMPT, 1, 1050, 1, 0, &fb);
	SHAPE_IS(s, 1, 1152, 4);
	ck_assert(!fb);
	/* no decode clamp in docs: a block overflow is a fallback */
	s = look(b, PHASE_DECODE, 3, 1, 7001, 0, &fb);
	SHAPE_IS(s, 4, 1, 7002);
	ck_assert(fb);
	s = look(b, PHASE_DECODE, 4, 1, 6000, 0, &fb);
	SHAPE_IS(s, 4, 1, 7002);
	ck_assert(!fb);
	done(b);
	/* the docs' example: 3 prompts of 412 tokens run as (4, 512, 0), then decode */
	base("docs", "4096", "4", "5781");
	cenv("VLLM_PROMPT_BS_BUCKET_MAX=4");
	b = make(&p);
	s = look(b, PHASE_PROMPT, 3, 412, 0, 0, &fb);
	SHAPE_IS(s, 4, 512, 0);
	s = look(b, PHASE_DECODE, 3, 1, 512, 0, &fb);
	SHAPE_IS(s, 4, 1, 512);
	s = look(b, PHASE_DECODE, 2, 1, 512, 0, &fb);
	SHAPE_IS(s, 2, 1, 512);
	s = look(b, PHASE_DECODE, 4, 1, 513, 0, &fb);
	SHAPE_IS(s, 4, 1, 640);
	done(b);
}
END_TEST

START_TEST(lookup_disabled)
{
	base("current", "1024", "4", "5781");
	cset("bucketing.strategy", "none");
	struct bucket_params p;
	struct bucketer *b = make(&p);
	bool fb;
	struct bshape s = look(b, PHASE_PROMPT, 3, 1000, 7, 0, &fb);
	SHAPE_IS(s, 3, 1000, 7);
	ck_assert(!fb);
	struct bshape *w;
	ck_assert_uint_eq(bucketer_warmup(b, PHASE_PROMPT, &w), 0);
	ck_assert_uint_eq(count(b, PHASE_DECODE), 0);
	done(b);
	base("docs", "1024", "4", "5781");
	cenv("VLLM_ENABLE_BUCKETING=false");
	b = make(&p);
	ck_assert(!p.enabled);
	s = look(b, PHASE_DECODE, 3, 1, 77, 0, &fb);
	SHAPE_IS(s, 3, 1, 77);
	ck_assert_uint_eq(count(b, PHASE_PROMPT), 0);
	done(b);
}
END_TEST

START_TEST(warmup_order)
{
	base("docs", "1024", "4", "5781");
	struct bucket_params p;
	struct bucketer *b = make(&p);
	struct bshape *w;
	size_t n = bucketer_warmup(b, PHASE_PROMPT, &w);
	ck_assert_uint_eq(n, 36);
	SHAPE_IS(w[0], 1, 1024, 0);
	SHAPE_IS(w[1], 1, 896, 1);
	SHAPE_IS(w[35], 1, 128, 0);
	free(w);
	n = bucketer_warmup(b, PHASE_DECODE, &w);
	ck_assert_uint_eq(n, 42);
	SHAPE_IS(w[0], 4, 1, 5888);
	free(w);
	done(b);
	/* skip_warmup: lists kept (look-ups pad to them), nothing warmed */
	base("current", "1024", "4", "5781");
	cenv("VLLM_SKIP_WARMUP=true");
	b = make(&p);
	ck_assert(p.skip_warmup);
	ck_assert_uint_eq(bucketer_warmup(b, PHASE_PROMPT, &w), 0);
	ck_assert_uint_eq(count(b, PHASE_PROMPT), 30);
	done(b);
	/* current: prompt buckets with query > max_num_batched_tokens are not warmed */
	char path[] = "/tmp/bs_bfileXXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	const char *text = "(1, [128, 4096], 0)\n(1, 1, 8)\n";
	ck_assert_int_eq(write(fd, text, strlen(text)), (int)strlen(text));
	close(fd);
	base("current", "8192", "4", "5781");
	cset("server.merged_prefill", "true");
	char arg[64];
	snprintf(arg, sizeof arg, "VLLM_BUCKETING_FROM_FILE=%s", path);
	cenv(arg);
	b = make(&p);
	ck_assert_uint_eq(count(b, PHASE_PROMPT), 2);
	n = bucketer_warmup(b, PHASE_PROMPT, &w);
	ck_assert_uint_eq(n, 1);
	SHAPE_IS(w[0], 1, 128, 0);
	free(w);
	done(b);
	unlink(path);
}
END_TEST

/* ---------------- bucket files ---------------- */

static const char *sample_file =
	"(1, 2048, 0)\n"
	"(1, [256, 512], [0, 4, 8])\n"
	"(64, 1, 1024)\n"
	"(32, 1, 512)\n"
	"(1, 1, range(256, 512, 32))\n";

START_TEST(file_syntax)
{
	struct blist pr = {0}, de = {0};
	struct bs_err e = {0};
	ck_assert_int_eq(bucket_file_parse_text(sample_file, "s.txt", &pr, &de, &e), 0);
	ck_assert_uint_eq(pr.n, 7);
	ck_assert_uint_eq(de.n, 10);
	blist_free(&pr);
	blist_free(&de);
	/* the three forms and the mixed example */
	ck_assert_int_eq(bucket_file_parse_text("(1, 2048, 0)\n(64, 1, 1024)", "x", &pr, &de, &e), 0);
	ck_assert_uint_eq(pr.n + de.n, 2);
	blist_free(&pr);
	blist_free(&de);
	ck_assert_int_eq(bucket_file_parse_text("(1, [256, 512], [0, 4, 8])", "x", &pr, &de, &e), 0);
	ck_assert_uint_eq(pr.n, 6);
	blist_free(&pr);
	ck_assert_int_eq(bucket_file_parse_text("(1, 1, range(256, 512, 128))", "x", &pr, &de, &e), 0);
	ck_assert_uint_eq(de.n, 2);   /* Python's range excludes the stop: 256 and 384 */
	ck_assert_int_eq(de.a[1].v[2], 384);
	blist_free(&de);
	ck_assert_int_eq(bucket_file_parse_text("([64, 128, 256], 1, range(512, 1024, 32))", "x", &pr,
						&de, &e), 0);
	ck_assert_uint_eq(de.n, 48);
	blist_free(&de);
	/* comments, blank lines, no parentheses, trailing commas, range with 2 args */
	ck_assert_int_eq(bucket_file_parse_text("# c\n\n  \n1, 128, 0  # x\n(2, [128,], range(0, 3),)\n",
						"x", &pr, &de, &e), 0);
	ck_assert_uint_eq(pr.n, 4);
	blist_free(&pr);
	blist_free(&de);
	/* the smallest legal values: a prompt without context, a decode block value of 0 (upstream's
	 * linear ranges can give it) */
	ck_assert_int_eq(bucket_file_parse_text("(1, 2, 0)\n(1, 1, 0)\n", "x", &pr, &de, &e), 0);
	ck_assert_uint_eq(pr.n, 1);
	ck_assert_uint_eq(de.n, 1);
	blist_free(&pr);
	blist_free(&de);
}
END_TEST

static void file_err(const char *text, long line, const char *frag)
{
	struct blist pr = {0}, de = {0};
	struct bs_err e = {0};
	ck_assert_int_eq(bucket_file_parse_text(text, "b.txt", &pr, &de, &e), -1);
	ck_assert_int_eq(e.code, BS_EXIT_INPUT);
	ck_assert_str_eq(e.file, "b.txt");
	ck_assert_int_eq(e.line, line);
	ck_assert_msg(strstr(e.msg, frag), "message '%s' lacks '%s'", e.msg, frag);
	blist_free(&pr);
	blist_free(&de);
}

START_TEST(file_errors)
{
	file_err("(1, 2048, 0)\n(1, 2)\n", 2, "3-tuple");
	file_err("(1, 2, 3, 4)", 1, "3-tuple");
	file_err("# ok\n(1, 2048, x)\n", 2, "expected an integer");
	file_err("(1, 1, range(1, 5, 0))", 1, "step");
	file_err("(1, 1, range(0, 20000))", 1, "10000");
	file_err("(1, [1, [2]], 0)", 1, "lists of lists");
	file_err("(1, 128, 0", 1, "expected");
	file_err("(1, 128, 0) junk", 1, "unexpected text");
	file_err("(1, -128, 0)", 1, "out of range");
	file_err("(1, 1.5, 0)", 1, "expected an integer");
	file_err("(1, 012, 0)", 1, "leading zeros");
	file_err("(1, 2, range(1))", 1, "start and a stop");
	/* no shape a server runs: batch size 0, a prompt of query 0 (named, first one of a line) */
	file_err("(1, 128, 0)\n(0, 0, 0)\n", 2, "prompt bucket (0, 0, 0): batch size 0");
	file_err("(0, 1, 0)", 1, "decode bucket (0, 1, 0): batch size 0");
	file_err("(1, [128, 0], range(0, 3))", 1, "prompt bucket (1, 0, 0): query 0");
	file_err("# bs\n([4, 0], 1, [64, 128])", 2, "decode bucket (0, 1, 64): batch size 0");
	struct bs_err e = {0};
	struct blist pr = {0}, de = {0};
	ck_assert_int_eq(bucket_file_parse("/nonexistent/buckets.txt", &pr, &de, &e), -1);
	ck_assert_int_ne(e.code, 0);
}
END_TEST

START_TEST(file_strategy)
{
	char path[] = "/tmp/bs_bfileXXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, sample_file, strlen(sample_file)), (int)strlen(sample_file));
	close(fd);
	/* current: the filters and the decode corrector; range(256,512,32) collapses to (1,1,32) */
	base("current", "4096", "64", "3593");
	cset("bucketing.strategy", "file");
	cset("bucketing.file", path);
	struct bucket_params p;
	struct bucketer *b = make(&p);
	ck_assert_uint_eq(count(b, PHASE_PROMPT), 7);
	char *s = list_str(b, PHASE_DECODE);
	ck_assert_str_eq(s, "[(1, 1, 32), (32, 1, 512), (64, 1, 1024)]");
	free(s);
	ck_assert_str_eq(bucketer_config_line(b, PHASE_PROMPT), "");
	done(b);
	/* docs: buckets as written */
	base("docs", "4096", "64", "3593");
	char arg[64];
	snprintf(arg, sizeof arg, "VLLM_BUCKETING_FROM_FILE=%s", path);
	cenv(arg);
	b = make(&p);
	ck_assert_str_eq(p.strategy->info.name, "file");
	ck_assert_uint_eq(count(b, PHASE_PROMPT), 7);
	ck_assert_uint_eq(count(b, PHASE_DECODE), 10);
	done(b);
	/* no file */
	base("current", "4096", "64", "3593");
	cset("bucketing.strategy", "file");
	struct bs_err e = make_fail();
	ck_assert_str_eq(e.field, "bucketing.file");
	config_release(&cfg);
	unlink(path);
}
END_TEST

/* ---------------- parameters and env ---------------- */

START_TEST(strategy_selection)
{
	struct bucket_params p;
	struct bucketer *b;
	const char *names[] = {"exp", "lin", "pad"};
	const char *want[] = {"exponential", "linear", "padding_aware"};
	for (int i = 0; i < 3; i++) {
		base("current", "1024", "4", "5781");
		char arg[64];
		snprintf(arg, sizeof arg, "VLLM_BUCKETING_STRATEGY=%s", names[i]);
		cenv(arg);
		b = make(&p);
		ck_assert_str_eq(p.strategy->info.name, want[i]);
		done(b);
	}
	base("current", "1024", "4", "5781");
	b = make(&p);
	ck_assert_str_eq(p.strategy->info.name, "exponential");
	ck_assert_str_eq(p.warnings, "");
	done(b);
	/* deprecated env overrides to exponential */
	base("current", "1024", "4", "5781");
	cenv("VLLM_BUCKETING_STRATEGY=lin");
	cenv("VLLM_EXPONENTIAL_BUCKETING=true");
	b = make(&p);
	ck_assert_str_eq(p.strategy->info.name, "exponential");
	ck_assert_ptr_nonnull(strstr(p.warnings, "deprecated"));
	ck_assert_ptr_nonnull(strstr(p.warnings, "Overriding bucketing strategy LinearBucketingStrategy "
					       "with ExponentialBucketingStrategy"));
	done(b);
	base("current", "1024", "4", "5781");
	cenv("VLLM_BUCKETING_STRATEGY=pad");
	cenv("VLLM_EXPONENTIAL_BUCKETING=false");
	b = make(&p);
	ck_assert_str_eq(p.strategy->info.name, "linear");
	ck_assert_ptr_nonnull(strstr(p.warnings, "Overriding bucketing strategy "
					       "PaddingAwareBucketingStrategy with LinearBucketingStrategy"));
	done(b);
	base("current", "1024", "4", "5781");
	cenv("VLLM_BUCKETING_STRATEGY=exp");
	cenv("VLLM_EXPONENTIAL_BUCKETING=true");
	b = make(&p);
	ck_assert_ptr_nonnull(strstr(p.warnings, "deprecated"));
	ck_assert_ptr_null(strstr(p.warnings, "Overriding"));
	done(b);
	/* env wins over the config key a preset set; the user setting both differently is an
	 * error, the same value is not */
	base("current", "1024", "4", "5781");
	cpreset("bucketing.strategy", "padding_aware");
	cenv("VLLM_BUCKETING_STRATEGY=lin");
	b = make(&p);
	ck_assert_str_eq(p.strategy->info.name, "linear");
	done(b);
	base("current", "1024", "4", "5781");
	cset("bucketing.strategy", "padding_aware");
	cenv("VLLM_BUCKETING_STRATEGY=lin");
	struct bs_err e = make_fail();
	ck_assert_int_eq(e.code, BS_EXIT_INPUT);
	ck_assert_str_eq(e.field, "bucketing.strategy");
	ck_assert_ptr_nonnull(strstr(e.msg, "conflicts with the environment variable "
				     "VLLM_BUCKETING_STRATEGY=lin"));
	config_release(&cfg);
	base("current", "1024", "4", "5781");
	cset("bucketing.strategy", "linear");
	cenv("VLLM_BUCKETING_STRATEGY=lin");
	b = make(&p);
	ck_assert_str_eq(p.strategy->info.name, "linear");
	done(b);
	/* ignored knobs warn "will be overwritten" */
	base("current", "1024", "4", "5781");
	cenv("VLLM_DECODE_BS_BUCKET_STEP=8");
	b = make(&p);
	ck_assert_ptr_nonnull(strstr(p.warnings, "VLLM_DECODE_BS_BUCKET_STEP"));
	ck_assert_ptr_nonnull(strstr(p.warnings, "will be overwritten"));
	done(b);
}
END_TEST

START_TEST(env_precedence)
{
	struct bucket_params p;
	struct bucketer *b;
	base("current", "1024", "4", "5781");
	cset("server.prefix_caching", "false");
	cenv("VLLM_CONTIGUOUS_PA=false");
	b = make(&p);
	ck_assert(!p.contiguous_pa);
	done(b);
	/* current: vllm-gaudi's runtime config derives its prefix_caching from
	 * VLLM_CONTIGUOUS_PA alone (extension/environment.py, _get_prefix), so vLLM's prefix
	 * caching off leaves contiguous PA off; docs: contiguous PA = not prefix caching */
	base("current", "1024", "4", "5781");
	cset("server.prefix_caching", "false");
	b = make(&p);
	ck_assert(!p.contiguous_pa);
	done(b);
	base("current", "1024", "4", "5781");
	cenv("VLLM_CONTIGUOUS_PA=true");
	b = make(&p);
	ck_assert(p.contiguous_pa);
	done(b);
	base("docs", "1024", "4", "5781");
	cset("server.prefix_caching", "false");
	b = make(&p);
	ck_assert(p.contiguous_pa);
	done(b);
	base("current", "1024", "8", "5781");
	cset("server.max_num_prefill_seqs", "2");
	b = make(&p);
	ck_assert_int_eq(p.max_num_prefill_seqs, 2);
	done(b);
	base("current", "1024", "8", "5781");
	cpreset("server.max_num_prefill_seqs", "2");
	cenv("VLLM_PROMPT_BS_BUCKET_MAX=4");
	b = make(&p);
	ck_assert_int_eq(p.max_num_prefill_seqs, 4);
	done(b);
	base("current", "1024", "8", "5781");
	cset("server.max_num_prefill_seqs", "2");
	cenv("VLLM_PROMPT_BS_BUCKET_MAX=4");
	ck_assert_str_eq(make_fail().field, "server.max_num_prefill_seqs");
	config_release(&cfg);
	base("current", "1024", "8", "5781");
	cenv("VLLM_MERGED_PREFILL=1");
	b = make(&p);
	ck_assert(p.merged_prefill);
	ck_assert_int_eq(p.max_num_prefill_seqs, 8);
	done(b);
	base("current", "1024", "8", "5781");
	cpreset("bucketing.skip_warmup", "true");
	cenv("VLLM_SKIP_WARMUP=false");
	b = make(&p);
	ck_assert(!p.skip_warmup);
	done(b);
	/* Every variable with a key (env_var_def.key): the user setting both to different values
	 * is an error naming the key, to the same value (a boolean spelt otherwise) is not. */
	static const struct {
		const char *key, *kv, *env_differ, *env_same;
	} pairs[] = {
		{"bucketing.skip_warmup", "true", "VLLM_SKIP_WARMUP=false", "VLLM_SKIP_WARMUP=1"},
		{"server.contiguous_pa", "false", "VLLM_CONTIGUOUS_PA=true", "VLLM_CONTIGUOUS_PA=no"},
		{"server.merged_prefill", "false", "VLLM_MERGED_PREFILL=on", "VLLM_MERGED_PREFILL=0"},
		{"server.defrag", "false", "VLLM_DEFRAG=true", "VLLM_DEFRAG=false"},
		{"server.defrag_threshold", "16", "VLLM_DEFRAG_THRESHOLD=32",
		 "VLLM_DEFRAG_THRESHOLD=16"},
		{"bucketing.file", "/b.txt", "VLLM_BUCKETING_FROM_FILE=/c.txt", NULL},
	};
	size_t nkeyed = 0;
	for (const struct env_var_def *d = env_var_defs; d->name; d++)
		nkeyed += d->key != NULL;
	ck_assert_int_eq(nkeyed, 8);   /* the six above, the strategy and the prompt bs maximum */
	for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++) {
		base("current", "1024", "8", "5781");
		cset(pairs[i].key, pairs[i].kv);
		cenv(pairs[i].env_differ);
		struct bs_err e = make_fail();
		ck_assert_str_eq(e.field, pairs[i].key);
		ck_assert_ptr_nonnull(strstr(e.msg, "conflicts with the environment variable"));
		config_release(&cfg);
		if (!pairs[i].env_same)
			continue;
		base("current", "1024", "8", "5781");
		cset(pairs[i].key, pairs[i].kv);
		cenv(pairs[i].env_same);
		struct bs_err e2 = {0};
		ck_assert_msg(!bucket_params_resolve(&cfg, &p, &e2), "%s: %s", pairs[i].key, e2.msg);
		config_release(&cfg);
	}
}
END_TEST

static void env_error(const char *nv, const char *field)
{
	base("current", "1024", "4", "5781");
	cenv(nv);
	struct bs_err e = make_fail();
	ck_assert_int_eq(e.code, BS_EXIT_INPUT);
	ck_assert_str_eq(e.field, field);
	config_release(&cfg);
}

START_TEST(env_errors)
{
	env_error("VLLM_PROMPT_BS_BUCKET_MAX=abc", "VLLM_PROMPT_BS_BUCKET_MAX");
	env_error("VLLM_PROMPT_BS_BUCKET_MAX=0", "VLLM_PROMPT_BS_BUCKET_MAX");
	env_error("VLLM_DECODE_BLOCK_BUCKET_STEP=1.5", "VLLM_DECODE_BLOCK_BUCKET_STEP");
	env_error("VLLM_BUCKETING_STRATEGY=fast", "VLLM_BUCKETING_STRATEGY");
	env_error("VLLM_EXPONENTIAL_BUCKETING=maybe", "VLLM_EXPONENTIAL_BUCKETING");
	env_error("VLLM_CONTIGUOUS_PA=2", "VLLM_CONTIGUOUS_PA");
	env_error("VLLM_SKIP_WARMUP=x", "VLLM_SKIP_WARMUP");
	/* pad_percent is limited to 0..50 upstream */
	base("current", "1024", "4", "5781");
	cenv("VLLM_BUCKETING_STRATEGY=pad");
	cenv("VLLM_DECODE_BS_BUCKET_PAD_PERCENT=60");
	struct bs_err e0 = make_fail();
	ck_assert_int_eq(e0.code, BS_EXIT_INPUT);
	config_release(&cfg);
	/* a linear range that cannot be built */
	base("current", "1024", "4", "5781");
	cenv("VLLM_BUCKETING_STRATEGY=lin");
	cenv("VLLM_PROMPT_BS_BUCKET_STEP=0");
	struct bs_err e = make_fail();
	ck_assert_int_eq(e.code, BS_EXIT_INPUT);
	config_release(&cfg);
	/* keys not resolved */
	config_init(&cfg);
	struct bucket_params p;
	e = (struct bs_err){0};
	ck_assert_int_eq(bucket_params_resolve(&cfg, &p, &e), -1);
	ck_assert_str_eq(e.field, "server.max_model_len");
	config_release(&cfg);
}
END_TEST


/* ---------------- every registered strategy ---------------- */

static const struct policy_family *bucketing_family(void)
{
	const struct policy_family *f = policy_family_by_key("bucketing.strategy");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_eq(f, policy_family_by_name("bucketing"));
	return f;
}

static const struct bucket_strategy *member(const struct policy_family *f, size_t i)
{
	return (const struct bucket_strategy *)f->members[i];
}

START_TEST(registry_strategies)
{
	const struct policy_family *f = bucketing_family();
	/* the upstream strategies are registered under the names the env variables select */
	const char *upstream[] = {"exponential", "linear", "padding_aware", "unified", "file", "none"};
	for (size_t i = 0; i < 6; i++) {
		const struct bucket_strategy *s = bucket_strategy_find(upstream[i]);
		ck_assert_ptr_nonnull(s);
		ck_assert_str_eq(s->info.name, upstream[i]);
	}
	ck_assert_ptr_null(bucket_strategy_find("exp"));
	size_t n = 0;
	for (; f->members[n]; n++) {
		const struct bucket_strategy *s = member(f, n);
		ck_assert_msg(s->info.name[0] && s->info.doc && s->info.doc[0], "member %zu", n);
		ck_assert_ptr_eq(policy_find(f, s->info.name), &s->info);
		for (size_t j = 0; j < n; j++)
			ck_assert_str_ne(member(f, j)->info.name, s->info.name);
		ck_assert_msg(s->gen_docs || s->gen_current, "%s: in no version", s->info.name);
		ck_assert_msg(s->phases == 0 || s->phases == BUCKET_PHASES_PROMPT_DECODE ||
			      s->phases == BUCKET_PHASES_UNIFIED, "%s: phases %u", s->info.name,
			      s->phases);
		/* every variable a strategy reads is in the table of variables bucketsim reads */
		for (int v = 0; v < 2; v++) {
			const char *const *env = v ? s->env_current : s->env_docs;
			for (size_t k = 0; env && env[k]; k++)
				ck_assert_msg(env_var_find(env[k]), "%s: %s not in env_var_defs",
					      s->info.name, env[k]);
		}
	}
	ck_assert_uint_ge(n, 6);
	/* bucketing.strategy accepts exactly the registered names */
	config_init(&cfg);
	for (size_t i = 0; i < n; i++)
		cset("bucketing.strategy", member(f, i)->info.name);
	struct bs_err e = {0};
	ck_assert_int_eq(config_set(&cfg, "bucketing.strategy", "exp", CFG_ORIGIN_CMDLINE, NULL, 0,
				    &e), -1);
	const char *choices = config_find(&cfg, "bucketing.strategy")->def->choices;
	size_t nc = 0;
	for (const char *c = choices; c && *c; nc++) {   /* a written list names no other */
		size_t len = strcspn(c, "|");
		char name[64];
		ck_assert_uint_lt(len, sizeof name);
		memcpy(name, c, len);
		name[len] = 0;
		ck_assert_msg(bucket_strategy_find(name), "choice %s is not registered", name);
		c += len + (c[len] == '|');
	}
	ck_assert(!choices || nc == n);
	config_release(&cfg);
}
END_TEST

START_TEST(env_table)
{
	size_t n = 0;
	for (const struct env_var_def *d = env_var_defs; d->name; d++, n++) {
		ck_assert_msg(d->doc && d->doc[0], "%s: no doc", d->name);
		ck_assert_ptr_eq(env_var_find(d->name), d);
	}
	/* 8 switches, 34 bucket knobs (prompt bs/query/seq/ctx x 5 and decode bs/block x 5
	 * parameters, plus the 4 LIMITs of version docs), VLLM_GRAPH_RESERVED_MEM,
	 * RUNTIME_SCALE_PATCHING, PT_HPU_LAZY_MODE, VLLM_PP_LAYER_PARTITION, VLLM_DEFRAG,
	 * VLLM_DEFRAG_THRESHOLD */
	ck_assert_uint_eq(n, 8 + 34 + 6);
	ck_assert_ptr_null(env_var_find("VLLM_PROMT_BS_BUCKET_MAX"));
}
END_TEST

/* A deterministic stream of shapes (a 64-bit LCG; the values need no statistical quality). */
static uint64_t lcg_state;
static int32_t draw(int32_t lo, int32_t hi)
{
	lcg_state = lcg_state * 6364136223846793005ull + 1442695040888963407ull;
	return lo + (int32_t)((lcg_state >> 33) % (uint64_t)(hi - lo + 1));
}

static bool ge3(const struct bshape *a, const struct bshape *b)
{
	return a->v[0] >= b->v[0] && a->v[1] >= b->v[1] && a->v[2] >= b->v[2];
}

static void check_sorted(const struct bshape *l, size_t n, const char *what)
{
	for (size_t i = 1; i < n; i++)
		ck_assert_msg(bshape_cmp(&l[i - 1], &l[i]) < 0, "%s: element %zu not above %zu", what,
			      i, i - 1);
}

/* Look-ups of random shapes of PH against a brute-force search of the list, on one bucketer. */
static void check_lookups(struct bucketer *b, const struct bucket_params *p, enum phase ph,
			  const char *what)
{
	bool served = p->enabled && (p->strategy->phases & (1u << ph));
	const struct bshape *w;
	size_t nw = bucketer_warmup_list(b, PHASE_DECODE, &w);
	int64_t maxctx = -1;
	for (size_t i = 0; i < nw; i++)
		if (w[i].v[2] > maxctx)
			maxctx = w[i].v[2];
	bool cur = p->version == BUCKET_VERSION_CURRENT;
	int32_t B = p->block_size;
	for (int k = 0; k < 300; k++) {
		struct bshape real = {{0, 0, 0, 0}}, got;
		if (ph == PHASE_PROMPT)
			real = (struct bshape){{draw(1, 2 * p->max_num_prefill_seqs + 1),
						draw(1, p->max_model_len + 64),
						draw(0, p->max_model_len / B + 2), 0}};
		else if (ph == PHASE_DECODE)
			real = (struct bshape){{draw(1, 2 * p->max_num_seqs + 1), 1,
						draw(1, (int32_t)p->num_kv_blocks + 8), 0}};
		else
			real = (struct bshape){{draw(1, p->max_num_batched_tokens + 64),
						draw(0, p->max_model_len / B + 2),
						draw(0, (int32_t)p->num_kv_blocks + 8), draw(0, 1)}};
		const struct bshape *l;
		size_t n = bucketer_list(b, ph, &l);
		struct bshape t = real;
		if (ph != PHASE_UNIFIED)
			t.v[3] = 0;
		if (ph == PHASE_DECODE && cur && maxctx > 0 && t.v[2] > maxctx)
			t.v[2] = (int32_t)maxctx;   /* current clamps decode ctx first */
		const struct bshape *want = NULL;   /* the smallest bucket >= t in every dim */
		for (size_t i = 0; i < n && !want; i++)
			if (ge3(&l[i], &t) && bshape_cmp(&l[i], &t) >= 0)
				want = &l[i];
		struct bshape want_v = want ? *want : real;
		/* the documented fallback of the version, and whether the list already has it */
		int64_t cmax = maxctx > 0 ? maxctx : INT32_MAX;
		if (ph == PHASE_PROMPT && bucket_ceil_div(p->max_model_len - 1, B) < cmax)
			cmax = bucket_ceil_div(p->max_model_len - 1, B);
		struct bshape f = cur ? bucket_fallback_current(p, t.v[0], t.v[1], t.v[2], cmax)
				      : bucket_fallback_docs(p, ph, t.v[0], t.v[1], t.v[2]);
		bool present = false;
		for (size_t i = 0; i < n; i++)
			present |= !bshape_cmp(&l[i], &f);
		bool fb = bucketer_lookup(b, ph, &real, &got);   /* may move the list: l is stale */
		if (!served) {   /* no bucket of that phase: the real shape runs */
			ck_assert_msg(!fb && !bshape_cmp(&got, &real), "%s: unserved phase padded",
				      what);
			continue;
		}
		if (want || ph == PHASE_UNIFIED) {   /* a hit, or a unified miss running unpadded */
			ck_assert_msg(!fb, "%s: fallback on a hit", what);
			ck_assert_msg(!bshape_cmp(&got, &want_v), "%s: (%d,%d,%d,%d) -> (%d,%d,%d,%d), "
				      "want (%d,%d,%d,%d)", what, real.v[0], real.v[1], real.v[2],
				      real.v[3], got.v[0], got.v[1], got.v[2], got.v[3], want_v.v[0],
				      want_v.v[1], want_v.v[2], want_v.v[3]);
			ck_assert_msg(ge3(&got, &t), "%s: bucket below the shape", what);
			continue;
		}
		/* a miss: the fallback, inserted in the sorted list unless present */
		ck_assert_msg(!bshape_cmp(&got, &f), "%s: fallback (%d,%d,%d) want (%d,%d,%d)", what,
			      got.v[0], got.v[1], got.v[2], f.v[0], f.v[1], f.v[2]);
		ck_assert_msg(fb == !present, "%s: (%d,%d,%d,%d) fb %d present %d -> (%d,%d,%d)", what, real.v[0], real.v[1], real.v[2], real.v[3], fb, present, f.v[0], f.v[1], f.v[2]);
		size_t n2 = bucketer_list(b, ph, &l);
		ck_assert_uint_eq(n2, n + fb);
		check_sorted(l, n2, what);
	}
}

/* The generic properties of one strategy, version and configuration. */
/* ---------------- server logs (strategy log, buckets --from-log) ---------------- */

/* The documentation's start-up log (vllm-gaudi docs/features/bucketing_mechanism.md, copied
 * verbatim; the extension ad558281 printed it), preceded by a line that is not the
 * bucketing's. */
static const char *seed_log =
	"INFO 07-07 19:27:30 [api_server.py:1] vLLM API server version 0.9.2\n"
	"INFO 07-07 19:27:37 [exponential.py:36] Prompt bucket config (min, step, max_warmup, lim"
	"it) bs:[1, 1, 1, 1], seq:[128, 128, 1024, 11]\n"
	"INFO 07-07 19:27:37 [common.py:85] Generated 36 prompt buckets [bs, query, num_blocks]: "
	"[(1, 128, 0), (1, 128, 1), (1, 128, 2), (1, 128, 3), (1, 128, 4), (1, 128, 5), (1, 128, "
	"6), (1, 128, 7), (1, 256, 0), (1, 256, 1), (1, 256, 2), (1, 256, 3), (1, 256, 4), (1, 25"
	"6, 5), (1, 256, 6), (1, 384, 0), (1, 384, 1), (1, 384, 2), (1, 384, 3), (1, 384, 4), (1,"
	" 384, 5), (1, 512, 0), (1, 512, 1), (1, 512, 2), (1, 512, 3), (1, 512, 4), (1, 640, 0), "
	"(1, 640, 1), (1, 640, 2), (1, 640, 3), (1, 768, 0), (1, 768, 1), (1, 768, 2), (1, 896, 0"
	"), (1, 896, 1), (1, 1024, 0)]\n"
	"INFO 07-07 19:27:37 [common.py:85] Generated 42 decode buckets [bs, query, num_blocks]: "
	"[(1, 1, 128), (1, 1, 256), (1, 1, 384), (1, 1, 512), (1, 1, 640), (1, 1, 768), (1, 1, 89"
	"6), (1, 1, 1024), (1, 1, 1408), (1, 1, 1792), (1, 1, 2432), (1, 1, 3328), (1, 1, 4352), "
	"(1, 1, 5888), (2, 1, 128), (2, 1, 256), (2, 1, 384), (2, 1, 512), (2, 1, 640), (2, 1, 76"
	"8), (2, 1, 896), (2, 1, 1024), (2, 1, 1408), (2, 1, 1792), (2, 1, 2432), (2, 1, 3328), ("
	"2, 1, 4352), (2, 1, 5888), (4, 1, 128), (4, 1, 256), (4, 1, 384), (4, 1, 512), (4, 1, 64"
	"0), (4, 1, 768), (4, 1, 896), (4, 1, 1024), (4, 1, 1408), (4, 1, 1792), (4, 1, 2432), (4"
	", 1, 3328), (4, 1, 4352), (4, 1, 5888)]\n";

/* A log with none of the bucketing's lines but a [Warmup] line of every bucket, as the July 2025
 * runner (vllm-gaudi 650ce373, log_warmup: num_ctx_blocks) printed them, in warm-up order. */
static const char *sample_log =
	"INFO 07-14 10:00:00 [hpu_model_runner.py:2013] [Warmup][Prompt][1/3] batch_size:1 "
	"query_len:1024 num_ctx_blocks:0 free_mem:60.1 GiB\n"
	"INFO 07-14 10:00:01 [hpu_model_runner.py:2013] [Warmup][Prompt][2/3] batch_size:1 "
	"query_len:256 num_ctx_blocks:4 free_mem:60.1 GiB\n"
	"INFO 07-14 10:00:02 [hpu_model_runner.py:2013] [Warmup][Prompt][3/3] batch_size:1 "
	"query_len:128 num_ctx_blocks:0 free_mem:60.1 GiB\n"
	"INFO 07-14 10:00:03 [hpu_model_runner.py:2013] [Warmup][Decode][1/2] batch_size:4 "
	"query_len:1 num_ctx_blocks:64 free_mem:60.0 GiB\n"
	"INFO 07-14 10:00:04 [hpu_model_runner.py:2013] [Warmup][Decode][2/2] batch_size:1 "
	"query_len:1 num_ctx_blocks:8 free_mem:60.0 GiB\n";

static void log_ok(const char *text, struct bucket_log *lg)
{
	struct bs_err e = {0};
	ck_assert_msg(!bucket_log_parse_text(text, "s.log", lg, &e), "%s:%ld: %s", e.file, e.line,
		      e.msg);
}

/* The documentation's lines give exactly the 36 prompt and 42 decode buckets they list. */
START_TEST(log_seed)
{
	struct bucket_log lg;
	log_ok(seed_log, &lg);
	/* prompt: the triangle ctx 0 .. 8 - q/128 for q = 128 .. 1024 step 128: 8 + 7 + ... + 1 */
	struct blist *pr = &lg.list[PHASE_PROMPT], *de = &lg.list[PHASE_DECODE];
	ck_assert_uint_eq(pr->n, 36);
	size_t k = 0;
	for (int q = 128; q <= 1024; q += 128)
		for (int c = 0; c <= 8 - q / 128; c++, k++) {
			ck_assert_int_eq(pr->a[k].v[0], 1);
			ck_assert_int_eq(pr->a[k].v[1], q);
			ck_assert_int_eq(pr->a[k].v[2], c);
		}
	/* decode: bs {1, 2, 4} x the 14 block values */
	static const int blocks[14] = {128, 256, 384, 512, 640, 768, 896, 1024, 1408, 1792, 2432,
				       3328, 4352, 5888};
	ck_assert_uint_eq(de->n, 42);
	k = 0;
	for (int bs = 1; bs <= 4; bs *= 2)
		for (int i = 0; i < 14; i++, k++) {
			ck_assert_int_eq(de->a[k].v[0], bs);
			ck_assert_int_eq(de->a[k].v[1], 1);
			ck_assert_int_eq(de->a[k].v[2], blocks[i]);
		}
	ck_assert_uint_eq(lg.list[PHASE_UNIFIED].n, 0);
	ck_assert_int_eq(lg.cfg_line[PHASE_PROMPT], 2);
	ck_assert_int_eq(lg.cfg_line[PHASE_DECODE], 0);
	ck_assert_str_eq(lg.cfg[PHASE_PROMPT], "Prompt bucket config (min, step, max_warmup, limit) "
			 "bs:[1, 1, 1, 1], seq:[128, 128, 1024, 11]");
	ck_assert_int_eq(lg.gen_line[PHASE_PROMPT], 3);
	ck_assert_int_eq(lg.gen_line[PHASE_DECODE], 4);
	bucket_log_free(&lg);

	/* strategy log runs exactly these lists, as version docs generates them for the seed */
	char path[] = "/tmp/bs_blogXXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, seed_log, strlen(seed_log)), (int)strlen(seed_log));
	close(fd);
	/* the reference: version docs's own lists for the seed */
	base("docs", "1024", "4", "5781");
	struct bucket_params pd;
	struct bucketer *ref = make(&pd);
	struct blist want[2] = {{0}, {0}};
	for (int ph = 0; ph < 2; ph++) {
		const struct bshape *r;
		size_t n = bucketer_list(ref, (enum phase)ph, &r);
		for (size_t i = 0; i < n; i++)
			blist_push(&want[ph], r[i].v[0], r[i].v[1], r[i].v[2], 0);
	}
	done(ref);
	for (int v = 0; v < 2; v++) {
		base(v ? "current" : "docs", "1024", "4", "5781");
		cset("bucketing.strategy", "log");
		cset("bucketing.log", path);
		struct bucket_params p;
		struct bucketer *b = make(&p);
		for (int ph = 0; ph < 2; ph++) {
			const struct bshape *l;
			size_t n = bucketer_list(b, (enum phase)ph, &l);
			ck_assert_uint_eq(n, want[ph].n);
			ck_assert_uint_eq(n, ph ? 42 : 36);
			for (size_t i = 0; i < n; i++)
				ck_assert_int_eq(bshape_cmp(&l[i], &want[ph].a[i]), 0);
		}
		ck_assert_str_eq(bucketer_config_line(b, PHASE_PROMPT), "Prompt bucket config (min, "
				 "step, max_warmup, limit) bs:[1, 1, 1, 1], seq:[128, 128, 1024, 11]");
		ck_assert_str_eq(bucketer_config_line(b, PHASE_DECODE), "");
		done(b);
	}
	blist_free(&want[0]);
	blist_free(&want[1]);
	unlink(path);
}
END_TEST

/* Logs of the other versions, constructed from the upstream functions that print them. */
START_TEST(log_versions)
{
	struct bucket_log lg;
	/* head (091bbadd): exponential.py's config lines, common.py's Generated lines and a spec
	 * decode list, hpu_model_runner.py's [Warmup] lines; every line printed twice, by two
	 * tensor-parallel workers */
	static const char *head =
		"(EngineCore_DP0 pid=805) INFO 08-21 12:00:00 [exponential.py:80] Prompt bucket "
		"config (min, step, max_warmup, limit) bs:[1, 2, 1, 1], query:[128, 128, 2048, 11], "
		"blocks:[0, 1, 7, 4]\n"
		"(EngineCore_DP0 pid=805) INFO 08-21 12:00:00 [common.py:253] Generated 4 prompt "
		"buckets [bs, query, num_blocks]: [(1, 128, 0), (1, 128, 7), (1, 1024, 0), (1, 896, 1)]\n"
		"(EngineCore_DP0 pid=805) INFO 08-21 12:00:00 [exponential.py:136] Decode bucket "
		"config (min, step, max_warmup, limit) bs:[1, 2, 4, 3], block:[1, 4, 32, 6]\n"
		"(EngineCore_DP0 pid=805) INFO 08-21 12:00:00 [common.py:253] Generated 3 decode "
		"buckets [bs, query, num_blocks]: [(1, 1, 1), (2, 1, 16), (4, 1, 32)]\n"
		"(EngineCore_DP0 pid=805) INFO 08-21 12:00:00 [common.py:369] Generated 2 spec decode "
		"buckets [bs, query, num_blocks]: [(2, 1, 2), (8, 1, 64)]\n"
		"(EngineCore_DP0 pid=805) INFO 08-21 12:00:00 [exponential.py:80] Prompt bucket "
		"config (min, step, max_warmup, limit) bs:[1, 2, 1, 1], query:[128, 128, 2048, 11], "
		"blocks:[0, 1, 7, 4]\n"
		"(EngineCore_DP0 pid=806) INFO 08-21 12:00:00 [common.py:253] Generated 4 prompt "
		"buckets [bs, query, num_blocks]: [(1, 128, 0), (1, 128, 7), (1, 1024, 0), (1, 896, 1)]\n"
		"[Warmup][Prompt][1/4] batch_size:1 query_len:1024 num_blocks:0 free_mem:11.16 GiB\n"
		"[Warmup][Decode][1/5] batch_size:8 query_len:1 num_blocks:64 free_mem:11.16 GiB\n"
		"INFO 08-21 12:00:09 [hpu_worker.py:1] Generated text is not a bucket line\n";
	log_ok(head, &lg);
	ck_assert_uint_eq(lg.list[PHASE_PROMPT].n, 4);
	static const int pr[4][3] = {{1, 128, 0}, {1, 128, 7}, {1, 896, 1}, {1, 1024, 0}};
	for (int i = 0; i < 4; i++)
		for (int d = 0; d < 3; d++)
			ck_assert_int_eq(lg.list[PHASE_PROMPT].a[i].v[d], pr[i][d]);
	static const int de[5][3] = {{1, 1, 1}, {2, 1, 2}, {2, 1, 16}, {4, 1, 32}, {8, 1, 64}};
	ck_assert_uint_eq(lg.list[PHASE_DECODE].n, 5);
	for (int i = 0; i < 5; i++)
		for (int d = 0; d < 3; d++)
			ck_assert_int_eq(lg.list[PHASE_DECODE].a[i].v[d], de[i][d]);
	ck_assert_str_eq(lg.cfg[PHASE_DECODE], "Decode bucket config (min, step, max_warmup, "
			 "limit) bs:[1, 2, 4, 3], block:[1, 4, 32, 6]");
	ck_assert_int_eq(lg.cfg_line[PHASE_PROMPT], 1);
	bucket_log_free(&lg);

	/* linear and padding-aware config lines (linear.py, padding_aware.py): 3 and 5 values;
	 * the merged-prefill override prints tuples */
	log_ok("Prompt bucket config (min, step, max_warmup) bs:(1, 1, 1), query:(128, 512, 2048), "
	       "blocks:[0, 4, 496]\n"
	       "Decode bucket config (min, step, max_warmup, pad_max, pad_percent) bs:[1, 2, 64, "
	       "16, 25], blocks:[128, 128, 2048, 512, 25]\n"
	       "Generated 1 prompt buckets [bs, query, num_blocks]: [(1, 128, 0)]\n"
	       "Generated 1 decode buckets [bs, query, num_blocks]: [(1, 1, 128)]\n", &lg);
	ck_assert_int_eq(lg.cfg_line[PHASE_PROMPT], 1);
	ck_assert_int_eq(lg.cfg_line[PHASE_DECODE], 2);
	bucket_log_free(&lg);

	/* the July 2025 runner's warm-up lines alone: their distinct shapes, sorted */
	log_ok(sample_log, &lg);
	ck_assert_uint_eq(lg.list[PHASE_PROMPT].n, 3);
	ck_assert_int_eq(lg.list[PHASE_PROMPT].a[0].v[1], 128);
	ck_assert_int_eq(lg.list[PHASE_PROMPT].a[1].v[1], 256);
	ck_assert_int_eq(lg.list[PHASE_PROMPT].a[1].v[2], 4);
	ck_assert_int_eq(lg.list[PHASE_PROMPT].a[2].v[1], 1024);
	ck_assert_uint_eq(lg.list[PHASE_DECODE].n, 2);
	ck_assert_int_eq(lg.list[PHASE_DECODE].a[0].v[0], 1);
	ck_assert_int_eq(lg.list[PHASE_DECODE].a[0].v[2], 8);
	ck_assert_int_eq(lg.list[PHASE_DECODE].a[1].v[2], 64);
	ck_assert_int_eq(lg.gen_line[PHASE_PROMPT], 0);
	bucket_log_free(&lg);

	/* unified attention (vllm-gaudi 6e656699..59922d98): 4-tuples and the Unified CFG warm-up */
	log_ok("INFO 09-23 12:32:43 [common.py:100] Generated 3 unified buckets [query, "
	       "shared_blocks, unique_blocks]: [(8, 0, 8, 0), (2048, 256, 2890, 1), (2048, 256, "
	       "5781, 1)]\n"
	       "(EngineCore_DP0 pid=805) INFO 09-23 12:32:50 [hpu_model_runner.py:3320] "
	       "[Warmup][Unified CFG][2/3] query_len:2048 shared_blocks:256 unique_blocks:2890 "
	       "(causal) free_mem:11.16 GiB\n"
	       "[Warmup][Unified CFG][3/3] query_len:8 shared_blocks:0 unique_blocks:8 (non causal) "
	       "free_mem:11.16 GiB\n", &lg);
	ck_assert_uint_eq(lg.list[PHASE_UNIFIED].n, 3);
	ck_assert_int_eq(lg.list[PHASE_UNIFIED].a[2].v[2], 5781);
	ck_assert_int_eq(lg.list[PHASE_UNIFIED].a[2].v[3], 1);
	ck_assert_uint_eq(lg.warm[PHASE_UNIFIED].n, 2);
	ck_assert_uint_eq(lg.list[PHASE_PROMPT].n + lg.list[PHASE_DECODE].n, 0);
	bucket_log_free(&lg);
}
END_TEST

/* Malformed lines: FILE:LINE, exit 3. */
START_TEST(log_errors)
{
	static const struct {
		const char *text;
		long line;
		const char *msg;
	} cases[] = {
		{"x\nGenerated 2 prompt buckets [bs, query, num_blocks]: [(1, 128, 0)]\n", 2,
		 "'Generated 2 prompt buckets' lists 1 buckets"},
		{"Generated 1 prompt buckets [bs, query, num_blocks]: [(1, 128)]\n", 1,
		 "expected ', ' at column 61, got ')]'"},
		{"Generated 1 prompt buckets [bs, query]: [(1, 128)]\n", 1,
		 "expected '[bs, query, num_blocks]: ' at column 28, got '[bs, query]: [(1'"},
		{"Generated 1 decode buckets [bs, query, num_blocks]: [(4, 2, 8)]\n", 1,
		 "decode bucket (4, 2, 8): a decode bucket's query is 1"},
		{"Generated 1 prompt buckets [bs, query, num_blocks]: [(0, 128, 0)]\n", 1,
		 "prompt bucket (0, 128, 0): batch size 0 (the minimum is 1)"},
		{"Generated 1 prompt buckets [bs, query, num_blocks]: [(1, 128, 0)] trailing\n", 1,
		 "expected the end of the line at column 66, got ' trailing'"},
		{"Generated 1 prompt buckets [bs, query, num_blocks]: [(1, 128, 2147483648)]\n", 1,
		 "expected an integer 0 to 2147483647 at column 63, got '2147483648)]'"},
		{"Generated 1 prompt buckets [bs, query, num_blocks]: [(1, 128, 0)]\n"
		 "Generated 1 prompt buckets [bs, query, num_blocks]: [(1, 256, 0)]\n", 2,
		 "a second prompt bucket list, different from line 1's (the log of one server "
		 "start-up is expected)"},
		{"Prompt bucket config (min, step, max_warmup, limit) bs:[1, 1, 1], seq:[1, 1, 1, 1]\n",
		 1, "prompt bucket config: 3 values for the 4 parameters named"},
		{"Decode bucket config (min, step) bs:[1, 1], block:{1, 2}\n", 1,
		 "expected '[' or '(' at column 51, got '{1, 2}'"},
		{"Generated 1 prompt buckets [bs, query, num_blocks]: [(1, 128, 0)]\n"
		 "[Warmup][Prompt][1/1] batch_size:1 query_len:256 num_blocks:0 free_mem:1 GiB\n", 2,
		 "warm-up prompt bucket (1, 256, 0) is not in the Generated prompt list of line 1"},
		{"[Warmup][Prompt][1/2] batch_size:1 query_len:256 num_blocks:0 free_mem:1 GiB\n"
		 "[Warmup][Prompt][2/3] batch_size:1 query_len:128 num_blocks:0 free_mem:1 GiB\n", 2,
		 "prompt warm-up count 3, earlier lines counted 2"},
		{"[Warmup][Decode][3/2] batch_size:1 query_len:1 num_blocks:8 free_mem:1 GiB\n", 1,
		 "warm-up index 3 outside 1..2"},
		{"[Warmup][Decode][1/2] batch_size:1 query_len:1 blocks:8 free_mem:1 GiB\n", 1,
		 "expected 'num_blocks:' at column 48, got 'blocks:8 free_me'"},
		{"[Warmup][Unified CFG][1/2] query_len:8 shared_blocks:0 unique_blocks:8 causal "
		 "free_mem:1 GiB\n", 1,
		 "expected '(causal) ' or '(non causal) ' at column 72, got 'causal free_mem:'"},
		{"Generated 1 unified buckets [query, shared_blocks, unique_blocks]: [(8, 0, 8, 0)]\n"
		 "Generated 1 prompt buckets [bs, query, num_blocks]: [(1, 128, 0)]\n", 1,
		 "unified buckets and prompt or decode buckets in one log (the log of one server "
		 "start-up is expected)"},
		{"INFO nothing here\nGenerated 0 prompt buckets. Please use default exponential "
		 "bucketing\n", 0,
		 "no bucket list found: expected the server's start-up lines 'Generated N prompt "
		 "buckets [bs, query, num_blocks]: [...]' (and decode) or its "
		 "'[Warmup][Prompt][i/n] ...' lines"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct bucket_log lg;
		struct bs_err e = {0};
		ck_assert_msg(bucket_log_parse_text(cases[i].text, "s.log", &lg, &e) == -1, "case %zu",
			      i);
		ck_assert_int_eq(e.code, BS_EXIT_INPUT);
		ck_assert_str_eq(e.file, "s.log");
		ck_assert_msg(e.line == cases[i].line, "case %zu: line %ld", i, e.line);
		ck_assert_str_eq(e.msg, cases[i].msg);
		bucket_log_free(&lg);
	}
}
END_TEST

static void check_strategy(const struct bucket_strategy *s, const char *version,
			   const char *const *sets, const char *file, const char *log)
{
	char what[160];
	snprintf(what, sizeof what, "%s/%s/%s=%s", s->info.name, version, sets[0], sets[1]);
	config_init(&cfg);
	cset("bucketing.version", version);
	cset("bucketing.strategy", s->info.name);
	cset("bucketing.file", file);
	cset("bucketing.log", log);
	for (size_t i = 0; sets[i]; i += 2)
		cset(sets[i], sets[i + 1]);
	struct bucket_params p;
	struct bs_err e = {0};
	bool docs = !strcmp(version, "docs");
	if (!(docs ? s->gen_docs : s->gen_current)) {   /* not in this version: an error */
		ck_assert_int_eq(bucket_params_resolve(&cfg, &p, &e), -1);
		ck_assert_int_eq(e.code, BS_EXIT_INPUT);
		ck_assert_str_eq(e.field, "bucketing.strategy");
		config_release(&cfg);
		return;
	}
	struct bucketer *b = make(&p);
	ck_assert_ptr_eq(p.strategy, s);
	ck_assert_int_eq(p.enabled, s->phases != 0);
	ck_assert_int_eq(bucket_params_unified(&p), s->phases == BUCKET_PHASES_UNIFIED);
	ck_assert_int_eq(bucket_params_prompt_decode(&p),
			 s->phases == BUCKET_PHASES_PROMPT_DECODE);
	for (int ph = 0; ph < 3; ph++) {
		const struct bshape *l, *w;
		size_t n = bucketer_list(b, (enum phase)ph, &l);
		size_t nw = bucketer_warmup_list(b, (enum phase)ph, &w);
		/* a list per phase the strategy serves, none for the others */
		ck_assert_msg((n > 0) == !!(s->phases & (1u << ph)), "%s: %s list of %zu", what,
			      bucket_phase_name((enum phase)ph), n);
		ck_assert_uint_eq(n, nw);
		ck_assert(n == 0 || !memcmp(l, w, n * sizeof *l));
		check_sorted(l, n, what);
		for (size_t i = 0; i < n; i++) {
			for (int d = 0; d < bucket_phase_ndim((enum phase)ph); d++)
				ck_assert_int_ge(l[i].v[d], 0);
			if (ph != PHASE_UNIFIED)
				ck_assert_int_eq(l[i].v[3], 0);
			if (ph == PHASE_DECODE)
				ck_assert_int_eq(l[i].v[1], 1);
		}
		/* warm-up: the list reversed; version current skips prompt queries above the
		 * token budget */
		struct bshape *seq;
		size_t ns = bucketer_warmup(b, (enum phase)ph, &seq), k = 0;
		for (size_t i = n; i-- > 0;) {
			if (!docs && ph == PHASE_PROMPT && l[i].v[1] > p.max_num_batched_tokens)
				continue;
			ck_assert_msg(k < ns && !bshape_cmp(&seq[k], &l[i]), "%s: warm-up %zu", what, k);
			k++;
		}
		ck_assert_uint_eq(ns, k);
		free(seq);
	}
	lcg_state = 7;
	for (int ph = 0; ph < 3; ph++)
		check_lookups(b, &p, (enum phase)ph, what);
	done(b);
}

START_TEST(every_strategy_properties)
{
	char path[] = "/tmp/bs_bfileXXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, sample_file, strlen(sample_file)), (int)strlen(sample_file));
	close(fd);
	char lpath[] = "/tmp/bs_blogXXXXXX";
	fd = mkstemp(lpath);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, sample_log, strlen(sample_log)), (int)strlen(sample_log));
	close(fd);
	/* the seed; a long context with contiguous PA; merged prefill; several prefills */
	static const char *const configs[][13] = {
		{"server.max_model_len", "1024", "server.max_num_seqs", "4",
		 "server.num_kv_blocks", "5781", NULL},
		{"server.max_model_len", "8192", "server.max_num_seqs", "32",
		 "server.num_kv_blocks", "3000", "server.prefix_caching", "false",
		 "server.max_num_batched_tokens", "4096", NULL},
		{"server.max_model_len", "4096", "server.max_num_seqs", "64",
		 "server.num_kv_blocks", "3593", "server.merged_prefill", "true", NULL},
		{"server.max_model_len", "2048", "server.max_num_seqs", "16",
		 "server.num_kv_blocks", "900", "server.max_num_prefill_seqs", "4",
		 "server.block_size", "64", NULL},
	};
	const struct policy_family *f = bucketing_family();
	for (size_t i = 0; f->members[i]; i++)
		for (size_t c = 0; c < sizeof configs / sizeof configs[0]; c++) {
			check_strategy(member(f, i), "docs", configs[c], path, lpath);
			check_strategy(member(f, i), "current", configs[c], path, lpath);
		}
	unlink(path);
	unlink(lpath);
}
END_TEST

/* VLLM_ENABLE_BUCKETING=false turns every strategy off: no list, look-ups are identities. */
START_TEST(every_strategy_disabled)
{
	const struct policy_family *f = bucketing_family();
	for (size_t i = 0; f->members[i]; i++) {
		const struct bucket_strategy *s = member(f, i);
		for (int v = 0; v < 2; v++) {
			if (!(v ? s->gen_current : s->gen_docs))
				continue;
			base(v ? "current" : "docs", "1024", "4", "5781");
			cset("bucketing.strategy", s->info.name);
			cenv("VLLM_ENABLE_BUCKETING=false");
			struct bucket_params p;
			struct bucketer *b = make(&p);
			ck_assert(!p.enabled);
			lcg_state = 11;
			for (int ph = 0; ph < 3; ph++) {
				ck_assert_uint_eq(count(b, (enum phase)ph), 0);
				check_lookups(b, &p, (enum phase)ph, s->info.name);
			}
			done(b);
		}
	}
}
END_TEST

/* ---------------- --env names ---------------- */

START_TEST(env_unknown_names)
{
	/* a typo warns once, naming the nearest variable; the setting is not used */
	base("current", "1024", "4", "5781");
	cenv("VLLM_PROMT_BS_BUCKET_MAX=4");
	cenv("VLLM_PROMT_BS_BUCKET_MAX=8");   /* the same name twice is one variable */
	struct bucket_params p;
	struct bucketer *b = make(&p);
	ck_assert_str_eq(p.warnings, "--env VLLM_PROMT_BS_BUCKET_MAX is not a variable bucketsim "
			 "reads; did you mean VLLM_PROMPT_BS_BUCKET_MAX?\n");
	ck_assert_int_eq(p.max_num_prefill_seqs, 1);   /* server.max_num_prefill_seqs */
	done(b);
	/* nothing near: no suggestion; a variable of the cost model is known */
	base("current", "1024", "4", "5781");
	cenv("HABANA_VISIBLE_DEVICES=0");
	cenv("RUNTIME_SCALE_PATCHING=1");
	b = make(&p);
	ck_assert_str_eq(p.warnings, "--env HABANA_VISIBLE_DEVICES is not a variable bucketsim "
			 "reads\n");
	done(b);
	/* sim.strict: an error naming the variable, exit 3 */
	base("current", "1024", "4", "5781");
	cset("sim.strict", "true");
	cenv("VLLM_DECODE_BLOCK_BUCKET_MAXX=64");
	struct bs_err e = make_fail();
	ck_assert_int_eq(e.code, BS_EXIT_INPUT);
	ck_assert_str_eq(e.field, "VLLM_DECODE_BLOCK_BUCKET_MAXX");
	ck_assert_str_eq(e.msg, "--env VLLM_DECODE_BLOCK_BUCKET_MAXX is not a variable bucketsim "
			 "reads; did you mean VLLM_DECODE_BLOCK_BUCKET_MAX?");
	config_release(&cfg);
	/* sim.strict with only known names: no error, no warning */
	base("current", "1024", "4", "5781");
	cset("sim.strict", "true");
	cenv("VLLM_PROMPT_BS_BUCKET_MAX=2");
	b = make(&p);
	ck_assert_str_eq(p.warnings, "");
	ck_assert_int_eq(p.max_num_prefill_seqs, 2);
	done(b);
}
END_TEST

/* bshape_cmp orders tuples as Python compares them, member by member, signed values
 * included (the file strategy keeps whatever a file lists). */
START_TEST(tuple_order)
{
	static const int32_t vals[] = {INT32_MIN, -65536, -1, 0, 1, 2, 65535, 65536, INT32_MAX};
	enum { NV = sizeof vals / sizeof vals[0] };
	unsigned long long x = 88172645463325252ULL;
	for (int n = 0; n < 200000; n++) {
		struct bshape a, b;
		for (int i = 0; i < 4; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			a.v[i] = vals[x % NV];
			/* mostly equal members, so that later members decide */
			b.v[i] = (x >> 20) % 3 ? a.v[i] : vals[(x >> 8) % NV];
		}
		int want = 0;
		for (int i = 0; i < 4 && !want; i++)
			want = a.v[i] < b.v[i] ? -1 : a.v[i] > b.v[i];
		ck_assert_int_eq(bshape_cmp(&a, &b), want);
		ck_assert_int_eq(bshape_cmp(&b, &a), -want);
	}
}
END_TEST

/* blist_sort_unique against a plain sort and deduplication, on lists in order with repeats
 * (its one-pass path) and on lists that go out of order at a random place. */
static int cmp_ref(const void *a, const void *b)
{
	const struct bshape *x = a, *y = b;
	for (int i = 0; i < 4; i++)
		if (x->v[i] != y->v[i])
			return x->v[i] < y->v[i] ? -1 : 1;
	return 0;
}

START_TEST(sort_unique)
{
	unsigned long long x = 1181783497276652981ULL;
	for (int n = 0; n < 3000; n++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		size_t len = x % 60, cut = (x >> 8) % 61;
		struct blist l = {0};
		struct bshape *ref = xcalloc(len + 1, sizeof *ref);
		int32_t a = 0, b = 0;
		for (size_t i = 0; i < len; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			if (i < cut) {   /* in order, with repeats */
				if (x % 3 == 0)
					a += (int32_t)((x >> 4) % 3);
				b = x % 3 == 0 ? 0 : b + (int32_t)((x >> 6) % 2);
			} else {
				a = (int32_t)((x >> 4) % 5);
				b = (int32_t)((x >> 9) % 5);
			}
			blist_push(&l, a, b, (int64_t)((x >> 12) % 2), 0);
			ref[i] = l.a[i];
		}
		qsort(ref, len, sizeof *ref, cmp_ref);
		size_t k = len ? 1 : 0;
		for (size_t i = 1; i < len; i++)
			if (cmp_ref(&ref[i], &ref[k - 1]))
				ref[k++] = ref[i];
		blist_sort_unique(&l);
		ck_assert_uint_eq(l.n, k);
		for (size_t i = 0; i < k; i++)
			ck_assert(!cmp_ref(&l.a[i], &ref[i]));
		blist_free(&l);
		free(ref);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("bucketing");
	TCase *tc = tcase_create("ranges");
	tcase_add_test(tc, exp_range_head);
	tcase_add_test(tc, prompt_pass_warm);
	tcase_add_test(tc, exp_range_fill_legacy);
	tcase_add_test(tc, lin_range);
	tcase_add_test(tc, pad_range);
	tcase_add_test(tc, unified_ranges);
	tcase_add_test(tc, fallback_function);
	tcase_add_test(tc, fallback_buckets_current);
	suite_add_tcase(s, tc);
	tc = tcase_create("current");
	tcase_add_test(tc, current_exp_real_scenario);
	tcase_add_test(tc, current_exp_small);
	tcase_add_test(tc, current_linear);
	tcase_add_test(tc, current_padding_aware_cfgs);
	tcase_add_test(tc, current_generate_buckets);
	tcase_add_test(tc, current_merged_long_edge);
	tcase_add_test(tc, current_upstream_found);
	suite_add_tcase(s, tc);
	tc = tcase_create("docs");
	tcase_add_test(tc, docs_seed);
	tcase_add_test(tc, docs_linear);
	tcase_add_test(tc, docs_padding_aware_is_error);
	tcase_add_test(tc, docs_linear_empty_decode);
	suite_add_tcase(s, tc);
	tc = tcase_create("unified");
	tcase_add_test(tc, unified_counts);
	tcase_add_test(tc, unified_lookup);
	suite_add_tcase(s, tc);
	tc = tcase_create("lookup");
	tcase_add_test(tc, lookup_current);
	tcase_add_test(tc, lookup_current_beyond_budget);
	tcase_add_test(tc, lookup_docs);
	tcase_add_test(tc, lookup_disabled);
	tcase_add_test(tc, warmup_order);
	suite_add_tcase(s, tc);
	tc = tcase_create("file");
	tcase_add_test(tc, file_syntax);
	tcase_add_test(tc, file_errors);
	tcase_add_test(tc, file_strategy);
	tcase_add_test(tc, log_seed);
	tcase_add_test(tc, log_versions);
	tcase_add_test(tc, log_errors);
	suite_add_tcase(s, tc);
	tc = tcase_create("params");
	tcase_add_test(tc, strategy_selection);
	tcase_add_test(tc, env_precedence);
	tcase_add_test(tc, env_errors);
	tcase_add_test(tc, env_unknown_names);
	suite_add_tcase(s, tc);
	tc = tcase_create("registry");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, registry_strategies);
	tcase_add_test(tc, env_table);
	tcase_add_test(tc, every_strategy_properties);
	tcase_add_test(tc, every_strategy_disabled);
	tcase_add_test(tc, product_blowup_is_error);
	tcase_add_test(tc, prompt_limit_counts_kept_buckets);
	tcase_add_test(tc, tuple_order);
	tcase_add_test(tc, sort_unique);
	suite_add_tcase(s, tc);
	return check_run(s);
}
