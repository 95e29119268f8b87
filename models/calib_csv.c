/*
 * calib_csv: reads the measurements CSV of `bucketsim calibrate` (libcsv, strict) into
 * calib_rows: 13 named columns, a header row, then one row per measurement; the numeric fields
 * of the metrics the fit uses must be proper numbers (models/calib_int.h, models/README.md).
 */
#include <csv.h>
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/calib_int.h"

#define NCOL 13
#define CALIB_MAX_CARDS 65536
/* The largest static batch a row may state: far above any published one (the bundled data's
 * largest is 4000), far below what would be a typo or a token count. */
#define CALIB_MAX_BATCH 65536
#define NMEMO 8

static const char *const columns[NCOL] = {
	"source", "hardware", "cards", "model", "precision", "framework", "input_len",
	"output_len", "batch_size", "metric", "value", "unit", "notes",
};

struct reader {
	const char *path;
	char *field[NCOL];
	int nf;
	long record;       /* line on which the record being read began */
	long nrec;         /* records completed (the header is the first) */
	struct csv_lines ln;
	struct calib_row *rows;
	size_t n, cap;
	/* The last NMEMO distinct model names, their calib_norm_model() and the model's context
	 * (max_context, its max_position_embeddings; 0 when not a model of ours), replaced in
	 * turn: a profile lookup parses the embedded models.json. */
	struct { char raw[96], model[32]; int max_context; } memo[NMEMO];
	size_t nmemo;
	struct bs_err *err;
	bool failed;
};

static void lower(char *dst, const char *src, size_t n)
{
	size_t i = 0;
	for (; src[i] && i + 1 < n; i++)
		dst[i] = (char)tolower((unsigned char)src[i]);
	dst[i] = 0;
}

const char *const calib_hw_names[] = {"gaudi2", "gaudi3", "h100", "a100", NULL};

const struct calib_metric calib_metrics[] = {
	{"throughput_generated_tokens", "tokens/s", CALIB_THROUGHPUT},
	{"prefill_forward_latency", "ms", CALIB_PREFILL},
	{"latency_low_latency_table", "ms", CALIB_LATENCY},
	{"decode_forward_latency", "ms", CALIB_DECODE},
	{"linear_forward_latency", "ms", CALIB_LINEAR},
	{NULL, NULL, CALIB_OTHER},
};

void calib_norm_hw(const char *raw, char *out, size_t n)
{
	/* Lower case, without spaces and punctuation: "Gaudi 2", "gaudi-2" and "Gaudi2 (HL-225D)"
	 * are gaudi2. */
	char l[64];
	size_t k = 0;
	for (const char *p = raw; *p && k + 1 < sizeof l; p++)
		if (isalnum((unsigned char)*p))
			l[k++] = (char)tolower((unsigned char)*p);
	l[k] = 0;
	out[0] = 0;
	for (int i = 0; calib_hw_names[i]; i++)
		if (!strncmp(l, calib_hw_names[i], strlen(calib_hw_names[i])))
			snprintf(out, n, "%s", calib_hw_names[i]);
}

/* calib_norm_model, and the model's max_context in *CTX (0 when it is not one of ours). */
static void norm_model_ctx(const char *raw, char *out, size_t n, int *ctx)
{
	char l[96];
	lower(l, raw, sizeof l);
	char *s = l;
	char *slash = strrchr(s, '/'); /* a Hugging Face id: meta-llama/Llama-3.1-8B-Instruct */
	if (slash)
		s = slash + 1;
	if (!strncmp(s, "meta-", 5))
		s += 5;
	char *cut = strstr(s, "-instruct");
	if (cut)
		*cut = 0;
	struct model_arch m;
	struct bs_err e = {0};
	out[0] = 0;
	*ctx = 0;
	if (profile_load_model(s, &m, &e) == 0) {
		snprintf(out, n, "%s", s);
		*ctx = m.max_context;
	}
}

void calib_norm_model(const char *raw, char *out, size_t n)
{
	int ctx;
	norm_model_ctx(raw, out, n, &ctx);
}

