/*
 * report: the files a run writes and the summary it prints.
 *
 *   requests.csv  one row per request, written when it finishes (so in completion order)
 *   batches.csv   one row per forward pass, in time order
 *   buckets.csv   one row per padded shape used or warmed, sorted by phase then shape
 *   monitor.csv   one row per monitor sample (monitor.interval_s > 0)
 *   boundaries.csv one row per change of the BucketServe bucket boundaries
 *   summary.json  {"meta": ..., "config": ..., "metrics": ...}
 *
 * Numbers are written in the C locale with fixed formats; times that are integer
 * nanoseconds are printed exactly (seconds with 9 decimals, milliseconds with 6).  Columns and
 * keys are documented in the README.  The writers borrow their FILE streams (opened through an
 * outset, so a failed run leaves nothing behind).
 */
#ifndef BS_REPORT_H
#define BS_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "sim/kernel.h"

struct cJSON;

void report_requests_header(FILE *f);
void report_request_row(FILE *f, const struct sim *s, int32_t id);
void report_batches_header(FILE *f);
void report_batch_row(FILE *f, const struct pass_rec *p);
void report_buckets(FILE *f, const struct sim *s);
/* monitor.csv (monitor.interval_s > 0) and boundaries.csv (adaptive grouping). */
void report_monitor_header(FILE *f);
void report_monitor_row(FILE *f, const struct monitor_rec *m);
void report_boundaries_header(FILE *f);
void report_boundaries_row(FILE *f, int64_t t_ns, bool offline, const uint32_t *b, size_t nb,
			   size_t splits, size_t merged, uint64_t n_max);
/*
 * The row writer: requests.csv and batches.csv rows taken on the simulation's thread (the values
 * a row shows, when the hook is called) and formatted and written, in the same order, on a thread
 * of its own, so that formatting overlaps the simulation.  The bytes are those of
 * report_request_row and report_batch_row (the tests compare them).  Its memory is fixed (a few
 * blocks of rows; the caller waits when all are in flight).  THREADED false, or no thread to be
 * had: the caller's thread formats each block when it is full.  The writer borrows REQ and BAT
 * (either may be NULL when its rows are never given); report_writer_close writes what is left
 * (the caller's thread taking the blocks of the file the writer's thread is not writing, a file's
 * blocks always one at a time and in order), ends the thread and frees the writer, after which
 * the streams are the caller's again.
 */
struct report_writer;
struct report_writer *report_writer_new(FILE *req, FILE *bat, bool threaded);
void report_writer_request(struct report_writer *w, const struct sim *s, int32_t id);
void report_writer_pass(struct report_writer *w, const struct pass_rec *p);
void report_writer_close(struct report_writer *w);
/* report_buckets(F, S) on the writer's thread, before the blocks still to write, which it hands
 * over, the rows given so far included (at once on the caller's thread when W is NULL or has no
 * thread): F is written when report_writer_close returns, and S must not change until then. */
void report_writer_buckets(struct report_writer *w, FILE *f, const struct sim *s);

/* The readable summary printed to stdout. */
void report_human(FILE *f, const struct cJSON *summary);

/* Writes ns as seconds with 9 decimals / as milliseconds with 6 decimals, exactly. */
int fmt_ns_s(char *buf, size_t n, int64_t ns);
int fmt_ns_ms(char *buf, size_t n, int64_t ns);
/* Writes X as printf("%.6f") does, with the fast path of requests.csv. */
int fmt_f6(char *buf, size_t n, double x);
/* Writes X as printf("%.3f") does, with the same fast path (monitor.csv). */
int fmt_f3(char *buf, size_t n, double x);
/* true: every number through printf (the slow reference of the fast formatting, which must
 * give the same bytes; the tests compare them). */
extern bool report_reference_format;

#endif
