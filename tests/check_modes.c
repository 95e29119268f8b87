/*
 * check_modes: the execution-mode family (policies/mode.h): the CUDA-graph capture sizes
 * against vLLM's VllmConfig._set_cudagraph_sizes (vllm/config/vllm.py, worked by hand from its
 * code for each case below), the padding to them, the GPU KV-cache sizing worked by hand for
 * one model, and one mixed step's cost worked by hand in each mode.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "models/cost.h"
#include "policies/mode.h"
#include "policies/policy.h"
#include "sim/kernel.h"
#include "tests/check_main.h"
#include "tests/sim_fixture.h"

extern const struct exec_mode mode_hpu_graphs, mode_hpu_compile, mode_hpu_eager,
	mode_cuda_graphs;

/* The sizes of (SEQS, TOKENS, CAPTURE) must be EXP[0..N-1]. */
static void sizes_are(int64_t seqs, int64_t tokens, int64_t capture, const int32_t *exp, size_t n)
{
	int32_t got[1024];
	size_t k = cuda_graph_sizes(seqs, tokens, capture, false, got, 1024);
	ck_assert_uint_eq(k, n);
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(got[i] == exp[i], "seqs %lld tokens %lld capture %lld: size %zu is %d, "
			      "expected %d", (long long)seqs, (long long)tokens, (long long)capture, i,
			      got[i], exp[i]);
}

/* [1, 2, 4] + range(8, min(m + 1, 256), 8) + range(256, m + 1, 16), written out. */
static size_t grid(int64_t m, int32_t *out)
{
	size_t n = 0;
	static const int32_t small[] = {1, 2, 4};
	for (size_t i = 0; i < 3; i++)
		if (small[i] <= m)
			out[n++] = small[i];
	for (int32_t x = 8; m >= 8 && x < (m + 1 < 256 ? m + 1 : 256); x += 8)
		out[n++] = x;
	for (int32_t x = 256; m >= 256 && x <= m; x += 16)
		out[n++] = x;
	return n;
}

START_TEST(capture_sizes_upstream)
{
	/* max_num_seqs 8, max_num_batched_tokens 2048, unset: min(8 * 1 * 2, 512) = 16 */
	static const int32_t a[] = {1, 2, 4, 8, 16};
	sizes_are(8, 2048, 0, a, 5);
	/* max_num_seqs 1: min(2, 512) = 2 */
	static const int32_t b[] = {1, 2};
	sizes_are(1, 2048, 0, b, 2);
	/* max_num_seqs 256, 2048 tokens: 512; 1, 2, 4, 8..248 (31), 256..512 (17): 51 */
	int32_t c[64];
	size_t nc = grid(512, c);
	ck_assert_uint_eq(nc, 51);
	ck_assert_int_eq(c[33], 248);
	ck_assert_int_eq(c[34], 256);
	ck_assert_int_eq(c[50], 512);
	sizes_are(256, 2048, 0, c, nc);
	/* max_num_batched_tokens 100 bounds 512 to 100: 1, 2, 4, 8..96, then 100 appended
	 * ("ensure max_num_tokens is captured") */
	static const int32_t d[] = {1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96, 100};
	sizes_are(256, 100, 0, d, 16);
	/* max_cudagraph_capture_size 300 of 8192 tokens: ..., 248, 256, 272, 288 (300 is not on
	 * the grid; the largest, valid_max_size, is 288) */
	int32_t e[64];
	size_t ne = grid(300, e);
	ck_assert_uint_eq(ne, 37);
	ck_assert_int_eq(e[36], 288);
	sizes_are(256, 8192, 300, e, ne);
	/* max_cudagraph_capture_size 1000 bounded by 520 tokens: the grid to 512, then 520 */
	int32_t f[64];
	size_t nf = grid(520, f);
	f[nf++] = 520;
	ck_assert_uint_eq(nf, 52);
	sizes_are(256, 520, 1000, f, nf);
	/* max_num_batched_tokens 256 on the grid: not appended twice */
	int32_t g[64];
	size_t ng = grid(256, g);
	sizes_are(512, 256, 0, g, ng);
	ck_assert_int_eq(g[ng - 1], 256);
	/* enforce_eager: cudagraph_mode NONE, no sizes */
	ck_assert_uint_eq(cuda_graph_sizes(256, 2048, 0, true, c, 64), 0);
	/* 1024 sizes asked for (capture 16384): 3 + 31 + (16384 - 256) / 16 + 1 */
	ck_assert_uint_eq(cuda_graph_sizes(256, 16384, 16384, false, NULL, 0), 3 + 31 + 1009);
}
END_TEST