static void software_of(const char *src, const char *notes, char *out, size_t n)
{
	const char *p;
	out[0] = 0;
	if ((p = strstr(src, "Gaudi_1-")) && isdigit((unsigned char)p[8]) &&
	    isdigit((unsigned char)p[9])) {
		snprintf(out, n, "1.%c%c", p[8], p[9]);
		return;
	}
	const char *texts[2] = {src, notes};
	for (int i = 0; i < 2; i++)
		if ((p = strstr(texts[i], "SynapseAI ")) && isdigit((unsigned char)p[10]) &&
		    p[11] == '.' && isdigit((unsigned char)p[12]) && isdigit((unsigned char)p[13])) {
			snprintf(out, n, "%c.%c%c", p[10], p[12], p[13]);
			return;
		}
}

static double num_or_nan(const char *s)
{
	double v;
	char why[96];
	if (parse_f64(s, -1e300, 1e300, &v, why, sizeof why))
		return NAN;
	return v;
}

/* METRIC's entry of calib_metrics[], or NULL (kept, not fitted). */
static const struct calib_metric *fitted_metric(const char *metric)
{
	for (const struct calib_metric *m = calib_metrics; m->name; m++)
		if (!strcmp(metric, m->name))
			return m;
	return NULL;
}

/* Precision RAW as the fit reads it: 0 bf16, 1 fp8, -1 neither. */
static int precision_of(const char *raw)
{
	char l[32];
	lower(l, raw, sizeof l);
	if (!strcmp(l, "bf16") || !strcmp(l, "bfloat16"))
		return 0;
	if (!strncmp(l, "fp8", 3) || !strncmp(l, "float8", 6))
		return 1;
	return -1;
}

/* No field holds a NUL byte: csv_parse_lines stops before one (calib_read_csv_text). */
static void on_field(void *s, size_t len, void *data)
{
	struct reader *r = data;
	if (r->nf < NCOL) {
		char *f = xmalloc(len + 1);
		memcpy(f, s, len);
		f[len] = 0;
		r->field[r->nf] = f;
	}
	r->nf++;
}

static void clear_fields(struct reader *r)
{
	for (int i = 0; i < NCOL && i < r->nf; i++) {
		free(r->field[i]);
		r->field[i] = NULL;
	}
	r->nf = 0;
}

/* W's model from its model_raw (as calib_norm_model(), which sees no more of the field);
 * returns the model's max_context (0: not a model of ours). */
static int norm_model(struct reader *r, struct calib_row *w)
{
	size_t k = 0, have = r->nmemo < NMEMO ? r->nmemo : NMEMO;
	while (k < have && strcmp(r->memo[k].raw, w->model_raw))
		k++;
	if (k == have) {
		k = r->nmemo++ % NMEMO;
		snprintf(r->memo[k].raw, sizeof r->memo[k].raw, "%s", w->model_raw);
		norm_model_ctx(w->model_raw, r->memo[k].model, sizeof r->memo[k].model,
			       &r->memo[k].max_context);
	}
	snprintf(w->model, sizeof w->model, "%s", r->memo[k].model);
	return r->memo[k].max_context;
}

/* The shape of a throughput or prefill row W whose numeric fields are non-negative integers
 * (or text): a batch of 1 to CALIB_MAX_BATCH sequences of at least one prompt token (and one
 * generated token, for a throughput), within MAX_CONTEXT, the model's context (0: a model not
 * in models.json, not checked): a prefill's prompt, a throughput's prompt and output.  0 or -1
 * after an error naming the row and the field. */
static int shape_error(struct reader *r, const struct calib_row *w, int max_context)
{
	const char *const *f = (const char *const *)r->field;
	bool thr = w->kind == CALIB_THROUGHPUT;
	int k = -1;
	if (w->in == 0)
		k = 6;
	else if (thr && w->out == 0)
		k = 7;
	else if (w->bs == 0)
		k = 8;
	if (k >= 0) {
		r->failed = true;
		return bs_errf(r->err, BS_EXIT_INPUT, r->path, r->record, columns[k],
			       "expected a positive integer for metric '%s', got '%s' (%s)",
			       w->metric, f[k], k == 6 ? "a prompt of no token" :
			       k == 7 ? "a throughput of no generated token" : "a batch of no sequence");
	}
	if (w->bs > CALIB_MAX_BATCH) {
		r->failed = true;
		return bs_errf(r->err, BS_EXIT_INPUT, r->path, r->record, "batch_size",
			       "expected a batch of at most %d sequences, got '%s'", CALIB_MAX_BATCH,
			       f[8]);
	}
	double in = isnan(w->in) ? 0 : w->in, out = thr && !isnan(w->out) ? w->out : 0;
	if (max_context > 0 && in + out > max_context) {
		r->failed = true;
		bool in_alone = in > max_context;
		char len[64];
		if (in_alone)
			snprintf(len, sizeof len, "input_len %s", f[6]);
		else
			snprintf(len, sizeof len, "input_len + output_len = %.0f", in + out);
		return bs_errf(r->err, BS_EXIT_INPUT, r->path, r->record,
			       in_alone ? "input_len" : "output_len",
			       "%s is beyond %s's context of %d tokens (max_context in "
			       "models.json)", len, w->model, max_context);
	}
	return 0;
}

