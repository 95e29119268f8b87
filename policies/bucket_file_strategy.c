/*
 * bucket_file_strategy: the bucket lists read from a file (VLLM_BUCKETING_FROM_FILE or
 * bucketing.file; grammar in bucket_file.c, reference 5).  Version docs uses the buckets as
 * written; version current passes them through its prompt filter and non-contiguous decode
 * corrector (no long-context edge rule).
 */
#include "policies/bucket_int.h"

static int gen(const struct bucket_params *p, struct bgen *g, bool filter, struct bs_err *err)
{
	if (!p->file[0])
		return bs_errf(err, BS_EXIT_INPUT, NULL, 0, "bucketing.file",
			       "strategy file needs a bucket file (bucketing.file or "
			       "VLLM_BUCKETING_FROM_FILE)");
	struct blist pr = {0}, de = {0};
	if (bucket_file_parse(p->file, &pr, &de, err)) {
		blist_free(&pr);
		blist_free(&de);
		return -1;
	}
	size_t listed = pr.n;
	if (!pr.n || !de.n) { /* no bucket to warm up for a phase: in either version */
		bs_errf(err, BS_EXIT_INPUT, p->file, 0, NULL, "the bucket file lists no %s bucket",
			pr.n ? "decode" : "prompt");
		blist_free(&pr);
		blist_free(&de);
		return -1;
	}
	if (!filter) {
		g->prompt = pr;
		g->decode = de;
		blist_sort_unique(&g->prompt);
		blist_sort_unique(&g->decode);
		return 0;
	}
	for (size_t i = 0; i < pr.n; i++)
		if (bucket_prompt_keep(p, pr.a[i].v[0], pr.a[i].v[1], pr.a[i].v[2]))
			blist_push(&g->prompt, pr.a[i].v[0], pr.a[i].v[1], pr.a[i].v[2], 0);
	blist_free(&pr);
	bucket_correct_decode(p, &de);
	g->decode = de;
	blist_sort_unique(&g->prompt);
	blist_sort_unique(&g->decode);
	/* The file named, and why the list is empty: nothing listed, or nothing the filter
	 * keeps. */
	if (!g->prompt.n && listed)
		return bs_errf(err, BS_EXIT_INPUT, p->file, 0, NULL,
			       "none of the %zu prompt buckets of the bucket file passes the prompt "
			       "filter of bucketing.version current (check server.max_model_len, "
			       "server.max_num_batched_tokens and server.max_num_seqs)", listed);
	if (!g->prompt.n || !g->decode.n)
		return bs_errf(err, BS_EXIT_INPUT, p->file, 0, NULL, "the bucket file lists no %s "
			       "bucket", g->prompt.n ? "decode" : "prompt");
	return 0;
}

static int gen_docs(const struct bucket_params *p, struct bgen *g, struct bs_err *err)
{
	return gen(p, g, false, err);
}

static int gen_current(const struct bucket_params *p, struct bgen *g, struct bs_err *err)
{
	return gen(p, g, true, err);
}

const struct bucket_strategy bucket_file = {
	.info = {"file", "the buckets listed in a file (bucketing.file or VLLM_BUCKETING_FROM_FILE)",
		 NULL},
	.gen_docs = gen_docs,
	.gen_current = gen_current,
	.phases = BUCKET_PHASES_PROMPT_DECODE,
};
