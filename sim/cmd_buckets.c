/*
 * cmd_buckets: `bucketsim buckets`, the warm-up bucket lists of a configuration as the server
 * logs them at start-up (--format log), or as JSON or CSV, plus optional look-ups that show
 * which bucket a runtime shape runs in and whether it creates a fallback bucket.
 *
 * The printed lists are the warm-up lists (before any look-up); look-ups run in the order given
 * against a list that grows with each fallback, as the server's does.
 */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "models/cost.h"
#include "policies/bucket_advise.h"
#include "policies/bucket_int.h"
#include "policies/bucketing.h"
#include "sim/commands.h"
#include "sim/run_int.h"

enum { OPT_FORMAT = 'f', OPT_OUTPUT = 'o', OPT_LOOKUP = CLI_OPT_FIRST_FREE, OPT_FROM_LOG,
       OPT_ADVISE, OPT_MAX_BUCKETS, OPT_TRACE, OPT_HOLDOUT, OPT_MAX_WARMUP,
       OPT_FREE_SET, OPT_BUDGETS };
enum fmt { FMT_LOG, FMT_JSON, FMT_CSV };

struct lookup {
	enum phase ph;
	struct bshape shape, bucket;
	bool fallback;
};

static const struct cli_opt opts[] = {
	CLI_CONFIG_OPTS,
	{"format", OPT_FORMAT, 1, "FMT", "log (default: the server's start-up log lines), json or csv",
	 "Output"},
	{"output", OPT_OUTPUT, 1, "FILE", "write to FILE atomically instead of stdout ('-' = stdout)",
	 "Output"},
	{"lookup", OPT_LOOKUP, 1 | CLI_REPEAT, "PHASE:SHAPE",
	 "map a runtime shape to its bucket: prompt:BS,QUERY,CTX_BLOCKS, decode:BS,1,NUM_BLOCKS or "
	 "unified:QUERY,SHARED,UNIQUE,CAUSAL (BS, QUERY, NUM_BLOCKS at least 1); repeatable, run "
	 "in order", "Look-ups"},
	{"from-log", OPT_FROM_LOG, 1, "FILE",
	 "read the bucket lists a real server logged at start-up (its 'bucket config', "
	 "'Generated N ... buckets' and '[Warmup]' lines) and print where this configuration's "
	 "generated lists differ from them", "Server log"},
	{"advise", OPT_ADVISE, 0, NULL,
	 "advise the buckets to warm for a workload: a bucket file (VLLM_BUCKETING_FROM_FILE "
	 "syntax) of least expected padding cost, and a report against the generated strategies",
	 "Advisor"},
	{"max-buckets", OPT_MAX_BUCKETS, 1, "K", "--advise: at most K buckets per phase (default 64)",
	 "Advisor"},
	{"max-warmup-s", OPT_MAX_WARMUP, 1, "T", "--advise: instead of --max-buckets, the most "
	 "buckets per phase whose warm-up takes at most T seconds (the cost model's compile time)",
	 "Advisor"},
	{"trace", OPT_TRACE, 1, "FILE", "--advise: the workload's trace (default: as run: the "
	 "bundled Alpaca trace unless workload.* generates one)", "Advisor"},
	{"holdout", OPT_HOLDOUT, 1, "F", "--advise: fit on the first 1-F of the requests, evaluate "
	 "on the last F (0 < F < 1)", "Advisor"},
	{"free-set", OPT_FREE_SET, 0, NULL, "--advise: a free set of up to K buckets per phase (the "
	 "file's exact buckets; a heuristic, its gap to a lower bound reported) instead of a product "
	 "of per-dimension lists", "Advisor"},
	{"budgets", OPT_BUDGETS, 1, "K1,K2,...", "--advise: instead of a bucket file, a CSV of "
	 "padding waste vs warmed buckets: at each budget K (buckets per phase) the advice and each "
	 "generated strategy with its own count knobs at their least expected padding cost within K, "
	 "re-simulated "
	 "(plot with: plot waste FILE --series strategy)", "Advisor"},
	CLI_HELP_OPT,
	{0},
};

