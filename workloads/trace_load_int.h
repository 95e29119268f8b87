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

/* Reads JSON Lines, or one JSON array of objects, from BUF (trace_json.c). */
int trace_load_json(struct loader *L, const char *buf, size_t len);

#endif
