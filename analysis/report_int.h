/*
 * report_int: what the row writer (analysis/report_writer.c) shares with the row formatters of
 * analysis/report.c: a requests.csv row's values, taken when the request finishes, and each
 * file's row written by printf (report_reference_format) or straight into a buffer.
 */
#ifndef BS_REPORT_INT_H
#define BS_REPORT_INT_H

#include <stdint.h>
#include <stdio.h>

#include "sim/kernel.h"

/* What a requests.csv row shows of a finished request, taken when it finishes. */
struct req_row {
	int64_t arrival, sched, first, finish, transfer;
	int32_t id, prompt, output;
	int16_t preemptions, lane, prefill_inst;
};

void report_req_row_take(struct req_row *w, const struct sim *s, int32_t id);
/* requests.csv's row as printf writes it: the reference of report_req_row_put. */
void report_req_row_printf(FILE *f, const struct req_row *w);
/* The row at P (at most REQ_ROW_MAX bytes); returns the end.  14 fields of at most 21 bytes,
 * tpot at most 330 (the %.6f of a huge double). */
enum { REQ_ROW_MAX = 640 };
char *report_req_row_put(char *p, const struct req_row *w);

/* batches.csv's row as printf writes it: the reference of report_batch_row. */
void report_batch_row_printf(FILE *f, const struct pass_rec *p);
/* The row at Q (at most BATCH_ROW_MAX bytes); returns the end.  25 fields: 18 integers of at
 * most 20 bytes, 3 times of at most 22, a phase name. */
enum { BATCH_ROW_MAX = 512 };
char *report_batch_row_put(char *q, const struct pass_rec *p);

#endif