static int parse_lookup(const struct cli_cmd *self, const char *arg, struct lookup *lk)
{
	const char *colon = strchr(arg, ':');
	if (!colon)
		return cli_usage(self, "--lookup '%s': expected PHASE:N,N,N", arg);
	size_t pl = (size_t)(colon - arg);
	int want;
	if (pl == 6 && !strncmp(arg, "prompt", 6))
		lk->ph = PHASE_PROMPT, want = 3;
	else if (pl == 6 && !strncmp(arg, "decode", 6))
		lk->ph = PHASE_DECODE, want = 3;
	else if (pl == 7 && !strncmp(arg, "unified", 7))
		lk->ph = PHASE_UNIFIED, want = 4;
	else
		return cli_usage(self, "--lookup '%s': phase must be prompt, decode or unified", arg);
	memset(&lk->shape, 0, sizeof lk->shape);
	char *copy = xstrdup(colon + 1), *save = NULL, *tok;
	int n = 0, rc = 0;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int64_t v;
		char why[128];
		if (n == want || parse_i64(tok, 0, INT32_MAX, &v, why, sizeof why)) {
			rc = n == want ? cli_usage(self, "--lookup '%s': %s takes %d numbers", arg,
						   bucket_phase_name(lk->ph), want)
				       : cli_usage(self, "--lookup '%s': %s", arg, why);
			break;
		}
		lk->shape.v[n++] = (int32_t)v;
	}
	free(copy);
	if (rc)
		return rc;
	if (n != want)
		return cli_usage(self, "--lookup '%s': %s takes %d numbers", arg,
				 bucket_phase_name(lk->ph), want);
	if (lk->ph == PHASE_DECODE && lk->shape.v[1] != 1)
		return cli_usage(self, "--lookup '%s': a decode shape is BS,1,NUM_BLOCKS", arg);
	if (lk->ph == PHASE_UNIFIED && lk->shape.v[3] > 1)
		return cli_usage(self, "--lookup '%s': causal must be 0 or 1", arg);
	/* A runtime shape has at least one sequence, one query token and, decoding, one block. */
	const int32_t *v = lk->shape.v;
	const char *low = lk->ph == PHASE_UNIFIED ? (v[0] < 1 ? "QUERY" : NULL)
			  : v[0] < 1		   ? "BS"
			  : lk->ph == PHASE_PROMPT ? (v[1] < 1 ? "QUERY" : NULL)
			  : v[2] < 1		   ? "NUM_BLOCKS"
						   : NULL;
	if (low)
		return cli_usage(self, "--lookup '%s': %s must be at least 1 in a runtime %s shape",
				 arg, low, bucket_phase_name(lk->ph));
	return 0;
}

static void print_tuple(FILE *out, const struct bshape *s, int nd)
{
	fputc('(', out);
	for (int d = 0; d < nd; d++)
		fprintf(out, d ? ", %d" : "%d", (int)s->v[d]);
	fputc(')', out);
}

static const enum phase *phases_of(const struct bucket_params *p, size_t *n)
{
	static const enum phase pd[2] = {PHASE_PROMPT, PHASE_DECODE}, u[1] = {PHASE_UNIFIED};
	if (bucket_params_unified(p) && p->enabled) {
		*n = 1;
		return u;
	}
	*n = 2;
	return pd;
}

