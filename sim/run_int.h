/*
 * run: what `run`, `validate` and `sweep` share: building one simulation's inputs from a
 * configuration (cost model and derived keys, bucketing, kernel parameters, workload, bucket
 * lists, BucketServe configuration) and the "metrics" object of its summary.
 *
 * struct run_ctx owns everything it holds; run_teardown() releases it (also after a failed
 * run_setup()).
 */
#ifndef BS_RUN_INT_H
#define BS_RUN_INT_H

#include <cjson/cJSON.h>

#include "models/cost.h"
#include "policies/bucketing.h"
#include "policies/bucketserve.h"
#include "sim/cli.h"
#include "sim/kernel.h"
#include "workloads/workload.h"

struct run_ctx {
	struct cli_config cc;
	struct cost_model *cm;
	struct bucket_params bp;
	struct sim_params sp;
	struct workload w;
	struct bucketer *b;
	struct bucketserve_cfg bsc;
	bool have_bsc;
	bool have_w;   /* run_setup loaded the workload */
};

/* Resolves the configuration in X->cc and builds every input; the workload (from TRACE, or
 * generated when TRACE is NULL) only when LOAD_WORKLOAD. */
int run_setup(struct run_ctx *x, const char *trace, bool load_workload, struct bs_err *err);
/* Records server.contiguous_pa as it runs (after sim_params_from_config into x->sp). */
void run_report_contiguous_pa(struct run_ctx *x);
void run_teardown(struct run_ctx *x);
/* After run_setup(): one warning on stderr per key the user set (config file or command line)
 * that the chosen policies and topology never read, naming it and why; with sim.strict
 * (--strict) the first such key is an error instead (-1, ERR filled).  The same for
 * VLLM_DEFRAG_THRESHOLD.  The rules about the arrival process apply when the workload was
 * loaded. */
int run_check_unread(const struct run_ctx *x, struct bs_err *err);
/* The same from the resolved parts: BP and P as bucket_params_resolve() and
 * sim_params_from_config() made them, W the workload or NULL (not built). */
int run_check_unread_params(const struct config *c, const struct bucket_params *bp,
			    const struct sim_params *p, const struct workload *w,
			    struct bs_err *err);
/* The workload's part of run_check_unread(): the random dataset's keys, the task and priority
 * generators' keys, and (W not NULL: the workload built) workload.rate and workload.cv by the
 * arrival process.  P NULL: no simulation reads the tasks and priorities (trace synth writes
 * them), so only the generators' rules apply. */
int run_check_unread_workload(const struct config *c, const struct workload *w,
			      const struct sim_params *p, struct bs_err *err);
/* The trace a run replays: GIVEN, else the bundled Alpaca trace, else NULL when the workload
 * is entirely generated (a mix, or lengths from a distribution). */
const char *run_default_trace(const struct config *cfg, const char *given);
/* The FNV-1a 64 hash of the file PATH's bytes as 16 hex digits in BUF; -1 when it cannot be
 * read. */
int run_file_hash(const char *path, char buf[17]);
/* The input files of a run, each made absolute, with its hash (run_file_hash): every word of
 * ARGV (or the part after a '=') that names a regular file (the trace, -c files, a bucket file
 * or a profile given by --set) and every file the configuration names (config_files: a mix's
 * traces, --env files).  Recorded in summary.json ("meta.inputs") when the run ends, so that
 * a sweep can tell a file that changed while its points ran. */
cJSON *run_inputs_json(const struct run_ctx *x, int argc, char **argv);
/* The summary's "metrics": the kernel's metrics plus BucketServe and topology metrics. */
cJSON *run_metrics_json(const struct run_ctx *x, struct sim *s);

#endif
