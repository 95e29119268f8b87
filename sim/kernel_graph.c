/*
 * kernel_graph: the compiled-graph set: padded shapes, their cost, warm-up and runtime
 * compiles per instance.
 */
#include "sim/kernel_int.h"

#include <stdlib.h>
#include <string.h>

#include "models/cost.h"

/* ---- graphs: padded shapes, their cost and their compile state ---------------------------- */

/* The extra host time of a pass run without its HPU graph in lazy mode (vllm-gaudi
 * HPUModelRunner._use_graphs: a prompt pass above max_cudagraph_capture_size tokens, or any pass
 * with enforce_eager: execution modes hpu_graphs and hpu_eager), charged with host time on
 * (sim/README.md, "Engine step"). */
static int64_t eager_ns(const struct sim *s, int phase, const int32_t v[4])
{
	if (!s->p.host_time || !s->costs.eager)
		return 0;
	/* torch.compile (hpu_compile): no pass uses an HPU graph, and none accumulates its ops
	 * eagerly either (_execute_model_generic: use_graphs = False outside lazy mode). */
	if (s->p.mode && !s->p.mode->hpu_graphs && !s->p.enforce_eager)
		return 0;
	bool graphs = phase == PHASE_PROMPT
			      ? cost_prompt_uses_graphs(v[0], v[1], (int64_t)v[0] * v[2],
							s->p.block_size, s->p.max_capture,
							s->p.enforce_eager)
			      : !s->p.enforce_eager;
	if (!graphs)
		return s->costs.eager(s->costs.ctx);
	/* a pass replaying its HPU graph: the graph launch (hpu_graphs) */
	return s->p.mode && s->p.mode->hpu_graphs && s->costs.launch
		       ? s->costs.launch(s->costs.ctx, FWD_HPU_GRAPH) : 0;
}

/* A GPU forward (execution mode cuda_graphs) at padded shape V: a FULL graph for a
 * decode-only forward within the capture sizes, a PIECEWISE one for a mixed forward within
 * them, eager above the largest; it takes max(device, launch) (models/README.md, "GPU
 * forward"). */
static int64_t forward_cost(const struct sim *s, const int32_t v[4])
{
	int64_t dev = s->costs.forward(s->costs.ctx, v);
	if (!s->p.host_time || !s->costs.launch)
		return dev;
	int kind = v[0] > s->p.capture_max ? FWD_EAGER : v[1] || v[3] ? FWD_PIECEWISE : FWD_FULL;
	int64_t launch = s->costs.launch(s->costs.ctx, kind);
	return launch > dev ? launch : dev;
}

static int64_t shape_cost(struct sim *s, int phase, const int32_t v[4])
{
	if (s->p.one_forward)
		return forward_cost(s, v);
	if (phase == PHASE_PROMPT)
		return s->costs.prefill(s->costs.ctx, v[0], v[1], v[2]) + eager_ns(s, phase, v);
	if (phase == PHASE_DECODE) {
		/* Without contiguous PA the decode gathers its blocks by index. */
		if (!s->p.contiguous_pa && s->costs.decode_gather)
			return s->costs.decode_gather(s->costs.ctx, v[0], v[2]) + eager_ns(s, phase, v);
		return s->costs.decode(s->costs.ctx, v[0], v[2]) + eager_ns(s, phase, v);
	}
	return s->costs.unified(s->costs.ctx, v[0], v[1], v[2], v[3] != 0);
}

static int32_t graph_get(struct sim *s, int phase, const int32_t v[4])
{
	struct shape_key k = {phase, {v[0], v[1], v[2], v[3]}};
	int32_t gi = shapemap_get(&s->graphs_by_shape, &k);
	if (gi >= 0)
		return gi;
	if (s->n_graphs == s->cap_graphs) {
		s->cap_graphs = s->cap_graphs ? 2 * s->cap_graphs : 64;
		s->graphs = xrealloc(s->graphs, s->cap_graphs * sizeof *s->graphs);
	}
	gi = (int32_t)s->n_graphs++;
	struct graph *g = &s->graphs[gi];
	memset(g, 0, sizeof *g);
	g->phase = phase;
	memcpy(g->v, v, sizeof g->v);
	g->cost_ns = shape_cost(s, phase, v);
	if (g->cost_ns < 1)
		BUG("cost of a pass must be positive");
	shapemap_put(&s->graphs_by_shape, &k, gi);
	return gi;
}