static void out_log(FILE *out, const struct bucketer *b, const struct bucket_params *p,
		    const size_t *compiles, const struct lookup *lk, size_t nlk)
{
	size_t nph;
	const enum phase *phs = phases_of(p, &nph);
	size_t total = 0;
	for (size_t i = 0; i < nph; i++) {
		enum phase ph = phs[i];
		if (!p->enabled) {
			fprintf(out, "Bucketing is off - skipping %s buckets generation\n",
				bucket_phase_name(ph));
			continue;
		}
		const char *cl = bucketer_config_line(b, ph);
		/* A line the reproduced server did not log is marked as bucketsim output. */
		if (*cl)
			fprintf(out, "%s%s\n", bucketer_config_logged(b, ph) ? "" : "# ", cl);
		const struct bshape *l;
		size_t n = bucketer_warmup_list(b, ph, &l);
		struct blist view = {(struct bshape *)l, n, n};
		fprintf(out, "Generated %zu %s buckets [%s]: ", n, bucket_phase_name(ph),
			ph == PHASE_UNIFIED ? "query, shared_blocks, unique_blocks" : "bs, query, num_blocks");
		blist_print_py(&view, bucket_phase_ndim(ph), out);
		fputc('\n', out);
	}
	fprintf(out, "# warm-up compiles:");
	for (size_t i = 0; i < nph; i++) {
		fprintf(out, "%s %s %zu", i ? "," : "", bucket_phase_name(phs[i]), compiles[phs[i]]);
		total += compiles[phs[i]];
	}
	fprintf(out, ", total %zu%s\n", total, p->skip_warmup ? " (warm-up skipped)" : "");
	for (size_t i = 0; i < nlk; i++) {
		int nd = bucket_phase_ndim(lk[i].ph);
		fprintf(out, "# lookup %s ", bucket_phase_name(lk[i].ph));
		print_tuple(out, &lk[i].shape, nd);
		fputs(" -> ", out);
		print_tuple(out, &lk[i].bucket, nd);
		if (lk[i].fallback)
			fputs(" fallback (new bucket, compiled at run time)", out);
		else if (lk[i].ph == PHASE_UNIFIED && p->enabled &&
			 !bshape_cmp(&lk[i].shape, &lk[i].bucket)) {
			const struct bshape *l;
			size_t n = bucketer_list(b, PHASE_UNIFIED, &l);
			struct blist view = {(struct bshape *)l, n, n};
			size_t k = blist_bisect_left(&view, &lk[i].shape);
			if (k >= n || bshape_cmp(&l[k], &lk[i].shape))
				fputs(" no bucket (runs unpadded)", out);
		}
		fputc('\n', out);
	}
}

static cJSON *shape_json(const struct bshape *s, int nd)
{
	int v[4] = {s->v[0], s->v[1], s->v[2], s->v[3]};
	return cJSON_CreateIntArray(v, nd);
}

static void out_json(FILE *out, const struct bucketer *b, const struct bucket_params *p,
		     const struct sim_params *sp, const size_t *compiles, const struct lookup *lk, size_t nlk)
{
	cJSON *root = cJSON_CreateObject();
	cJSON_AddStringToObject(root, "version", bucket_version_name(p->version));
	cJSON_AddStringToObject(root, "strategy", p->strategy->info.name);
	cJSON_AddBoolToObject(root, "enabled", p->enabled);
	cJSON_AddBoolToObject(root, "skip_warmup", p->skip_warmup);
	cJSON *pj = cJSON_AddObjectToObject(root, "params");
	cJSON_AddNumberToObject(pj, "max_model_len", p->max_model_len);
	cJSON_AddNumberToObject(pj, "max_num_seqs", p->max_num_seqs);
	cJSON_AddNumberToObject(pj, "max_num_batched_tokens", p->max_num_batched_tokens);
	cJSON_AddNumberToObject(pj, "max_num_prefill_seqs", p->max_num_prefill_seqs);
	cJSON_AddNumberToObject(pj, "block_size", p->block_size);
	cJSON_AddNumberToObject(pj, "num_kv_blocks", (double)p->num_kv_blocks);
	cJSON_AddBoolToObject(pj, "prefix_caching", p->prefix_caching);
	/* As the engine runs it (unified attention reads a contiguous slice of the KV cache). */
	cJSON_AddBoolToObject(pj, "contiguous_pa", sp->contiguous_pa);
	cJSON_AddBoolToObject(pj, "merged_prefill", p->merged_prefill);
	size_t nph, total = 0;
	const enum phase *phs = phases_of(p, &nph);
	for (size_t i = 0; i < nph; i++) {
		const struct bshape *l;
		size_t n = bucketer_warmup_list(b, phs[i], &l);
		cJSON *a = cJSON_AddArrayToObject(root, bucket_phase_name(phs[i]));
		for (size_t k = 0; k < n; k++)
			cJSON_AddItemToArray(a, shape_json(&l[k], bucket_phase_ndim(phs[i])));
	}
	cJSON *wc = cJSON_AddObjectToObject(root, "warmup_compiles");
	for (size_t i = 0; i < nph; i++) {
		cJSON_AddNumberToObject(wc, bucket_phase_name(phs[i]), (double)compiles[phs[i]]);
		total += compiles[phs[i]];
	}
	cJSON_AddNumberToObject(wc, "total", (double)total);
	cJSON *la = cJSON_AddArrayToObject(root, "lookups");
	for (size_t i = 0; i < nlk; i++) {
		cJSON *o = cJSON_CreateObject();
		int nd = bucket_phase_ndim(lk[i].ph);
		cJSON_AddStringToObject(o, "phase", bucket_phase_name(lk[i].ph));
		cJSON_AddItemToObject(o, "shape", shape_json(&lk[i].shape, nd));
		cJSON_AddItemToObject(o, "bucket", shape_json(&lk[i].bucket, nd));
		cJSON_AddBoolToObject(o, "fallback", lk[i].fallback);
		cJSON_AddItemToArray(la, o);
	}
	char *s = cJSON_Print(root);
	fputs(s, out);
	fputc('\n', out);
	free(s);
	cJSON_Delete(root);
}