/* The padding: the smallest size >= x, none above the largest. */
START_TEST(capture_padding)
{
	static const int64_t cases[][3] = {{8, 2048, 0},  {256, 2048, 0},   {256, 100, 0},
					   {256, 8192, 300}, {256, 520, 1000}, {512, 256, 0},
					   {1, 2048, 0}};
	for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
		int32_t v[1100];
		size_t n = cuda_graph_sizes(cases[c][0], cases[c][1], cases[c][2], false, v, 1100);
		int64_t m = cuda_graph_bound(cases[c][0], cases[c][1], cases[c][2]);
		for (int64_t x = 1; x <= cases[c][1] + 1; x++) {
			int64_t want = 0;
			for (size_t i = 0; i < n && !want; i++)
				if (v[i] >= x)
					want = v[i];
			ck_assert_msg(cuda_graph_pad(x, m, cases[c][1]) == want,
				      "case %zu: %lld tokens pad to %lld, expected %lld", c,
				      (long long)x, (long long)cuda_graph_pad(x, m, cases[c][1]),
				      (long long)want);
		}
	}
	/* captures: 51 PIECEWISE + 35 FULL (sizes up to max_num_seqs 256) */
	int32_t largest;
	ck_assert_int_eq(cuda_graph_captures(256, 2048, 0, false, &largest), 86);
	ck_assert_int_eq(largest, 512);
	ck_assert_int_eq(cuda_graph_captures(256, 2048, 0, true, &largest), 0);
	ck_assert_int_eq(largest, 0);
}
END_TEST

/* Llama-3.1-8B bf16 on one A100 80 GB (hbm_gib 79.1), gpu_memory_utilization 0.9, block 16,
 * 86 captures (max_num_seqs 256, 2048 tokens):
 *   requested = 0.9 x 79.1 GiB                 = 76,439,680,450.56 B
 *   weights   (models.json, llama-3.1-8b bf16)  = 16,059,990,016 B
 *   activation peak (COST_ACTIVATION_RESERVE)  =  2,147,483,648 B
 *   graphs    86 x 26 MiB (host.json)          =  2,344,615,936 B
 *   available                                  = 55,887,590,850.56 B
 *   block     16 tokens x 131,072 B (32 layers x 8 KV heads x 128 x K and V x 2 B)
 *                                              =      2,097,152 B
 *   blocks    floor(55,887,590,850.56 / 2,097,152) = floor(26,649.27) = 26,649 */
START_TEST(gpu_kv_by_hand)
{
	struct config cfg;
	struct bs_err err = {0};
	config_init(&cfg);
	ck_assert(!config_set(&cfg, "hardware", "a100", CFG_ORIGIN_CMDLINE, NULL, 0, &err));
	ck_assert(!config_set(&cfg, "server.block_size", "16", CFG_ORIGIN_CMDLINE, NULL, 0, &err));
	ck_assert(!config_set(&cfg, "server.execution_mode", "cuda_graphs", CFG_ORIGIN_CMDLINE, NULL,
			      0, &err));
	struct cost_model *cm = NULL;
	ck_assert_int_eq(cost_model_new(&cfg, &cm, &err), 0);
	ck_assert_double_eq(cost_weight_bytes(cm), 16059990016.0);
	ck_assert_double_eq(cost_kv_bytes_per_token(cm), 131072.0);
	ck_assert_int_eq(cost_num_kv_blocks_gpu(cm, 16, 0.9, 86, 1), 26649);
	/* no graphs (enforce_eager): 2,344,615,936 B more, 1,118 blocks more */
	ck_assert_int_eq(cost_num_kv_blocks_gpu(cm, 16, 0.9, 0, 1), 27767);
	ck_assert(cost_model_gpu(cm));
	cost_model_free(cm);
	config_release(&cfg);
}
END_TEST

/* ---- one mixed step in each mode ------------------------------------------------------- */

/* Costs: prefill 1000 + 10 x query; decode 500 + blocks; a GPU forward 2000 + 10 x tokens +
 * decode blocks; launch FULL 0, PIECEWISE 3000, eager 9000, an HPU graph 400; eager extra 700;
 * host 100 + 10 per request; no compile time. */
