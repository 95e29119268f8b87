/*
 * bucketing: parameters, the bucketer object, look-ups and the warm-up order (see
 * bucketing.h for the contract and bucket_int.h for how the work is split).
 *
 * Precedence of inputs: the vLLM-Gaudi environment variables given with --env (or "env" in a
 * config file) win over the equivalent bucketing.* / server.* keys, as they do on the real
 * server, where the keys correspond to vLLM's command-line arguments.
 *
 * Invariants: the current list of a phase is always sorted and duplicate-free (a fallback is
 * inserted at its place only when absent); warm[ph] never changes after bucketer_new(); until
 * the phase's first fallback the current list is warm[ph] itself, and cur[ph] (own[ph] set) is
 * its copy from then on, so a look-up allocates only when it inserts a fallback.
 */
#include "policies/bucketing.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "policies/bucket_int.h"

struct bucketer {
	struct bucket_params p;
	struct blist warm[3], cur[3];
	bool own[3];                /* cur[ph] holds the current list (else warm[ph] does) */
	char cfgline[3][512];
	bool cfg_unlogged[3];
	int64_t decode_maxctx;      /* largest ctx over the prepared decode buckets, -1 if none */
};

const char *bucket_phase_name(enum phase ph)
{
	return ph == PHASE_PROMPT ? "prompt" : ph == PHASE_DECODE ? "decode" : "unified";
}

int bucket_phase_ndim(enum phase ph) { return ph == PHASE_UNIFIED ? 4 : 3; }

const struct bucket_strategy *bucket_strategy_find(const char *name)
{
	const struct policy_family *f = policy_family_by_key("bucketing.strategy");
	const struct policy_info *i = f ? policy_find(f, name) : NULL;
	return (const struct bucket_strategy *)i;   /* info is the first member */
}

bucket_gen_fn *bucket_strategy_gen(const struct bucket_strategy *s, enum bucket_version v)
{
	return v == BUCKET_VERSION_DOCS ? s->gen_docs : s->gen_current;
}

bool bucket_params_unified(const struct bucket_params *p)
{
	return p->strategy->phases == BUCKET_PHASES_UNIFIED;
}

bool bucket_params_prompt_decode(const struct bucket_params *p)
{
	return p->strategy->phases == BUCKET_PHASES_PROMPT_DECODE;
}

const char *bucket_version_name(enum bucket_version v)
{
	return v == BUCKET_VERSION_DOCS ? "docs" : "current";
}

/* Upstream class names, for the strategy-override warnings. */
static const char *class_name(const struct bucket_strategy *s)
{
	return s->upstream_class ? s->upstream_class : s->info.name;
}