static void out_csv(FILE *out, const struct bucketer *b, const struct bucket_params *p,
		    const struct lookup *lk, size_t nlk)
{
	size_t nph;
	const enum phase *phs = phases_of(p, &nph);
	bool uni = phs[0] == PHASE_UNIFIED;
	int nd = uni ? 4 : 3;
	fputs(uni ? "phase,query,shared_blocks,unique_blocks,causal" : "phase,bs,query,num_blocks", out);
	if (nlk)
		fputs(uni ? ",shape_query,shape_shared_blocks,shape_unique_blocks,shape_causal,fallback"
			  : ",shape_bs,shape_query,shape_num_blocks,fallback", out);
	fputc('\n', out);
	for (size_t i = 0; i < nph; i++) {
		const struct bshape *l;
		size_t n = bucketer_warmup_list(b, phs[i], &l);
		for (size_t k = 0; k < n; k++) {
			fputs(bucket_phase_name(phs[i]), out);
			for (int d = 0; d < nd; d++)
				fprintf(out, ",%d", (int)l[k].v[d]);
			if (nlk)
				fputs(uni ? ",,,,," : ",,,,", out);
			fputc('\n', out);
		}
	}
	for (size_t i = 0; i < nlk; i++) {
		fprintf(out, "lookup_%s", bucket_phase_name(lk[i].ph));
		for (int d = 0; d < nd; d++)
			fprintf(out, ",%d", (int)lk[i].bucket.v[d]);
		for (int d = 0; d < nd; d++)
			fprintf(out, ",%d", (int)lk[i].shape.v[d]);
		fprintf(out, ",%s\n", lk[i].fallback ? "true" : "false");
	}
}

/* Buckets of A missing from B (both sorted and unique) into OUT. */
static void list_minus(const struct bshape *a, size_t na, const struct bshape *b, size_t nb,
		       struct blist *out)
{
	size_t j = 0;
	for (size_t i = 0; i < na; i++) {
		while (j < nb && bshape_cmp(&b[j], &a[i]) < 0)
			j++;
		if (j == nb || bshape_cmp(&b[j], &a[i]))
			blist_push(out, a[i].v[0], a[i].v[1], a[i].v[2], a[i].v[3]);
	}
}

