/*
 * trace: reading request traces (CSV with a header, or JSON Lines) into columns, and the
 * table of bundled traces (workloads/data/, embedded in the binary).  Internal to workloads/.
 *
 * Owns: the column arrays of one loaded trace (trace_release frees them).  Rows keep the
 * file's order, except with SORT, where rows are stably sorted by arrival time.  Every value is
 * validated on reading; the first bad value is an error naming the file, the line (CSV: the
 * physical line on which the record begins, blank lines and quoted newlines counted; JSON Lines:
 * the line; a JSON array: the element's position) and the field.  Other simulators' column names
 * (Vidur, Mooncake, vllm bench serve) are aliases; Mooncake's hash_ids become prefix groups.
 * Nothing is clamped here: the max_model_len rules are applied by workload_build.
 */
#ifndef BS_TRACE_INT_H
#define BS_TRACE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/util.h"

#define TRACE_UNSET_U8 255  /* priority or task not given in this row */

struct trace {
	char name[256];        /* the bundled name or the path, as errors show it */
	size_t n;
	int32_t *prompt;       /* NULL: an outputs-only trace (no prompt column) */
	int32_t *output;       /* always present; may hold 0 */
	double *arrival_s;     /* NULL: no timestamps */
	uint8_t *priority;     /* NULL: no column; TRACE_UNSET_U8 = empty cell */
	uint8_t *task;         /* NULL: no column; enum task_type or TRACE_UNSET_U8 */
	int32_t *prefix_group; /* NULL: no column; -1 = none */
	int32_t *prefix_tokens;/* NULL: no column */
	int32_t *max_new;      /* NULL: no column; 0 = no cap in this row */
	uint32_t *recno;       /* line of each row (as in errors), for later errors */
	bool sorted;           /* SORT reordered at least one row */
	char prompt_col[48];   /* the file's names of the length columns, for errors */
	char output_col[48];
};

/* count, min, p50, mean, p90, p99, max of a column (percentiles interpolated linearly, as
 * gsl_stats_quantile_from_sorted_data). */
struct col_stats {
	size_t count;
	double min, p50, mean, p90, p99, max;
};
/* Sorts DATA in place. */
void col_stats_compute(double *data, size_t n, struct col_stats *s);

struct bundled_trace {
	const char *name;      /* "alpaca" */
	const char *path;      /* "workloads/data/alpaca.csv" */
	size_t rows;
	bool has_arrival;
	const char *about;     /* one line */
};

/* NULL-terminated (name == NULL). */
extern const struct bundled_trace bundled_traces[];
const struct bundled_trace *trace_bundled_find(const char *name);

/* Loads SPEC: a bundled name or a path (.jsonl/.json or content starting with '{' or '[' is
 * JSON, anything else CSV).  SORT: sort by arrival time instead of rejecting timestamps that go
 * backwards.  OUTPUTS_ONLY_OK: accept a trace without a prompt column. */
int trace_load(const char *spec, bool sort, bool outputs_only_ok, struct trace *t,
	       struct bs_err *err);
/* Same from a buffer (NAME for errors; JSON when IS_JSON). */
int trace_load_buffer(const char *name, const char *buf, size_t len, bool is_json, bool sort,
		      bool outputs_only_ok, struct trace *t, struct bs_err *err);
void trace_release(struct trace *t);

/* How a CSV of at least trace_split_min bytes is read: in two parts on two threads, the second
 * from the first line start past the middle, kept only when that gives what one parser gives
 * (trace.c, load_csv).  trace_reference_read = true reads every CSV on one thread, the
 * reference the tests compare the reading in two with. */
extern bool trace_reference_read;
extern size_t trace_split_min;
/* The CSV reading of trace_load_buffer with the second part from the first line start at or
 * after byte SPLIT (SPLIT >= LEN: one part), for the tests to try every split.  *PARTS (when not
 * NULL): 2 when the second part's rows were kept, 1 when one parser read everything. */
int trace_load_csv_split(const char *name, const char *buf, size_t len, size_t split, bool sort,
			 bool outputs_only_ok, struct trace *t, struct bs_err *err, int *parts);

#endif
