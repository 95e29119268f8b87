/*
 * mode: the execution-mode family's shared rules (policies/mode.h).
 */
#include "policies/mode.h"

#include <stdlib.h>
#include <string.h>

#include "sim/util.h"

extern const struct exec_mode mode_hpu_graphs, mode_hpu_compile, mode_hpu_eager,
	mode_cuda_graphs;

const struct exec_mode *exec_mode_auto(bool gpu, bool enforce_eager, const char *lazy_env,
				       bool version_docs)
{
	if (gpu)
		return &mode_cuda_graphs;
	if (enforce_eager)
		return &mode_hpu_eager;
	bool lazy = lazy_env ? !strcmp(lazy_env, "1") : version_docs;
	return lazy ? &mode_hpu_graphs : &mode_hpu_compile;
}

int64_t cuda_graph_bound(int64_t max_num_seqs, int64_t max_num_batched_tokens,
			 int64_t max_capture)
{
	/* default_max_graph_size 512 (1024 on data-centre Blackwell only); decode_query_len 1 */
	int64_t m = max_capture > 0 ? max_capture
				    : (2 * max_num_seqs < 512 ? 2 * max_num_seqs : 512);
	return max_num_batched_tokens < m ? max_num_batched_tokens : m;
}

/* Whether X is on the grid of sizes below bound M: 1, 2, 4, multiples of 8 below 256,
 * multiples of 16 from 256. */
static bool on_grid(int64_t x, int64_t m)
{
	if (x < 1 || x > m)
		return false;
	if (x <= 4)
		return x != 3;
	return x < 256 ? x % 8 == 0 : x % 16 == 0;
}

/* VllmConfig._set_cudagraph_sizes, vllm/config/vllm.py (vllm-project/vllm 000fc94b): see
 * mode.h for the case it covers. */
size_t cuda_graph_sizes(int64_t max_num_seqs, int64_t max_num_batched_tokens,
			int64_t max_capture, bool enforce_eager, int32_t *out, size_t cap)
{
	if (enforce_eager)
		return 0; /* "no cudagraph in use" */
	int64_t m = cuda_graph_bound(max_num_seqs, max_num_batched_tokens, max_capture);
	int64_t mnt = max_num_batched_tokens;
	size_t n = 0;
	for (int64_t x = 1; x <= m; x = x < 4 ? 2 * x : x < 256 ? (x < 8 ? 8 : x + 8) : x + 16)
		if (on_grid(x, m)) {
			if (n < cap)
				out[n] = (int32_t)x;
			n++;
		}
	/* "ensure max_num_tokens is captured if within max capture size": then m == mnt, the
	 * largest, appended after the others (the list stays ascending). */
	if (mnt <= m && !on_grid(mnt, m)) {
		if (n < cap)
			out[n] = (int32_t)mnt;
		n++;
	}
	return n;
}

int64_t cuda_graph_pad(int64_t x, int64_t m, int64_t max_num_batched_tokens)
{
	if (x < 1)
		return 0;
	int64_t up = x <= 4 ? (x == 3 ? 4 : x) : x <= 248 ? (x + 7) / 8 * 8 : (x + 15) / 16 * 16;
	if (up <= m)
		return up;
	/* past the grid: max_num_batched_tokens when it is the appended largest size */
	return max_num_batched_tokens <= m && x <= max_num_batched_tokens ? max_num_batched_tokens
									  : 0;
}

int32_t cuda_graph_captures(int64_t max_num_seqs, int64_t max_num_batched_tokens,
			    int64_t max_capture, bool enforce_eager, int32_t *largest)
{
	size_t n = cuda_graph_sizes(max_num_seqs, max_num_batched_tokens, max_capture,
				    enforce_eager, NULL, 0);
	int32_t *v = xcalloc(n ? n : 1, sizeof *v);
	cuda_graph_sizes(max_num_seqs, max_num_batched_tokens, max_capture, enforce_eager, v, n);
	int32_t full = 0;
	for (size_t i = 0; i < n; i++)
		full += v[i] <= max_num_seqs;
	*largest = n ? v[n - 1] : 0;
	free(v);
	return (int32_t)n + full;
}