/* --from-log: the logged lists beside this configuration's, phase by phase. */
static void out_from_log(FILE *out, enum fmt fmt, const char *path, const struct bucket_log *lg,
			 const struct bucketer *b, const struct bucket_params *p)
{
	size_t nph;
	const enum phase *phs = phases_of(p, &nph);
	bool uni_log = lg->list[PHASE_UNIFIED].n > 0;
	cJSON *root = fmt == FMT_JSON ? cJSON_CreateObject() : NULL;
	if (root) {
		cJSON_AddStringToObject(root, "log", path);
		cJSON_AddStringToObject(root, "version", bucket_version_name(p->version));
		cJSON_AddStringToObject(root, "strategy", p->strategy->info.name);
	} else {
		fprintf(out, "# log %s against bucketsim's %s strategy, version %s\n", path,
			p->strategy->info.name, bucket_version_name(p->version));
	}
	for (int ph = 0; ph < 3; ph++) {
		if ((ph == PHASE_UNIFIED) != uni_log)
			continue;
		const struct blist *ll = &lg->list[ph];
		const struct bshape *gl = NULL;
		size_t gn = 0;
		bool has = false;
		for (size_t i = 0; i < nph; i++)
			has |= phs[i] == (enum phase)ph;
		if (has && p->enabled)
			gn = bucketer_warmup_list(b, (enum phase)ph, &gl);
		struct blist only_log = {0}, only_sim = {0};
		list_minus(ll->a, ll->n, gl, gn, &only_log);
		list_minus(gl, gn, ll->a, ll->n, &only_sim);
		int nd = bucket_phase_ndim((enum phase)ph);
		const char *src = lg->gen_line[ph] ? "Generated" : "warm-up";
		long line = lg->gen_line[ph] ? lg->gen_line[ph] : 0;
		const char *cl = ph < 2 ? bucketer_config_line(b, (enum phase)ph) : "";
		bool cfg_same = ph < 2 && lg->cfg_line[ph] && !strcmp(cl, lg->cfg[ph]);
		if (root) {
			cJSON *o = cJSON_AddObjectToObject(root, bucket_phase_name((enum phase)ph));
			cJSON_AddNumberToObject(o, "log_buckets", (double)ll->n);
			cJSON_AddStringToObject(o, "log_source", ll->n ? src : "none");
			cJSON_AddNumberToObject(o, "log_line", (double)line);
			cJSON_AddNumberToObject(o, "log_warmup_shapes", (double)lg->warm[ph].n);
			cJSON_AddNumberToObject(o, "bucketsim_buckets", (double)gn);
			if (ph < 2) {
				if (lg->cfg_line[ph])
					cJSON_AddStringToObject(o, "log_config", lg->cfg[ph]);
				else
					cJSON_AddNullToObject(o, "log_config");
				cJSON_AddStringToObject(o, "bucketsim_config", cl);
			}
			const struct blist *ls[2] = {&only_log, &only_sim};
			const char *nm[2] = {"only_in_log", "only_in_bucketsim"};
			for (int k = 0; k < 2; k++) {
				cJSON *a = cJSON_AddArrayToObject(o, nm[k]);
				for (size_t i = 0; i < ls[k]->n; i++)
					cJSON_AddItemToArray(a, shape_json(&ls[k]->a[i], nd));
			}
		} else {
			const char *pn = bucket_phase_name((enum phase)ph);
			if (!ll->n)
				fprintf(out, "# %s: the log lists no bucket\n", pn);
			else if (line)
				fprintf(out, "# %s: %zu buckets in the log (Generated line %ld; %zu "
					"distinct [Warmup] shapes), %zu generated by bucketsim", pn, ll->n,
					line, lg->warm[ph].n, gn);
			else
				fprintf(out, "# %s: %zu buckets in the log (the distinct [Warmup] shapes; "
					"no Generated line), %zu generated by bucketsim", pn, ll->n, gn);
			if (ll->n)
				fputs(!only_log.n && !only_sim.n ? ": identical\n" : ": they differ\n",
				      out);
			if (ph < 2 && (lg->cfg_line[ph] || *cl)) {
				if (lg->cfg_line[ph])
					fprintf(out, "#   config in the log (line %ld): %s\n",
						lg->cfg_line[ph], lg->cfg[ph]);
				else
					fprintf(out, "#   config in the log: none\n");
				fprintf(out, "#   config of bucketsim%s: %s\n", cfg_same ? " (the same)" : "",
					*cl ? cl : "none");
			}
			const struct blist *ls[2] = {&only_log, &only_sim};
			const char *nm[2] = {"only in the log", "only in bucketsim"};
			for (int k = 0; k < 2; k++)
				if (ls[k]->n) {
					fprintf(out, "#   %zu %s: ", ls[k]->n, nm[k]);
					blist_print_py(ls[k], nd, out);
					fputc('\n', out);
				}
		}
		blist_free(&only_log);
		blist_free(&only_sim);
	}
	if (root) {
		char *js = cJSON_Print(root);
		fputs(js, out);
		fputc('\n', out);
		free(js);
		cJSON_Delete(root);
	}
}