static void on_record(int c, void *data)
{
	(void)c;
	struct reader *r = data;
	r->record = r->ln.rec_line;
	r->nrec++;
	if (r->failed) {
		clear_fields(r);
		return;
	}
	if (r->nf != NCOL) {
		bs_errf(r->err, BS_EXIT_INPUT, r->path, r->record, NULL,
			"expected %d fields, got %d", NCOL, r->nf);
		r->failed = true;
		clear_fields(r);
		return;
	}
	if (r->nrec == 1) {
		for (int i = 0; i < NCOL; i++)
			if (strcmp(r->field[i], columns[i])) {
				bs_errf(r->err, BS_EXIT_INPUT, r->path, r->record, columns[i],
					"header: expected column '%s', got '%s'", columns[i], r->field[i]);
				r->failed = true;
				break;
			}
		clear_fields(r);
		return;
	}
	if (r->n == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 16;
		r->rows = xrealloc(r->rows, r->cap * sizeof *r->rows);
	}
	struct calib_row *w = &r->rows[r->n];
	memset(w, 0, sizeof *w);
	w->record = r->record;
	char **f = r->field;
	calib_norm_hw(f[1], w->hw, sizeof w->hw);
	snprintf(w->model_raw, sizeof w->model_raw, "%s", f[3]);
	int max_context = norm_model(r, w);
	w->fp8 = precision_of(f[4]) == 1;
	snprintf(w->metric, sizeof w->metric, "%s", f[9]);
	const struct calib_metric *fm = fitted_metric(w->metric);
	w->kind = fm ? fm->kind : CALIB_OTHER;
	snprintf(w->source, sizeof w->source, "%s", f[0]);
	software_of(f[0], f[12], w->software, sizeof w->software);
	char notes[512];
	lower(notes, f[12], sizeof notes);
	w->doubtful = strstr(notes, "caution") || strstr(notes, "approximate") ||
		      strstr(notes, "doubt");
	w->no_reuse_cache = strstr(notes, "reuse_cache=false") != NULL;
	w->held_out = strstr(notes, "held out") != NULL;
	/* Range first: casting a double beyond int is undefined.  0 = not a card count. */
	double cards = num_or_nan(f[2]);
	w->tp = cards >= 1 && cards <= CALIB_MAX_CARDS ? (int)cards : 0;
	w->in = num_or_nan(f[6]);
	w->out = num_or_nan(f[7]);
	w->bs = num_or_nan(f[8]);
	w->value = num_or_nan(f[10]);
	if (!strcmp(f[6], "short default prompt")) {
		w->short_prompt = true;
		w->in = CALIB_SHORT_PROMPT_TOKENS;
	}
	/* The shape fields of the fitted static-batch and prefill rows: a malformed one is an
	 * input error. */
	if (w->kind == CALIB_THROUGHPUT || w->kind == CALIB_PREFILL || w->kind == CALIB_DECODE ||
	    w->kind == CALIB_LINEAR) {
		const int need[] = {2, 6, 7, 8, 10};
		for (size_t i = 0; i < sizeof need / sizeof need[0]; i++) {
			int k = need[i];
			double v = num_or_nan(f[k]);
			/* Shapes written as text ("short default prompt") mark rows that are not
			 * static-batch shapes: kept, never fitted.  Anything numeric-looking must
			 * be a proper count; value and cards must be numbers. */
			bool texty = isnan(v) && f[k][0] && !isdigit((unsigned char)f[k][0]) &&
				     f[k][0] != '-' && f[k][0] != '+' && f[k][0] != '.';
			if (texty && k >= 6 && k <= 8)
				continue;
			if (isnan(v) || v < 0 || (k != 10 && v != floor(v))) {
				bs_errf(r->err, BS_EXIT_INPUT, r->path, r->record, columns[k],
					"expected a non-negative %s for metric '%s', got '%s'",
					k == 10 ? "number" : "integer", w->metric, f[k]);
				r->failed = true;
				clear_fields(r);
				return;
			}
		}
		if (w->value <= 0 || w->tp < 1) {
			bs_errf(r->err, BS_EXIT_INPUT, r->path, r->record, w->value <= 0 ? "value" : "cards",
				w->value <= 0 ? "expected a positive number, got '%s'"
					      : "expected a card count in [1, 65536], got '%s'",
				w->value <= 0 ? f[10] : f[2]);
			r->failed = true;
			clear_fields(r);
			return;
		}
		if (shape_error(r, w, max_context)) {
			clear_fields(r);
			return;
		}
	}
	/* A row the pass-time fit reads states its unit and a precision it knows: a value in
	 * another unit would be fitted as if it were in this one. */
	const char *unit = fm ? fm->unit : NULL;
	if (unit && strcmp(f[11], unit)) {
		bs_errf(r->err, BS_EXIT_INPUT, r->path, r->record, "unit",
			"metric '%s' is measured in %s, got '%s' (convert the value)", w->metric, unit,
			f[11]);
		r->failed = true;
		clear_fields(r);
		return;
	}
	if (unit && precision_of(f[4]) < 0) {
		bs_errf(r->err, BS_EXIT_INPUT, r->path, r->record, "precision",
			"expected bf16 or fp8 for metric '%s', got '%s'", w->metric, f[4]);
		r->failed = true;
		clear_fields(r);
		return;
	}
	r->n++;
	clear_fields(r);
}

