/*
 * report: the files a run writes and the summary it prints.
 *
 *   requests.csv  one row per request, written when it finishes (so in completion order)
 *   batches.csv   one row per forward pass, in time order
 *   buckets.csv   one row per padded shape used or warmed, sorted by phase then shape
 *   summary.json  {"meta": ..., "config": ..., "metrics": ...}
 *
 * Numbers are written in the C locale with fixed formats; times that are integer
 * nanoseconds are printed exactly (seconds with 9 decimals, milliseconds with 6).  Columns and
 * keys are documented in the README.  The writers borrow their FILE streams (opened through an
 * outset, so a failed run leaves nothing behind).
 */
#ifndef BS_REPORT_H
#define BS_REPORT_H

#include <stdio.h>

#include "sim/kernel.h"

struct cJSON;

void report_requests_header(FILE *f);
void report_request_row(FILE *f, const struct sim *s, int32_t id);
void report_batches_header(FILE *f);
void report_batch_row(FILE *f, const struct pass_rec *p);
void report_buckets(FILE *f, const struct sim *s);
/* The readable summary printed to stdout. */
void report_human(FILE *f, const struct cJSON *summary);

/* Writes ns as seconds with 9 decimals / as milliseconds with 6 decimals, exactly. */
int fmt_ns_s(char *buf, size_t n, int64_t ns);
int fmt_ns_ms(char *buf, size_t n, int64_t ns);

#endif