static int run(const struct cli_cmd *self, int argc, char **argv)
{
	struct run_ctx x;
	memset(&x, 0, sizeof x);
	struct bs_err err = {0};
	struct cli_state st = {0};
	enum fmt fmt = FMT_LOG;
	const char *output = "-";
	struct lookup *lk = xcalloc((size_t)argc + 1, sizeof *lk);
	size_t nlk = 0;
	const char *from_log = NULL, *trace = NULL;
	bool adv = false;
	struct advise_opts ao = {64, 0, 0, false, NULL, 0};
	size_t *budgets = NULL;
	bool kset = false;
	struct bucket_log lg;
	memset(&lg, 0, sizeof lg);
	int c, rc = 0;
	struct outset os;
	outset_init(&os);
	cli_config_init(&x.cc);
	while ((c = cli_next(self, argc, argv, &st)) != -1) {
		int r = cli_config_step(&x.cc, c, st.optarg, &rc);
		if (r < 0)
			goto out;
		if (r)
			continue;
		switch (c) {
		case OPT_FORMAT:
			if (!strcmp(st.optarg, "log"))
				fmt = FMT_LOG;
			else if (!strcmp(st.optarg, "json"))
				fmt = FMT_JSON;
			else if (!strcmp(st.optarg, "csv"))
				fmt = FMT_CSV;
			else {
				rc = cli_usage(self, "--format '%s': expected log, json or csv", st.optarg);
				goto out;
			}
			break;
		case OPT_OUTPUT:
			output = st.optarg;
			break;
		case OPT_LOOKUP:
			if ((rc = parse_lookup(self, st.optarg, &lk[nlk])))
				goto out;
			nlk++;
			break;
		case OPT_FROM_LOG:
			from_log = st.optarg;
			break;
		case OPT_ADVISE:
			adv = true;
			break;
		case OPT_TRACE:
			trace = st.optarg;
			break;
		case OPT_MAX_BUCKETS: {
			int64_t v;
			char why[128];
			if (parse_i64(st.optarg, 1, 100000, &v, why, sizeof why)) {
				rc = cli_usage(self, "--max-buckets '%s': %s", st.optarg, why);
				goto out;
			}
			ao.max_buckets = (size_t)v;
			kset = true;
			break;
		}
		case OPT_MAX_WARMUP: {
			char *end;
			double v = strtod(st.optarg, &end);
			if (*end || end == st.optarg || !(v > 0 && v < 1e9)) {
				rc = cli_usage(self, "--max-warmup-s '%s': expected seconds above 0",
					       st.optarg);
				goto out;
			}
			ao.max_warmup_s = v;
			break;
		}
		case OPT_BUDGETS: {
			free(budgets);
			budgets = NULL;
			ao.nbudgets = 0;
			char *l = xstrdup(st.optarg), *save = NULL;
			bool bad = !*l || l[strlen(l) - 1] == ',';
			for (char *w = strtok_r(l, ",", &save); w && !bad; w = strtok_r(NULL, ",", &save)) {
				int64_t v;
				char why[128];
				if (parse_i64(w, 1, 100000, &v, why, sizeof why)) {
					rc = cli_usage(self, "--budgets '%s': '%s': %s", st.optarg, w, why);
					free(l);
					goto out;
				}
				budgets = xrealloc(budgets, (ao.nbudgets + 1) * sizeof *budgets);
				budgets[ao.nbudgets++] = (size_t)v;
			}
			free(l);
			if (bad || !ao.nbudgets) {
				rc = cli_usage(self, "--budgets '%s': expected counts K1,K2,... above 0",
					       st.optarg);
				goto out;
			}
			ao.budgets = budgets;
			break;
		}
		case OPT_FREE_SET:
			ao.free_set = true;
			break;
		case OPT_HOLDOUT: {
			char *end;
			double v = strtod(st.optarg, &end);
			if (*end || end == st.optarg || !(v > 0 && v < 1)) {
				rc = cli_usage(self, "--holdout '%s': expected a fraction between 0 and 1 "
					       "(exclusive)", st.optarg);
				goto out;
			}
			ao.holdout = v;
			break;
		}
		default:
			BUG("unhandled option %d", c);
		}
	}
	if (st.optind != argc) {
		rc = cli_usage(self, "unexpected argument '%s'", argv[st.optind]);
		goto out;
	}
	/* The configuration checked as run and validate check it (run_setup: the same rules,
	 * every value resolved as it runs), the workload aside: it plays no part here. */
	if ((trace || ao.holdout > 0 || kset || ao.max_warmup_s > 0 || ao.free_set ||
	     ao.nbudgets) && !adv) {
		rc = cli_usage(self, "--trace, --max-buckets, --max-warmup-s, --holdout, --free-set "
			       "and --budgets go with --advise");
		goto out;
	}
	if (ao.nbudgets && (kset || ao.max_warmup_s > 0 || ao.holdout > 0 || ao.free_set)) {
		rc = cli_usage(self, "--budgets gives its own counts: not with --max-buckets, "
			       "--max-warmup-s, --holdout or --free-set");
		goto out;
	}
	if (kset && ao.max_warmup_s > 0) {
		rc = cli_usage(self, "--max-buckets and --max-warmup-s: give one budget");
		goto out;
	}
	if (adv && (nlk || from_log || fmt != FMT_LOG)) {
		rc = cli_usage(self, "--advise prints its bucket file and report: not with --lookup, "
			       "--from-log or --format");
		goto out;
	}
	if (run_setup(&x, adv ? run_default_trace(&x.cc.cfg, trace) : NULL, adv, &err) ||
	    run_check_unread(&x, &err)) {
		config_locate(&x.cc.cfg, &err);
		rc = cli_fail(&err);
		goto out;
	}
	if (x.cc.print_config) {
		config_print(&x.cc.cfg, stdout);
		goto out;
	}
	if (from_log && nlk) {
		rc = cli_usage(self, "--from-log and --lookup: give one or the other");
		goto out;
	}
	if (from_log && fmt == FMT_CSV) {
		rc = cli_usage(self, "--from-log prints log or json, not csv");
		goto out;
	}
	if (from_log && bucket_log_parse(from_log, &lg, &err)) {
		rc = cli_fail(&err);
		goto out;
	}
	const struct bucket_params *p = &x.bp;
	struct bucketer *b = x.b;
	for (size_t i = 0; i < nlk; i++)
		if ((lk[i].ph == PHASE_UNIFIED) != (bucket_params_unified(p) && p->enabled) &&
		    p->enabled) {
			rc = cli_usage(self, "--lookup %s: the resolved strategy is %s, whose phases "
				       "are %s", bucket_phase_name(lk[i].ph),
				       p->strategy->info.name,
				       bucket_params_unified(p) ? "unified" : "prompt and decode");
			goto out;
		}
	size_t compiles[3] = {0, 0, 0};
	for (int ph = 0; ph < 3; ph++) {
		struct bshape *w;
		compiles[ph] = bucketer_warmup(b, (enum phase)ph, &w);
		free(w);
	}
	for (size_t i = 0; i < nlk; i++)
		lk[i].fallback = bucketer_lookup(b, lk[i].ph, &lk[i].shape, &lk[i].bucket);
	FILE *out = outset_open(&os, output, &err);
	if (!out) {
		rc = cli_fail(&err);
		goto out;
	}
	if (adv) {
		if (buckets_advise(&x, &ao, out, &err)) {
			rc = cli_fail(&err);
			goto out;
		}
	} else if (from_log)
		out_from_log(out, fmt, from_log, &lg, b, p);
	else if (fmt == FMT_LOG)
		out_log(out, b, p, compiles, lk, nlk);
	else if (fmt == FMT_JSON)
		out_json(out, b, p, &x.sp, compiles, lk, nlk);
	else
		out_csv(out, b, p, lk, nlk);
	if (outset_commit(&os, &err))
		rc = cli_fail(&err);
out:
	outset_abort(&os);
	run_teardown(&x);
	bucket_log_free(&lg);
	free(lk);
	free(budgets);
	return rc;
}