char *calib_read_file(const char *path, size_t *len, struct bs_err *err)
{
	static const struct read_lim lim = {BS_READ_MAX, "a calibration CSV", BS_RECORD_MAX, 0};
	return read_file_lim(path, len, &lim, err);
}

int calib_read_csv(const char *path, struct calib_row **rows, size_t *n, struct bs_err *err)
{
	size_t len;
	char *buf = calib_read_file(path, &len, err);
	if (!buf)
		return -1;
	int rc = calib_read_csv_text(path, buf, len, rows, n, err);
	free(buf);
	return rc;
}

int calib_read_csv_text(const char *path, const char *buf, size_t len, struct calib_row **rows,
			size_t *n, struct bs_err *err)
{
	struct csv_parser p;
	/* a long field grows in few steps (sim/util.h) */
	csv_parser_setup(&p, CSV_STRICT | CSV_STRICT_FINI | CSV_APPEND_NULL);
	struct reader r = {.path = path, .err = err};
	csv_lines_init(&r.ln, on_field, on_record, &r);
	r.ln.max_rec = BS_RECORD_MAX;
	/* A UTF-8 byte-order mark (a spreadsheet's export) is skipped before libcsv sees the
	 * header, whose first name may then be quoted. */
	size_t bom = utf8_bom_len(buf, len);
	buf += bom;
	len -= bom;
	if (csv_parse_lines(&p, buf, len, &r.ln) != len && !r.failed) {
		if (r.ln.stop == CSV_LINES_NUL)
			bs_errf(err, BS_EXIT_INPUT, path, r.ln.rec_line,
				r.nf < NCOL ? columns[r.nf] : NULL, "NUL byte in the value");
		else if (r.ln.stop == CSV_LINES_LONG)
			bs_errf(err, BS_EXIT_INPUT, path, r.ln.rec_line, NULL,
				"record longer than the limit of %zu MiB", BS_RECORD_MAX >> 20);
		else
			bs_errf(err, BS_EXIT_INPUT, path, r.ln.line, NULL, "%s",
				csv_strerror(csv_error(&p)));
		r.failed = true;
	}
	if (!r.failed && csv_fini_lines(&p, &r.ln) != 0 && !r.failed) {
		bs_errf(err, BS_EXIT_INPUT, path, r.ln.rec_line, NULL, "%s",
			csv_strerror(csv_error(&p)));
		r.failed = true;
	}
	clear_fields(&r);
	csv_free(&p);
	if (!r.failed && r.nrec < 2) {
		bs_errf(err, BS_EXIT_INPUT, path, 0, NULL, "no data records");
		r.failed = true;
	}
	if (r.failed) {
		free(r.rows);
		return -1;
	}
	*rows = r.rows;
	*n = r.n;
	return 0;
}