static void warn(struct bucket_params *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void warn(struct bucket_params *p, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	bs_warn("%s", msg);
	size_t o = strlen(p->warnings);
	snprintf(p->warnings + o, sizeof p->warnings - o, "%s\n", msg);
}

/* A boolean variable: 1 set (value in *out), 0 unset, -1 error. */
static int env_bool(const struct config *cfg, const char *name, bool *out, struct bs_err *err)
{
	const char *s = config_env(cfg, name);
	if (!s)
		return 0;
	char why[160];
	if (parse_bool(s, out, why, sizeof why))
		return bs_errf(err, BS_EXIT_INPUT, NULL, 0, name, "%s", why);
	return 1;
}

static bool listed(const char *const *names, const char *name)
{
	for (size_t i = 0; names && names[i]; i++)
		if (!strcmp(names[i], name))
			return true;
	return false;
}

/* Is the bucket-knob variable NAME read with the resolved strategy and version? */
static bool knob_used(const struct bucket_params *p, const char *name)
{
	if (!strcmp(name, "VLLM_PROMPT_BS_BUCKET_MAX"))
		return true;   /* the runner's max_prefill_batch_size, hence mnps */
	if (!p->enabled)
		return false;
	return listed(p->version == BUCKET_VERSION_DOCS ? p->strategy->env_docs
							: p->strategy->env_current, name);
}

/* Notes --env NAME as not read (bs_unread_note), under the name a sweep axis gives it. */
static void note_env(const char *name)
{
	char *n = xasprintf("env.%s", name);
	bs_unread_note(n);
	free(n);
}

/* The message about --env NAME, which is not in env_var_defs[], into BUF. */
static void unknown_env_msg(const char *name, char *buf, size_t size)
{
	struct str_near near;
	str_near_init(&near, name);
	for (const struct env_var_def *d = env_var_defs; d->name; d++)
		str_near_try(&near, d->name);
	char hint[128];
	str_near_hint(&near, hint, sizeof hint);
	snprintf(buf, size, "--env %s is not a variable bucketsim reads%s", name, hint);
}

/* The error of ENV under sim.strict: named, with the config file and line it came from. */
static int env_error(const struct config *cfg, const struct cfg_env *env, struct bs_err *err,
		     const char *msg)
{
	bool file = env->origin == CFG_ORIGIN_FILE && cfg->file;
	return bs_errf(err, BS_EXIT_INPUT, file ? cfg->file : NULL, file ? env->line : 0,
		       env->name, "%s", msg);
}

/* An --env NAME not in env_var_defs[]: a warning, or an error with sim.strict. */
static int unknown_env(struct bucket_params *p, const struct config *cfg,
		       const struct cfg_env *env, struct bs_err *err)
{
	char msg[256];
	unknown_env_msg(env->name, msg, sizeof msg);
	note_env(env->name);
	if (config_bool(cfg, "sim.strict"))
		return env_error(cfg, env, err, msg);
	warn(p, "%s", msg);
	return 0;
}

int env_var_check_names(const struct config *cfg, struct bs_err *err)
{
	for (size_t i = 0; i < cfg->nenv; i++) {
		if (env_var_find(cfg->env[i].name))
			continue;
		char msg[256];
		unknown_env_msg(cfg->env[i].name, msg, sizeof msg);
		note_env(cfg->env[i].name);
		if (config_bool(cfg, "sim.strict"))
			return env_error(cfg, &cfg->env[i], err, msg);
		bs_warn("%s", msg);
	}
	return 0;
}

/* Variable NAME, given, is not read: a warning, or with sim.strict an error naming it. */
static int ignored_env(struct bucket_params *p, const struct config *cfg, const char *name,
		       struct bs_err *err, const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static int ignored_env(struct bucket_params *p, const struct config *cfg, const char *name,
		       struct bs_err *err, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	note_env(name);
	if (!config_bool(cfg, "sim.strict")) {
		warn(p, "%s", msg);
		return 0;
	}
	for (size_t i = 0; i < cfg->nenv; i++)
		if (!strcmp(cfg->env[i].name, name)) {
			char full[600];
			snprintf(full, sizeof full, "given but never read: %s (--strict)", msg);
			return env_error(cfg, &cfg->env[i], err, full);
		}
	BUG("ignored variable %s not given", name);
}

/* A variable given and the config key that sets the same thing (env_var_def.key), both set by
 * the user, must agree: the variable winning silently would drop the key.  A value that does
 * not parse is left to the variable's reader. */
static int env_key_conflicts(const struct config *cfg, struct bs_err *err)
{
	for (size_t i = 0; i < cfg->nenv; i++) {
		const struct cfg_env *env = &cfg->env[i];
		const struct env_var_def *d = env_var_find(env->name);
		if (!d || !d->key)
			continue;
		const struct cfg_entry *e = config_find(cfg, d->key);
		if (!e || !e->text || (e->origin != CFG_ORIGIN_FILE && e->origin != CFG_ORIGIN_CMDLINE))
			continue;
		const char *v = env->value;
		char why[160], mapped[32];
		bool differ = false;
		switch (e->def->type) {
		case CFG_BOOL: {
			bool b;
			differ = !parse_bool(v, &b, why, sizeof why) && b != e->b;
			break;
		}
		case CFG_INT: {
			int64_t n;
			differ = !parse_i64(v, INT64_MIN, INT64_MAX, &n, why, sizeof why) && n != e->i;
			break;
		}
		case CFG_CHOICE:   /* bucketing.strategy: exp, lin or pad, read by version current */
			if (strcmp(config_str(cfg, "bucketing.version"), "current"))
				break;
			snprintf(mapped, sizeof mapped, "%s", !strcmp(v, "exp") ? "exponential"
							: !strcmp(v, "lin") ? "linear"
							: !strcmp(v, "pad") ? "padding_aware" : "");
			differ = mapped[0] && strcmp(mapped, e->text);
			break;
		default:
			differ = strcmp(v, e->text) != 0;
			break;
		}
		if (!differ)
			continue;
		bool file = e->origin == CFG_ORIGIN_FILE && cfg->file;
		return bs_errf(err, BS_EXIT_INPUT, file ? cfg->file : NULL, file ? e->line : 0,
			       d->key, "'%s' conflicts with the environment variable %s=%s, which sets the "
			       "same thing: "
			       "give one of them (or the same value)", e->text, env->name, v);
	}
	return 0;
}

/* Checks every --env name: unknown ones warn (or fail with sim.strict); every
 * VLLM_{PROMPT,DECODE}_*_BUCKET_* variable must be an integer, and warns when the resolved
 * strategy does not read it. */
static int check_env(struct bucket_params *p, const struct config *cfg, struct bs_err *err)
{
	for (size_t i = 0; i < cfg->nenv; i++) {
		const char *n = cfg->env[i].name;
		if (!env_var_find(n)) {
			if (unknown_env(p, cfg, &cfg->env[i], err))
				return -1;
			continue;
		}
		bool is_knob = (!strncmp(n, "VLLM_PROMPT_", 12) || !strncmp(n, "VLLM_DECODE_", 12)) &&
			       strstr(n + 12, "_BUCKET_");
		if (!is_knob)
			continue;
		int64_t v;
		if (bucket_env_int(cfg, n, &v, err) < 0)
			return -1;
		if (!knob_used(p, n)) {
			if (ignored_env(p, cfg, n, err, "%s=%s is not used by the %s strategy of "
					"bucketing.version %s (will be overwritten)", n,
					cfg->env[i].value, p->strategy->info.name,
					bucket_version_name(p->version)))
				return -1;
			continue;
		}
		/* A legacy SEQ name read for the query dimension (bucket_knob's fallback): version
		 * current says so for each one (read_bucket_settings, bucketing/linear.py). */
		const char *seq = strstr(n, "_SEQ_BUCKET_");
		if (p->version == BUCKET_VERSION_CURRENT && seq) {
			char q[96];
			snprintf(q, sizeof q, "%.*s_QUERY%s", (int)(seq - n), n, seq + 4);
			if (!config_env(cfg, q))
				warn(p, "%s not set, using %s value (%s) instead. This fallback behavior "
				     "is deprecated and will be removed in v0.12.0.", q, n,
				     cfg->env[i].value);
		}
	}
	return 0;
}

bool bucket_contiguous_pa_auto(enum bucket_version v, bool prefix_caching)
{
	/* docs (vllm-hpu-extension features): use_contiguous_pa = Disabled('prefix_caching'), with
	 * prefix_caching taken from vLLM's cache config.  current (vllm-gaudi
	 * extension/environment.py, _get_prefix): the runtime config's prefix_caching is derived
	 * from VLLM_CONTIGUOUS_PA alone, so without that variable contiguous PA is off whatever
	 * vLLM's --enable-prefix-caching says. */
	return v == BUCKET_VERSION_DOCS && !prefix_caching;
}

static int need_key(const struct config *cfg, const char *key, struct bs_err *err)
{
	if (!config_is_set(cfg, key))
		return bs_errf(err, BS_EXIT_INPUT, cfg->file, 0, key,
			       "not set and not derived (resolve the configuration first)");
	return 0;
}

int bucket_params_resolve(const struct config *cfg, struct bucket_params *p, struct bs_err *err)
{
	memset(p, 0, sizeof *p);
	p->cfg = cfg;
	if (need_key(cfg, "server.max_model_len", err) || need_key(cfg, "server.num_kv_blocks", err))
		return -1;
	if (env_key_conflicts(cfg, err))
		return -1;
	p->max_model_len = (int32_t)config_int(cfg, "server.max_model_len");
	p->max_num_seqs = (int32_t)config_int(cfg, "server.max_num_seqs");
	p->max_num_batched_tokens = (int32_t)config_int(cfg, "server.max_num_batched_tokens");
	p->block_size = (int32_t)config_int(cfg, "server.block_size");
	p->num_kv_blocks = config_int(cfg, "server.num_kv_blocks");
	p->prefix_caching = config_bool(cfg, "server.prefix_caching");
	p->merged_prefill = config_bool(cfg, "server.merged_prefill");
	p->skip_warmup = config_bool(cfg, "bucketing.skip_warmup");
	p->version = strcmp(config_str(cfg, "bucketing.version"), "docs") ? BUCKET_VERSION_CURRENT
									 : BUCKET_VERSION_DOCS;
	p->contiguous_pa = config_is_set(cfg, "server.contiguous_pa")
				   ? config_bool(cfg, "server.contiguous_pa")
				   : bucket_contiguous_pa_auto(p->version, p->prefix_caching);
	const char *sname = config_str(cfg, "bucketing.strategy");
	const char *strategy_src = "bucketing.strategy";
	if (!(p->strategy = bucket_strategy_find(sname)))
		return bs_errf(err, BS_EXIT_INPUT, cfg->file, 0, "bucketing.strategy",
			       "unknown strategy '%s'", sname);
	const char *f = config_str(cfg, "bucketing.file");
	if (f)
		snprintf(p->file, sizeof p->file, "%s", f);

	bool b;
	int r;
	if ((r = env_bool(cfg, "VLLM_SKIP_WARMUP", &b, err)) < 0)
		return -1;
	if (r)
		p->skip_warmup = b;
	const char *s = config_env(cfg, "VLLM_BUCKETING_STRATEGY");
	if (s && p->version == BUCKET_VERSION_DOCS) {
		if (ignored_env(p, cfg, "VLLM_BUCKETING_STRATEGY", err, "VLLM_BUCKETING_STRATEGY=%s "
				"is ignored: bucketing.version docs selects the strategy with "
				"VLLM_EXPONENTIAL_BUCKETING", s))
			return -1;
	} else if (s) {
		/* upstream's three values (vllm_gaudi/extension/bucketing/common.py) */
		if (!strcmp(s, "exp"))
			p->strategy = bucket_strategy_find("exponential");
		else if (!strcmp(s, "lin"))
			p->strategy = bucket_strategy_find("linear");
		else if (!strcmp(s, "pad"))
			p->strategy = bucket_strategy_find("padding_aware");
		else
			return bs_errf(err, BS_EXIT_INPUT, NULL, 0, "VLLM_BUCKETING_STRATEGY",
				       "expected exp, lin or pad, got '%s'", s);
		strategy_src = "VLLM_BUCKETING_STRATEGY";
	}
	if ((r = env_bool(cfg, "VLLM_EXPONENTIAL_BUCKETING", &b, err)) < 0)
		return -1;
	if (r) {
		const struct bucket_strategy *t = bucket_strategy_find(b ? "exponential" : "linear");
		if (p->version == BUCKET_VERSION_CURRENT) {
			warn(p, "VLLM_EXPONENTIAL_BUCKETING is deprecated; use "
			     "VLLM_BUCKETING_STRATEGY=exp|lin|pad");
			if (t != p->strategy)
				warn(p, "Overriding bucketing strategy %s with %s",
				     class_name(p->strategy), class_name(t));
		}
		p->strategy = t;
		strategy_src = "VLLM_EXPONENTIAL_BUCKETING";
	}
	if ((s = config_env(cfg, "VLLM_BUCKETING_FROM_FILE"))) {
		if (!*s)
			return bs_errf(err, BS_EXIT_INPUT, NULL, 0, "VLLM_BUCKETING_FROM_FILE",
				       "expected a file name, got ''");
		p->strategy = bucket_strategy_find("file");
		snprintf(p->file, sizeof p->file, "%s", s);
		strategy_src = "VLLM_BUCKETING_FROM_FILE";
	}
	bool unified = false;
	if ((r = env_bool(cfg, "VLLM_UNIFIED_ATTN", &unified, err)) < 0)
		return -1;
	if (unified) {
		/* upstream's check: a no-op assert.  A bucketing.file is reported as a key set but
		 * never read (sim/run.c). */
		if (!strcmp(p->strategy->info.name, "file") &&
		    !strcmp(strategy_src, "VLLM_BUCKETING_FROM_FILE")) {
			if (ignored_env(p, cfg, "VLLM_BUCKETING_FROM_FILE", err, "the bucket file %s "
					"is ignored: unified attention does not support bucketing "
					"from a file", p->file))
				return -1;
		} else if (!strcmp(p->strategy->info.name, "file")) {
			warn(p, "the bucket file %s is ignored: unified attention does not support "
			     "bucketing from a file", p->file);
		}
		p->strategy = bucket_strategy_find("unified");
		strategy_src = "VLLM_UNIFIED_ATTN";
	}
	if (bucket_params_unified(p)) {   /* unified attention turns both on by default */
		p->contiguous_pa = true;
		p->merged_prefill = true;
	}
	if ((r = env_bool(cfg, "VLLM_CONTIGUOUS_PA", &b, err)) < 0)
		return -1;
	if (r)
		p->contiguous_pa = b;
	/* vllm-gaudi HpuPlatform.check_and_update_config (platform.py): "Using Contiguous PA,
	 * disabling prefix caching" (enable_prefix_caching = False whenever VLLM_CONTIGUOUS_PA).
	 * Unified attention's own contiguous reading is not that setting. */
	if (p->contiguous_pa && p->prefix_caching && !bucket_params_unified(p)) {
		const struct cfg_entry *e = config_find(cfg, "server.prefix_caching");
		if (e->origin == CFG_ORIGIN_FILE || e->origin == CFG_ORIGIN_CMDLINE)
			return bs_errf(err, BS_EXIT_INPUT, cfg->file, 0, "server.prefix_caching",
				       "true, but contiguous PA (%s) turns prefix caching off: "
				       "vllm-gaudi's platform check_and_update_config disables it "
				       "whenever VLLM_CONTIGUOUS_PA is on",
				       r ? "VLLM_CONTIGUOUS_PA" : "server.contiguous_pa");
		p->prefix_caching = false;
	}
	if ((r = env_bool(cfg, "VLLM_MERGED_PREFILL", &b, err)) < 0)
		return -1;
	if (r)
		p->merged_prefill = b;
	p->enabled = p->strategy->phases != 0;
	if ((r = env_bool(cfg, "VLLM_ENABLE_BUCKETING", &b, err)) < 0)
		return -1;
	if (r && !b)
		p->enabled = false;

	int64_t mpbs = config_int(cfg, "server.max_num_prefill_seqs"), v;
	if ((r = bucket_env_int(cfg, "VLLM_PROMPT_BS_BUCKET_MAX", &v, err)) < 0)
		return -1;
	if (r) {
		if (v < 1)
			return bs_errf(err, BS_EXIT_INPUT, NULL, 0, "VLLM_PROMPT_BS_BUCKET_MAX",
				       "expected a positive integer, got '%lld'", (long long)v);
		mpbs = v;
	}
	p->max_num_prefill_seqs = (int32_t)(p->merged_prefill ? p->max_num_seqs : mpbs);

	if (p->enabled && !bucket_strategy_gen(p->strategy, p->version))
		return bs_errf(err, BS_EXIT_INPUT, NULL, 0, strategy_src,
			       "strategy %s does not exist in bucketing.version %s (use "
			       "bucketing.version=%s)", p->strategy->info.name,
			       bucket_version_name(p->version),
			       bucket_version_name(p->version == BUCKET_VERSION_DOCS
						   ? BUCKET_VERSION_CURRENT : BUCKET_VERSION_DOCS));
	return check_env(p, cfg, err);
}

int bucketer_new(const struct bucket_params *p, struct bucketer **out, struct bs_err *err)
{
	struct bucketer *b = xcalloc(1, sizeof *b);
	b->p = *p;
	b->decode_maxctx = -1;
	*out = NULL;
	if (p->enabled) {
		struct bgen g;
		if (bucket_generate(p, &g, err)) {
			free(b);
			return -1;
		}
		b->warm[PHASE_PROMPT] = g.prompt;
		b->warm[PHASE_DECODE] = g.decode;
		b->warm[PHASE_UNIFIED] = g.unified;
		snprintf(b->cfgline[PHASE_PROMPT], sizeof b->cfgline[0], "%s", g.prompt_cfg);
		snprintf(b->cfgline[PHASE_DECODE], sizeof b->cfgline[0], "%s", g.decode_cfg);
		snprintf(b->cfgline[PHASE_UNIFIED], sizeof b->cfgline[0], "%s", g.unified_cfg);
		b->cfg_unlogged[PHASE_DECODE] = g.decode_cfg_unlogged;
		b->cfg_unlogged[PHASE_UNIFIED] = g.unified_cfg_unlogged;
	}
	for (size_t i = 0; i < b->warm[PHASE_DECODE].n; i++)
		if (b->warm[PHASE_DECODE].a[i].v[2] > b->decode_maxctx)
			b->decode_maxctx = b->warm[PHASE_DECODE].a[i].v[2];
	*out = b;
	return 0;
}

void bucketer_free(struct bucketer *b)
{
	if (!b)
		return;
	for (int ph = 0; ph < 3; ph++) {
		blist_free(&b->warm[ph]);
		blist_free(&b->cur[ph]);
	}
	free(b);
}

/* The current list of PH: the warm-up list and the fallbacks inserted since. */
static const struct blist *cur_list(const struct bucketer *b, enum phase ph)
{
	return b->own[ph] ? &b->cur[ph] : &b->warm[ph];
}

size_t bucketer_list(const struct bucketer *b, enum phase ph, const struct bshape **out)
{
	const struct blist *l = cur_list(b, ph);
	*out = l->a;
	return l->n;
}

size_t bucketer_warmup_list(const struct bucketer *b, enum phase ph, const struct bshape **out)
{
	*out = b->warm[ph].a;
	return b->warm[ph].n;
}

const char *bucketer_config_line(const struct bucketer *b, enum phase ph)
{
	return b->cfgline[ph];
}

bool bucketer_config_logged(const struct bucketer *b, enum phase ph)
{
	return b->cfgline[ph][0] && !b->cfg_unlogged[ph];
}

size_t bucketer_warmup(const struct bucketer *b, enum phase ph, struct bshape **out)
{
	const struct blist *w = &b->warm[ph];
	*out = NULL;
	if (!b->p.enabled || b->p.skip_warmup || !w->n)
		return 0;
	/* Version current skips prompt buckets whose query exceeds the token budget (head runner,
	 * reference 9); version docs warms every generated bucket. */
	bool skip_q = ph == PHASE_PROMPT && b->p.version == BUCKET_VERSION_CURRENT;
	struct bshape *seq = xmalloc(w->n * sizeof *seq);
	size_t n = 0;
	for (size_t i = w->n; i-- > 0;) {
		if (skip_q && w->a[i].v[1] > b->p.max_num_batched_tokens)
			continue;
		if (n && !bshape_cmp(&seq[n - 1], &w->a[i]))
			continue;   /* the graphed_buckets set (the list is already unique) */
		seq[n++] = w->a[i];
	}
	if (!n) {
		free(seq);
		return 0;
	}
	*out = seq;
	return n;
}

/* Lexicographically smallest bucket >= T in the first NDIM dimensions (reference 7). */
static const struct bshape *find_bucket(const struct blist *l, const struct bshape *t, int ndim)
{
	for (size_t i = blist_bisect_left(l, t); i < l->n; i++) {
		const int32_t *v = l->a[i].v;
		bool ok = true;
		for (int d = 0; d < ndim && ok; d++)
			ok = v[d] >= t->v[d];
		if (ok)
			return &l->a[i];
	}
	return NULL;
}

static int32_t clamp32(int64_t x) { return x > INT32_MAX ? INT32_MAX : (int32_t)x; }

static int64_t pow2_ceil(int64_t x) { return x <= 1 ? x : (int64_t)1 << bucket_ceil_log2(x); }

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

struct bshape bucket_fallback_current(const struct bucket_params *p, int64_t bs, int64_t q,
				      int64_t ctx, int64_t max_ctx)
{
	struct bshape s = {{0, 0, 0, 0}};
	/* vllm_gaudi/extension/bucketing/common.py, HPUBucketingManager.generate_fallback_bucket
	 * (the sliding-window query rounding aside, policies/README.md): the query is capped at
	 * max_num_batched_tokens, so a query above it gets a bucket shorter than itself.  vLLM's
	 * scheduler never forms such a pass; where the simulator does, the kernel does not look it
	 * up (sim/kernel_graph.c, shape_graph_slow). */
	s.v[0] = clamp32(min64(bucket_fb(bs, 2), p->max_num_seqs));
	s.v[1] = clamp32(min64(bucket_fb(q, 32), p->max_num_batched_tokens));
	s.v[2] = clamp32(min64(bucket_fb(ctx, 32), max_ctx));
	return s;
}

struct bshape bucket_fallback_docs(const struct bucket_params *p, enum phase ph, int64_t bs,
				   int64_t q, int64_t ctx)
{
	struct bshape s = {{0, 0, 0, 0}};
	s.v[0] = clamp32(pow2_ceil(bs));
	s.v[1] = ph == PHASE_PROMPT ? clamp32(bucket_ceil_div(q, p->block_size) * p->block_size) : 1;
	s.v[2] = clamp32(bucket_ceil_div(ctx, 2) * 2);
	return s;
}

bool bucketer_prompt_warm(const struct bucketer *b, int64_t n, int64_t longest, int64_t total)
{
	const struct bucket_params *p = &b->p;
	int64_t bs = p->merged_prefill ? 1 : n, q = p->merged_prefill ? total : longest;
	if (!p->enabled || !(p->strategy->phases & (1u << PHASE_PROMPT)) || bs < 1 || q < 1 ||
	    q > INT32_MAX)
		return false;
	if (bs > p->max_num_prefill_seqs)
		return false; /* _bucketize_2d_prompt raises BucketingFailedException */
	struct bshape t = {{(int32_t)bs, (int32_t)q, 0, 0}};
	const struct bshape *f = find_bucket(&b->warm[PHASE_PROMPT], &t, 3);
	/* _can_merge_prefill_contents (merged prefill: bucket bs 1) */
	int64_t fbs = !f ? 0 : p->merged_prefill ? 1 : f->v[0];
	return f && fbs <= p->max_num_prefill_seqs && fbs * f->v[1] <= p->max_num_batched_tokens;
}

/* Inserts S into the current list of PH unless present (true when inserted); the phase's first
 * insertion copies the warm-up list into cur[ph]. */
static bool cur_insert(struct bucketer *b, enum phase ph, const struct bshape *s)
{
	if (!b->own[ph]) {
		const struct blist *w = &b->warm[ph];
		size_t i = blist_bisect_left(w, s);
		if (i < w->n && !bshape_cmp(&w->a[i], s))
			return false;
		struct blist *c = &b->cur[ph];
		blist_reserve(c, w->n + 1);
		if (w->n)
			memcpy(c->a, w->a, w->n * sizeof *c->a);
		c->n = w->n;
		b->own[ph] = true;
	}
	return blist_insert_sorted(&b->cur[ph], s);
}

bool bucketer_lookup(struct bucketer *b, enum phase ph, const struct bshape *real,
		     struct bshape *bucket)
{
	const struct bucket_params *p = &b->p;
	*bucket = *real;
	if (!p->enabled || !(p->strategy->phases & (1u << ph)))
		return false;
	const struct blist *l = cur_list(b, ph);
	struct bshape t = *real;
	if (ph == PHASE_UNIFIED) {
		const struct bshape *f = find_bucket(l, &t, 3);
		if (f)
			*bucket = *f;
		return false;   /* a miss runs unpadded: no fallback, nothing appended */
	}
	t.v[3] = 0;
	bool cur = p->version == BUCKET_VERSION_CURRENT;
	if (ph == PHASE_DECODE && cur && b->decode_maxctx > 0 && t.v[2] > b->decode_maxctx)
		t.v[2] = (int32_t)b->decode_maxctx;
	const struct bshape *f = find_bucket(l, &t, 3);
	if (f) {
		*bucket = *f;
		return false;
	}
	/* ctx cap (upstream HPUBucketingManager.generate_fallback_bucket): a prompt's at
	 * ceil((mml-1)/B) only, a decode's at the largest prepared decode ctx
	 * (_fallback_max_ctx, when > 0). */
	int64_t cmax = ph == PHASE_PROMPT ? bucket_ceil_div(p->max_model_len - 1, p->block_size)
		     : b->decode_maxctx > 0 ? b->decode_maxctx : INT32_MAX;
	struct bshape fb = cur ? bucket_fallback_current(p, t.v[0], t.v[1], t.v[2], cmax)
			       : bucket_fallback_docs(p, ph, t.v[0], t.v[1], t.v[2]);
	*bucket = fb;
	return cur_insert(b, ph, &fb);
}