/* Compile state of graph GI on IN's serving instance (grown on demand). */
static uint8_t *compiled_flag(struct lane *in, int32_t gi)
{
	struct instance *g = in->owner;
	if ((size_t)gi >= g->compiled_cap) {
		size_t cap = g->compiled_cap ? g->compiled_cap : 64;
		while (cap <= (size_t)gi)
			cap *= 2;
		g->compiled = xrealloc(g->compiled, cap);
		memset(g->compiled + g->compiled_cap, 0, cap - g->compiled_cap);
		g->compiled_cap = cap;
	}
	return &g->compiled[gi];
}

static void warm_phase(struct sim *s, struct lane *in, enum phase ph)
{
	struct bshape *w;
	size_t n = bucketer_warmup(s->bucketer, ph, &w);
	for (size_t i = 0; i < n; i++) {
		int32_t gi = graph_get(s, ph, w[i].v);
		uint8_t *c = compiled_flag(in, gi);
		if (*c)
			continue;
		*c = 1;
		struct graph *g = &s->graphs[gi];
		g->warm = true;
		g->compile_ns = s->costs.compile(s->costs.ctx, ph, g->v, false);
		s->m.warmup_ns += g->compile_ns;
		s->m.compiles_warmup++;
	}
	free(w);
}

void sim_warmup(struct sim *s)
{
	if (s->p.mode && s->p.mode->captures) { /* CUDA graphs: captured at start-up */
		s->m.captures = (int64_t)s->p.captures * s->n_instances;
		if (s->costs.capture)
			s->m.capture_ns = s->costs.capture(s->costs.ctx, s->p.captures) *
					  s->n_instances;
	}
	if (!s->bucketer || s->p.skip_warmup)
		return;
	for (int g = 0; g < s->n_instances; g++) {
		struct lane *in = &s->lanes[s->instances[g].first];
		if (s->p.unified) {
			warm_phase(s, in, PHASE_UNIFIED);
			continue;
		}
		if (in->role != ROLE_DECODE)
			warm_phase(s, in, PHASE_PROMPT);
		if (in->role != ROLE_PREFILL)
			warm_phase(s, in, PHASE_DECODE);
	}
}