static int64_t mc_prefill(void *c, int32_t bs, int32_t q, int32_t ctx)
{
	(void)c, (void)bs, (void)ctx;
	return 1000 + 10 * q;
}
static int64_t mc_decode(void *c, int32_t bs, int32_t nb)
{
	(void)c, (void)bs;
	return 500 + nb;
}
static int64_t mc_unified(void *c, int32_t q, int32_t sh, int32_t un, bool causal)
{
	(void)c, (void)q, (void)sh, (void)un, (void)causal;
	return 1;
}
static int64_t mc_compile(void *c, int phase, const int32_t v[4], bool runtime)
{
	(void)c, (void)phase, (void)v, (void)runtime;
	return 0;
}
static int64_t mc_host(void *c, int32_t dec, int32_t pre)
{
	(void)c;
	return 100 + 10 * (dec + pre);
}
static int64_t mc_eager(void *c)
{
	(void)c;
	return 700;
}
static int64_t mc_forward(void *c, const int32_t v[4])
{
	(void)c;
	return 2000 + 10 * v[0] + v[2];
}
static int64_t mc_launch(void *c, int kind)
{
	(void)c;
	return kind == FWD_FULL ? 0 : kind == FWD_PIECEWISE ? 3000 : kind == FWD_EAGER ? 9000 : 400;
}

/* Request A (8 prompt tokens, 3 output tokens) at 0 and B (20 prompt tokens, 2 output tokens)
 * at 1 ns, async scheduling off: step 1 is A's prefill alone; step 2 A's first decode with B's
 * prefill (the mixed step).  Returns the passes of step 2 in LOG (from index *FIRST). */
static int64_t mixed_step(const struct exec_mode *m, struct passlog *log, int *first)
{
	struct sim_params p = fixture_params();
	p.mode = m;
	p.host_time = true;
	p.async_scheduling = false;
	p.max_capture = 10; /* B's 20-token prefill is above it */
	p.enforce_eager = m->eager;
	p.block_size = m->block_size;
	if (m->one_forward) {
		p.one_forward = p.unified = true;
		p.capture_bound = cuda_graph_bound(p.max_num_seqs, p.max_num_batched_tokens, 0);
		p.captures = cuda_graph_captures(p.max_num_seqs, p.max_num_batched_tokens, 0, false,
						 &p.capture_max);
	}
	struct req_spec req[2] = {{0}, {0}};
	req[0] = (struct req_spec){.arrival_ns = 0, .prompt_tokens = 8, .output_tokens = 3,
				   .prefix_group = -1};
	req[1] = (struct req_spec){.arrival_ns = 1, .prompt_tokens = 20, .output_tokens = 2,
				   .prefix_group = -1};
	struct sim_costs c = {NULL, mc_prefill, mc_decode, mc_unified, mc_compile, NULL, NULL,
			      NULL, NULL, mc_host, NULL, mc_eager, NULL, mc_forward, mc_launch, NULL};
	struct sim_hooks h = {log, NULL, log_pass, NULL, NULL};
	struct sim *s = sim_new(&p, req, 2, NULL, NULL, &c, &h);
	sim_warmup(s);
	sim_run(s);
	sim_finish(s);
	ck_assert_uint_eq(sim_finished(s), 2);
	sim_free(s);
	/* step 1 is one pass (A's prefill); step 2 starts at the second pass */
	*first = 1;
	return log->p[1].start_ns;
}

