/*
 * trace_load_int: the state of one trace being read, shared by the CSV reader (trace.c) and the
 * JSON reader (trace_json.c).  Both hand every value as text to tl_set_field and close each row
 * with tl_end_row, so a value means the same in either format.  Internal to workloads/.
 *
 * Errors: every tl_* function that returns int returns 0 or -1 after filling L->err with the
 * file, L->record (the line or element of the record being read) and the column's name as the
 * file spells it; L->failed then stays true.
 */
#ifndef BS_TRACE_LOAD_INT_H
#define BS_TRACE_LOAD_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sim/util.h"
#include "workloads/trace_int.h"

enum col {
	COL_IGNORE = -1,
	COL_PROMPT = 0,
	COL_OUTPUT,
	COL_ARRIVAL,
	COL_ID,
	COL_PRIORITY,
	COL_TASK,
	COL_PREFIX_GROUP,
	COL_PREFIX_TOKENS,
	COL_MAX_NEW,
	COL_HASH_IDS,   /* Mooncake's shared-prefix blocks (JSON only) */
	NCOL
};

struct loader {
	struct trace *t;
	struct bs_err *err;
	bool failed;
	bool sort, outputs_only_ok, need_sort;
	size_t cap;
	bool has[NCOL];
	char colname[NCOL][48];
	long record;            /* line (CSV: where the record begins) of the record being read */
	double arrival_unit;    /* seconds per unit of the arrival column */
	bool arrival_relative;  /* arrivals made relative to the first row (start_time) */
	/* Mooncake hash_ids: every row's ids, flat, and each row's count. */
	int64_t *hid;
	size_t nhid, hidcap;
	uint32_t *hid_n;
	/* The row being read. */
	bool given[NCOL];
	int64_t v[NCOL];
	double arrival;
	double last_arrival;
	/* CSV only. */
	enum col *roles;
	char **hdr;             /* the header's names, for errors */
	size_t nhdr, hdrcap, field;
	long nrec;              /* records completed (the header is the first) */
	struct csv_lines ln;
};

/* The integer columns' ranges (PROMPT, OUTPUT, PRIORITY, PREFIX_GROUP, PREFIX_TOKENS, MAX_NEW;
 * the others are not integers). */
struct tl_col_range {
	bool integer;
	int64_t min, max;
};
extern const struct tl_col_range tl_col_range[NCOL];

/* An error on column C (COL_IGNORE: on the record) of the record being read. */
int tl_err(struct loader *L, enum col c, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The column a name means (COL_IGNORE for names not recognised). */
enum col tl_col_lookup(const char *name);
/* Declares column C present under NAME (rows read before it get its "not given" value). */
void tl_add_col(struct loader *L, enum col c, const char *name);
/* Checks the column set (after the CSV header or the first JSON record). */
int tl_check_columns(struct loader *L);
/* S itself when short, else its first 40 bytes and "..." in BUF (for messages). */
const char *tl_short_text(const char *s, char *buf, size_t len);
/* A row: begin, one tl_set_field per value given ("" = an empty cell), end (checks and
 * appends it). */
void tl_begin_row(struct loader *L);
int tl_set_field(struct loader *L, enum col c, const char *s);
int tl_end_row(struct loader *L);

/* At most this many rows in a trace. */
#define TRACE_MAX_ROWS 100000000
/* At most this many bytes in a trace written as one JSON array (parsed whole by cJSON, which
 * takes several times the text's size); JSON Lines and CSV have no limit but BS_RECORD_MAX on
 * one record. */
#define TRACE_JSON_ARRAY_MAX ((size_t)1 << 30)

/*
 * The CSV input: the whole of it in memory (BUF), or a regular file read block by block with
 * pread (FD), so that a file is never held whole and its reading overlaps the parsing (each
 * thread reads the part it parses).  LEN is its size.
 */
struct csv_src {
	const char *buf;
	int fd;
	size_t len;
};

/* Bytes [FROM, FROM + N) of a file source into BLK: the count read, 0 at the end of the file,
 * -1 on a read error (recorded on L). */
ssize_t csv_src_read(struct loader *L, const struct csv_src *src, char *blk, size_t from,
		     size_t n);
/* Reads SRC as CSV (trace_csv.c): with SPLIT < SRC->len (and not trace_reference_read), the
 * records from the first line start at or after byte SPLIT on a second thread; 0 or -1. */
int load_csv(struct loader *L, const struct csv_src *src, size_t split, int *parts);

/* Reads JSON Lines, or one JSON array of objects, or a vllm bench serve result, from BUF
 * (trace_json.c). */
int trace_load_json(struct loader *L, const char *buf, size_t len);
/* The text of a JSON value for the validators; *OK false when its type does not fit C
 * (trace_json.c). */
struct cJSON;
char *tl_json_text(const struct cJSON *v, enum col c, bool *ok);
/* Whether OBJ is a `vllm bench serve --save-result` file's object (trace_vllm.c). */
bool trace_vllm_is_result(const struct cJSON *obj);
/* The requests of OBJ, a `vllm bench serve --save-result --save-detailed` file's object
 * (trace_vllm.c). */
int trace_vllm_read(struct loader *L, const struct cJSON *obj);

#endif
