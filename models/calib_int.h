/*
 * calib_int: reading the measurements CSV (calib_csv.c) and fitting the cost model (calib.c),
 * shared by `bucketsim calibrate` and the unit tests.
 *
 * Lifetime: calib_read_csv() returns an owned row array (free with free()); calib_fit() fills a
 * caller-owned struct calib_result whose arrays are freed by calib_result_release().
 */
#ifndef BS_CALIB_INT_H
#define BS_CALIB_INT_H

#include "models/cost_int.h"

/* The metrics the pass-time fit reads (every other metric is kept, not fitted). */
enum calib_kind {
	CALIB_OTHER,            /* not fitted */
	CALIB_THROUGHPUT,       /* throughput_generated_tokens: a static batch's rate */
	CALIB_PREFILL,          /* prefill_forward_latency: one prefill pass */
	CALIB_LATENCY,          /* latency_low_latency_table: checked only */
	CALIB_DECODE,           /* decode_forward_latency: one decode pass of batch_size
				 * sequences, each with input_len tokens of context */
	CALIB_LINEAR,           /* linear_forward_latency: a pass of batch_size x input_len
				 * tokens without attention and LM head (linear layers, norms,
				 * activation, all-reduces) */
};
/* The fitted metrics, by kind (CALIB_THROUGHPUT..): name and unit; NULL-terminated. */
struct calib_metric {
	const char *name, *unit;
	enum calib_kind kind;
};
extern const struct calib_metric calib_metrics[];
/* The supported hardware names, NULL-terminated. */
extern const char *const calib_hw_names[];

struct calib_row {
	long record;            /* CSV line on which the row begins (blank lines counted) */
	char hw[16];            /* "gaudi2", "gaudi3", "h100", "a100" or "" */
	int tp;                 /* cards; 0 when not a number */
	char model[32];         /* profile name or "" when not one of ours */
	char model_raw[96];
	bool fp8;
	double in, out, bs;     /* NAN when not a number */
	char metric[64];
	enum calib_kind kind;   /* of metric */
	double value;           /* NAN when not a number */
	char software[16];      /* "1.20", ... or "" when the source does not say */
	bool doubtful;          /* the source flags the row (caution, approximate) */
	bool short_prompt;      /* input "short default prompt": run_generation.py's default
				 * prompt, taken as CALIB_SHORT_PROMPT_TOKENS tokens */
	bool no_reuse_cache;    /* run with reuse_cache=False (a different KV-cache path) */
	bool held_out;          /* "held out" in the notes: kept out of the fit to check it */
	char source[400];
};

/* Tokens per KV block of the decode_forward_latency rows (vLLM's GPU default, and the block
 * size of the Vidur attention profile they are composed from). */
#define CALIB_DECODE_BLOCK 16

/* Tokens of run_generation.py's default prompt ("DeepSpeed is a machine learning framework"). */
#define CALIB_SHORT_PROMPT_TOKENS 8

/* The measurements file read whole (read_file_lim: at most BS_READ_MAX bytes, BS_RECORD_MAX a
 * line, up to a NUL byte, which calib_read_csv_text reports). */
char *calib_read_file(const char *path, size_t *len, struct bs_err *err);
int calib_read_csv(const char *path, struct calib_row **rows, size_t *n, struct bs_err *err);
/* The same from LEN bytes of BUF (PATH names it in errors). */
int calib_read_csv_text(const char *path, const char *buf, size_t len, struct calib_row **rows,
			size_t *n, struct bs_err *err);

enum calib_use { USE_NONE, USE_FIT, USE_CHECK };

struct calib_eval {
	size_t row;             /* index into the row array */
	enum calib_use use;
	char family[48];
	double measured, predicted, err;   /* err = predicted / measured - 1 */
	char why[64];           /* why a row is only checked */
	bool scaled;            /* a per-pass row of another software version: fitted with the
				 * version scale (calib_result.prefill_scale) */
};

struct family_stat {
	char name[48];
	enum calib_use use;
	int n;
	double mape, maxerr;    /* fractions */
};

struct calib_result {
	char hw[32];
	struct perf_params p;
	double se[PP_COUNT];    /* standard errors, physical units */
	/* Version scale of the per-pass prefill rows of another software version (time ratio
	 * measured / model), a nuisance parameter of the fit, not part of the profile; 1 and
	 * unused when no such row is fitted. */
	double prefill_scale, prefill_scale_se;
	int n_scaled;
	struct compile_params c;
	double c0_se, c1_se;
	bool compile_fitted;    /* false: too few warm-up rows, the profile's constants kept */
	struct calib_eval *ev;
	size_t nev;
	struct family_stat fam[24];
	int nfam;
	double single_mape, tp_mape;    /* fitted throughput rows */
	int n_single, n_tp;
	/* compile check: warm-up cases, predicted / measured */
	struct {
		char name[64];
		double measured, predicted;
		bool fitted;
	} comp[12];
	int ncomp;
	int n_fit;              /* residual rows of the pass-time fit (without priors) */
	double chi2;
	int iterations;
	int status;
};

struct calib_opts {
	const char *data;       /* the rows' file, named in errors (NULL: none) */
	const char *hw;
	const char *software;   /* NULL = every version */
	bool use_prefill_rows;  /* fit the per-pass prefill latency rows (any version) */
	struct perf_params start;  /* initial guess and prior centre */
	bool no_priors;         /* drop the prior residuals (tests on noise-free synthetic rows) */
};

/* Fits hardware OPTS->hw on ROWS.  Returns 0, or -1 with ERR (no usable rows, GSL failure). */
int calib_fit(const struct calib_row *rows, size_t n, const struct calib_opts *opts,
	      struct calib_result *res, struct bs_err *err);
void calib_result_release(struct calib_result *res);
/* The error of the evaluated static-batch throughput rows grouped by software version (the
 * source's version, "unknown" when it gives none), in order of first appearance: up to MAX
 * groups written to OUT, their count returned; use is USE_FIT when the group holds a fitted
 * row. */
int calib_version_stats(const struct calib_row *rows, const struct calib_result *res,
			struct family_stat *out, int max);
/* The fit report (per row, per family, per software version, parameters) as text. */
void calib_print_report(FILE *out, const struct calib_row *rows, size_t n,
			const struct calib_result *res);
/* The prior centre used by calibrate (documented in README.md, "The cost model"). */
void calib_default_start(struct perf_params *p);
/* Map a CSV hardware / model label to a profile name ("" if none). */
void calib_norm_hw(const char *raw, char *out, size_t n);
void calib_norm_model(const char *raw, char *out, size_t n);

#endif