START_TEST(mixed_step_each_mode)
{
	struct passlog log;
	int i;
	/* Step 1: A's prefill, 1000 + 80 = 1080 (8 <= 10 tokens: its graph), host 110 after it:
	 * step 2 starts at 1190 without async scheduling (device + host); on the GPU one forward
	 * of 8 tokens (padded to 8): 2000 + 80 = 2080 against a PIECEWISE launch of 3000: 3000,
	 * + 110. */

	/* hpu_graphs: step 1's prefill replays its graph: 1080 + 400 launch, + 110: 1590.  B's
	 * prefill 1000 + 200 = 1200, above the capture size: + 700 eager = 1900 (no graph, no
	 * launch); A's decode 500 + 1 block = 501 + 400 launch = 901; host 100 + 2 x 10 = 120:
	 * the step is 2801 + 120. */
	memset(&log, 0, sizeof log);
	int64_t t = mixed_step(&mode_hpu_graphs, &log, &i);
	ck_assert_int_eq(log.p[0].end_ns - log.p[0].start_ns, 1480);
	ck_assert_int_eq(t, 1590);
	ck_assert_int_eq(log.p[1].end_ns - log.p[1].start_ns, 1900);
	ck_assert_int_eq(log.p[2].start_ns, log.p[1].end_ns);
	ck_assert_int_eq(log.p[2].end_ns - log.p[2].start_ns, 901);
	ck_assert_int_eq(log.p[3].start_ns, 1590 + 2801 + 120); /* step 3 */
	/* hpu_compile: no HPU graph (no launch), no eager extra: 1080, then 1200 and 501. */
	memset(&log, 0, sizeof log);
	t = mixed_step(&mode_hpu_compile, &log, &i);
	ck_assert_int_eq(t, 1190);
	ck_assert_int_eq(log.p[1].end_ns - log.p[1].start_ns, 1200);
	ck_assert_int_eq(log.p[2].end_ns - log.p[2].start_ns, 501);
	/* hpu_eager: every pass eager: 1900 and 1201; step 1's prefill 1780. */
	memset(&log, 0, sizeof log);
	t = mixed_step(&mode_hpu_eager, &log, &i);
	ck_assert_int_eq(log.p[0].end_ns - log.p[0].start_ns, 1780);
	ck_assert_int_eq(t, 1780 + 110);
	ck_assert_int_eq(log.p[1].end_ns - log.p[1].start_ns, 1900);
	ck_assert_int_eq(log.p[2].end_ns - log.p[2].start_ns, 1201);
	/* cuda_graphs: ONE forward of 1 + 20 = 21 tokens, padded to 24 (capture sizes of 256
	 * sequences, 2048 tokens), A's 1 block of 16: 2000 + 240 + 1 = 2241; mixed: a PIECEWISE
	 * graph, launch 3000 > 2241: 3000; then A's and B's decodes: 2 tokens (size 2), a FULL
	 * graph reading A's 1 block and B's 2 (21 tokens of 16): 2000 + 20 + 3 = 2023. */
	memset(&log, 0, sizeof log);
	t = mixed_step(&mode_cuda_graphs, &log, &i);
	ck_assert_int_eq(log.p[0].end_ns - log.p[0].start_ns, 3000);
	ck_assert_int_eq(t, 3000 + 110);
	ck_assert_int_eq(log.p[1].real[0], 21);
	ck_assert_int_eq(log.p[1].bucket[0], 24);
	ck_assert_int_eq(log.p[1].real[3], 20);
	ck_assert_int_eq(log.p[1].end_ns - log.p[1].start_ns, 3000);
	ck_assert_int_eq(log.p[2].bucket[0], 2); /* A's and B's decodes: 2 tokens */
	ck_assert_int_eq(log.p[2].end_ns - log.p[2].start_ns, 2000 + 20 + 3);
	ck_assert_int_eq(log.p[2].start_ns, log.p[1].end_ns + 120);
}
END_TEST

/* The family is registered: every mode is a member, found by name. */
START_TEST(modes_registered)
{
	ck_assert_ptr_eq(exec_mode("cuda_graphs"), &mode_cuda_graphs);
	ck_assert_ptr_eq(exec_mode("hpu_graphs"), &mode_hpu_graphs);
	ck_assert_ptr_eq(exec_mode("hpu_compile"), &mode_hpu_compile);
	ck_assert_ptr_eq(exec_mode("hpu_eager"), &mode_hpu_eager);
	ck_assert_ptr_null(exec_mode("auto"));
	ck_assert_ptr_eq(policy_family_by_key("server.execution_mode"), &mode_family);
	/* auto: the hardware, then enforce_eager, PT_HPU_LAZY_MODE, the version */
	ck_assert_ptr_eq(exec_mode_auto(true, false, "1", true), &mode_cuda_graphs);
	ck_assert_ptr_eq(exec_mode_auto(false, true, "0", false), &mode_hpu_eager);
	ck_assert_ptr_eq(exec_mode_auto(false, false, "1", false), &mode_hpu_graphs);
	ck_assert_ptr_eq(exec_mode_auto(false, false, "0", true), &mode_hpu_compile);
	ck_assert_ptr_eq(exec_mode_auto(false, false, NULL, true), &mode_hpu_graphs);
	ck_assert_ptr_eq(exec_mode_auto(false, false, NULL, false), &mode_hpu_compile);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("modes");
	TCase *tc = tcase_create("modes");
	tcase_add_test(tc, capture_sizes_upstream);
	tcase_add_test(tc, capture_padding);
	tcase_add_test(tc, gpu_kv_by_hand);
	tcase_add_test(tc, mixed_step_each_mode);
	tcase_add_test(tc, modes_registered);
	suite_add_tcase(s, tc);
	return check_run(s);
}