/* shape_graph() past the fast path's cache: the map of real shapes seen, else the bucketer. */
static __attribute__((noinline)) int32_t shape_graph_slow(struct sim *s, const struct shape_key *kk,
							 bool make, int32_t padded[4])
{
	struct shape_key k = *kk;
	int phase = k.phase;
	const int32_t *real = k.v;
	int32_t gi = shapemap_get(&s->lookup, &k);
	if (gi >= 0 && padded)
		memcpy(padded, s->graphs[gi].v, sizeof s->graphs[gi].v);
	if (gi < 0) {
		struct bshape bin = {{real[0], real[1], real[2], real[3]}}, out = bin;
		bool created = false;
		/* A prompt pass whose query (longest chunk; merged: all chunks) exceeds
		 * max_num_batched_tokens is one vLLM's scheduler never forms (only a batch
		 * controller without a token budget does: padded_pass, off Gaudi's grid), and the
		 * server's look-up cannot hold it (generate_fallback_bucket caps the query at
		 * max_num_batched_tokens): it is not looked up, adds no bucket, and runs at its own
		 * shape, a graph compiled at run time (policies/README.md, "Look-up"). */
		bool beyond = phase == PHASE_PROMPT && real[1] > s->p.max_num_batched_tokens;
		if (s->bucketer && !beyond)
			created = bucketer_lookup(s->bucketer, (enum phase)phase, &bin, &out);
		/* Unified: the causal path runs whenever the pass holds a prompt, whatever the
		 * flag of the bucket found (create_unified_batch: contains_prompts). */
		if (phase == PHASE_UNIFIED)
			out.v[3] = real[3];
		/* cuda_graphs: the token count up to its capture size, none above the largest
		 * (CudagraphDispatcher; policies/mode.c). */
		if (s->p.one_forward) {
			int64_t pad = cuda_graph_pad(real[0], s->p.capture_bound,
						     s->p.max_num_batched_tokens);
			if (pad && s->p.capture_max)
				out.v[0] = (int32_t)pad;
		}
		if (created) {
			/* The bucket list changed: cached look-ups may no longer be the server's. */
			shapemap_clear(&s->lookup);
			memset(s->shape_cache, 0, sizeof s->shape_cache);
			s->m.fallback_buckets++;
		}
		bool longer = phase == PHASE_DECODE && out.v[2] < real[2];
		if (longer)
			out.v[2] = real[2];
		/* Merged prefill: one sequence; its context blocks are rounded up to 32, not
		 * bucketed (vllm-gaudi _bucketize_merged_prompt). */
		if (phase == PHASE_PROMPT && s->p.merged_prefill) {
			out.v[0] = 1;
			out.v[2] = (real[2] + 31) / 32 * 32;
		}
		if (padded)
			memcpy(padded, out.v, sizeof out.v);
		/* A shape only looked at (a merge test) gets no graph unless the look-up added
		 * its bucket. */
		if (!make && !created)
			return -1;
		gi = graph_get(s, phase, out.v);
		if (created && !longer)
			s->graphs[gi].fallback = true;
		shapemap_put(&s->lookup, &k, gi);
	}
	if (!s->p.step_by_step)
		*shape_slot(s, &k) = (struct shape_slot){k, gi + 1};
	return gi;
}

/* Pads a real shape to its bucket.  A decode whose blocks exceed its bucket's (`current`
 * clamps the look-up to the largest decode bucket) still reads every block: it runs at its
 * real block count, a graph of its own for each new length, compiled at run time (the
 * compile storm vllm-gaudi removed in v0.19).  Returns the graph; *compile_ns is the runtime compile
 * charged now on IN (0 when the graph is warm there). */
static inline int32_t shape_graph_(struct sim *s, int phase, const int32_t real[4], bool make,
				   int32_t padded[4])
{
	struct shape_key k = {phase, {real[0], real[1], real[2], real[3]}};
	if (!s->p.step_by_step) { /* the fast path: a recent look-up */
		const struct shape_slot *c = shape_slot(s, &k);
		if (c->gi1 && same_shape(&c->k, &k)) {
			if (padded)
				memcpy(padded, s->graphs[c->gi1 - 1].v, sizeof s->graphs[0].v);
			return c->gi1 - 1;
		}
	}
	return shape_graph_slow(s, &k, make, padded);
}

int32_t shape_graph(struct sim *s, int phase, const int32_t real[4], bool make, int32_t padded[4])
{
	return shape_graph_(s, phase, real, make, padded);
}

int32_t pad_shape_(struct sim *s, struct lane *in, int phase, const int32_t real[4],
		   int64_t *compile_ns)
{
	int32_t gi = shape_graph_(s, phase, real, true, NULL);
	struct instance *grp = in->owner;
	uint8_t *c = (size_t)gi < grp->compiled_cap ? &grp->compiled[gi] : compiled_flag(in, gi);
	*compile_ns = 0;
	if (*c)
		return gi;
	*c = 1;
	if (s->p.ideal || (s->p.mode && !s->p.mode->compiles))
		return gi; /* the reference compiles nothing, nor a mode without compiles */
	struct graph *g = &s->graphs[gi];
	g->runtime = true;
	g->compile_ns = s->costs.compile(s->costs.ctx, phase, g->v, true);
	*compile_ns = g->compile_ns;
	s->m.compiles_runtime++;
	s->m.runtime_compile_ns += g->compile_ns;
	return gi;
}