const struct cli_cmd cmd_buckets = {
	"buckets", "bucketsim buckets [-c CONFIG.json] [--set KEY=VALUE] [--env NAME=VALUE] "
	"[--format log|json|csv] [-o FILE] [--lookup PHASE:SHAPE]... [--from-log SERVER.LOG] [--advise [--max-buckets K|--max-warmup-s T] [--trace FILE] [--holdout F] [--free-set] [--budgets K1,K2,...]]",
	"print the warm-up bucket lists (and look-ups) of a configuration",
	"Generates the bucket lists vLLM on Gaudi warms up for this configuration, exactly as the\n"
	"server does (bucketing.version docs: the July 2025 code the documentation logs; current:\n"
	"vllm-gaudi main), and prints them as the server's start-up log lines (--format log; lines\n"
	"starting with '#' are the simulator's own additions, so 'grep -v ^#' diffs against a real\n"
	"log after its timestamp prefix), as JSON or as CSV.  Also reports the warm-up compile count\n"
	"(distinct buckets warmed up).  Each --lookup maps a runtime shape to the bucket the server\n"
	"runs it in, in order; a miss may append a fallback bucket (a runtime compile) that later\n"
	"look-ups see.  The printed lists are the warm-up lists, before any look-up.\n"
	"vLLM-Gaudi environment variables (--env) win over the equivalent keys a preset set; a key\n"
	"and its variable both given different values are an error.  The configuration is checked\n"
	"as run and validate check it (the same rules, errors and warnings, keys set but never\n"
	"read warning as for run, errors with --strict), the workload aside.\n"
	"--from-log reads the bucket lists a real server logged at start-up and prints, phase by\n"
	"phase, where this configuration's lists differ from them (bucketing.strategy=log with\n"
	"bucketing.log=FILE runs the logged lists themselves).\n"
	"--advise runs the workload with bucketing ideal, collects every pass's real shape and prints\n"
	"a bucket file (VLLM_BUCKETING_FROM_FILE syntax; at most --max-buckets per phase) of least\n"
	"expected padding cost under the cost model, with a report (as '#' comments) re-simulating\n"
	"it against exponential, linear and padding-aware, with a lower bound on any K buckets and,\n"
	"for a product, the equivalent VLLM_* linear settings; --free-set advises a free set of points\n"
	"instead; --budgets K1,K2,... writes a CSV of padding waste vs warmed buckets for the advice\n"
	"and each strategy's own knobs at equal budgets.",
	"  bucketsim buckets --set server.max_model_len=1024 --set server.max_num_seqs=4 --set server.num_kv_blocks=5781\n"
	"  bucketsim buckets --set bucketing.version=current --set server.max_model_len=1024 --format json --lookup prompt:1,1000,0 --lookup prompt:1,900,0\n"
	"  bucketsim buckets --env VLLM_BUCKETING_FROM_FILE=buckets.txt --set bucketing.version=current --format csv -o buckets.csv\n"
	"  bucketsim buckets --advise --max-buckets 16 --trace my_trace.csv -o advised.txt\n"
	"  bucketsim buckets --advise --budgets 16,64,256,1024 --trace alpaca -o waste.csv\n"
	"  bucketsim buckets --from-log server.log --set bucketing.version=docs --set server.max_model_len=1024 --set server.max_num_seqs=4 --set server.num_kv_blocks=5781\n",
	opts, run,
};
