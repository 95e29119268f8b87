/*
 * report_writer: the row writer of report.h (report_writer_new ... report_writer_close):
 * requests.csv and batches.csv rows taken on the simulation's thread, handed over in blocks and
 * formatted (report_int.h: the same functions as report_request_row and report_batch_row) and
 * written on a thread of its own, in order.  Owns its blocks, its buffers and its thread; borrows
 * the streams.
 */
#include <pthread.h>
#include <stdlib.h>

#include "analysis/report.h"
#include "analysis/report_int.h"
#include "sim/cpu_hint.h"

enum { WBLOCK_ROWS = 2048, WBLOCKS = 6 };

/* Rows of one file, in the order taken. */
struct wblock {
	bool pass;               /* batches.csv rows (else requests.csv) */
	size_t n;
	struct wblock *next;
	union {
		struct req_row req[WBLOCK_ROWS];
		struct pass_rec pass[WBLOCK_ROWS];
	} u;
};

/* The blocks of one file handed over and not yet taken (FIFO), and whether a thread is writing
 * one of them: a file's blocks are written one at a time, in order. */
struct wqueue {
	struct wblock *head, *tail;
	bool busy;
};

struct report_writer {
	FILE *f[2];                            /* requests.csv, batches.csv */
	bool threaded;
	struct wblock *cur_req, *cur_pass;     /* being filled by the caller */
	struct wblock *blocks;                 /* WBLOCKS of them */
	char *buf[2];                          /* each file's output buffer (its writer's) */
	/* Under mu, with cv signalled at every change: the queues, the free blocks, buckets.csv
	 * to write (report_writer_buckets), and the end. */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct wqueue q[2];
	struct wblock *free_list;
	FILE *bk_f;
	const struct sim *bk_s;
	bool done;
	bool off_cpu;                          /* cpu_hint_keep_off holds the thread */
	pthread_t thread;
};

enum { WBUF = 1 << 17 };

/* Formats and writes block B into its file, through BUF (WBUF bytes). */
static void wblock_write(FILE *f, char *buf, const struct wblock *b)
{
	if (report_reference_format) {
		for (size_t i = 0; i < b->n; i++) {
			if (b->pass)
				report_batch_row_printf(f, &b->u.pass[i]);
			else
				report_req_row_printf(f, &b->u.req[i]);
		}
		return;
	}
	char *p = buf;
	for (size_t i = 0; i < b->n; i++) {
		if (p - buf > WBUF - REQ_ROW_MAX - BATCH_ROW_MAX) {
			fwrite(buf, 1, (size_t)(p - buf), f);
			p = buf;
		}
		p = b->pass ? report_batch_row_put(p, &b->u.pass[i]) : report_req_row_put(p, &b->u.req[i]);
	}
	fwrite(buf, 1, (size_t)(p - buf), f);
}

/* Under mu: writes buckets.csv (first: it is one piece of work, the blocks can be shared), or
 * one block of a file no other thread is writing, unlocking while it does; false when there is
 * nothing to take. */
static bool write_one(struct report_writer *w)
{
	FILE *bk = w->bk_f;
	if (bk) {
		w->bk_f = NULL;
		pthread_mutex_unlock(&w->mu);
		report_buckets(bk, w->bk_s);
		pthread_mutex_lock(&w->mu);
		return true;
	}
	for (int k = 0; k < 2; k++) {
		struct wqueue *q = &w->q[k];
		struct wblock *b = q->head;
		if (!b || q->busy)
			continue;
		q->head = b->next;
		if (!q->head)
			q->tail = NULL;
		q->busy = true;
		pthread_mutex_unlock(&w->mu);
		wblock_write(w->f[k], w->buf[k], b);
		pthread_mutex_lock(&w->mu);
		q->busy = false;
		b->next = w->free_list;
		w->free_list = b;
		pthread_cond_broadcast(&w->cv);
		return true;
	}
	return false;
}

static void *writer_main(void *arg)
{
	struct report_writer *w = arg;
	pthread_mutex_lock(&w->mu);
	for (;;) {
		if (write_one(w))
			continue;
		if (w->done)
			break; /* what is left is being written by the caller (report_writer_close) */
		pthread_cond_wait(&w->cv, &w->mu);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

struct report_writer *report_writer_new(FILE *req, FILE *bat, bool threaded)
{
	struct report_writer *w = xcalloc(1, sizeof *w);
	w->f[0] = req;
	w->f[1] = bat;
	w->blocks = xmalloc(WBLOCKS * sizeof *w->blocks);
	for (int k = 0; k < 2; k++)
		w->buf[k] = w->f[k] ? xmalloc(WBUF) : NULL;
	for (int i = 0; i < WBLOCKS; i++) {
		w->blocks[i].next = w->free_list;
		w->free_list = &w->blocks[i];
	}
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	/* No thread (none wanted, or none to be had): the caller formats each full block. */
	w->threaded = threaded && pthread_create(&w->thread, NULL, writer_main, w) == 0;
	/* Off the caller's CPU while the run feeds it (sim/cpu_hint.h). */
	w->off_cpu = w->threaded && cpu_hint_keep_off(w->thread);
	return w;
}

static struct wblock *take_free(struct report_writer *w, bool pass)
{
	pthread_mutex_lock(&w->mu);
	while (!w->free_list)
		pthread_cond_wait(&w->cv, &w->mu);
	struct wblock *b = w->free_list;
	w->free_list = b->next;
	pthread_mutex_unlock(&w->mu);
	b->pass = pass;
	b->n = 0;
	b->next = NULL;
	return b;
}

static void hand_over(struct report_writer *w, struct wblock *b)
{
	if (!w->threaded) {
		wblock_write(w->f[b->pass], w->buf[b->pass], b);
		b->next = w->free_list;
		w->free_list = b;
		return;
	}
	struct wqueue *q = &w->q[b->pass];
	pthread_mutex_lock(&w->mu);
	if (q->tail)
		q->tail->next = b;
	else
		q->head = b;
	q->tail = b;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

void report_writer_request(struct report_writer *w, const struct sim *s, int32_t id)
{
	if (!w->cur_req)
		w->cur_req = take_free(w, false);
	report_req_row_take(&w->cur_req->u.req[w->cur_req->n++], s, id);
	if (w->cur_req->n == WBLOCK_ROWS) {
		hand_over(w, w->cur_req);
		w->cur_req = NULL;
	}
}

void report_writer_pass(struct report_writer *w, const struct pass_rec *p)
{
	if (!w->cur_pass)
		w->cur_pass = take_free(w, true);
	w->cur_pass->u.pass[w->cur_pass->n++] = *p;
	if (w->cur_pass->n == WBLOCK_ROWS) {
		hand_over(w, w->cur_pass);
		w->cur_pass = NULL;
	}
}

/* Hands over the blocks being filled. */
static void hand_over_current(struct report_writer *w)
{
	if (w->cur_req)
		hand_over(w, w->cur_req);
	if (w->cur_pass)
		hand_over(w, w->cur_pass);
	w->cur_req = w->cur_pass = NULL;
}

void report_writer_buckets(struct report_writer *w, FILE *f, const struct sim *s)
{
	if (!w || !w->threaded) {
		report_buckets(f, s);
		return;
	}
	hand_over_current(w); /* the run is over: its last rows need not wait for the close */
	pthread_mutex_lock(&w->mu);
	w->bk_f = f;
	w->bk_s = s;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

void report_writer_close(struct report_writer *w)
{
	if (!w)
		return;
	hand_over_current(w);
	if (w->threaded) {
		/* The caller writes beside the thread what is left: the blocks of the file the
		 * thread is not writing, and buckets.csv if the thread has not begun it. */
		if (w->off_cpu)
			cpu_hint_release(w->thread);
		pthread_mutex_lock(&w->mu);
		w->done = true;
		pthread_cond_broadcast(&w->cv);
		for (;;) {
			if (write_one(w))
				continue;
			if (!w->q[0].head && !w->q[1].head)
				break; /* the thread may be writing its last block: joined below */
			pthread_cond_wait(&w->cv, &w->mu); /* blocks of the file being written */
		}
		pthread_mutex_unlock(&w->mu);
		pthread_join(w->thread, NULL);
	}
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cv);
	free(w->blocks);
	free(w->buf[0]);
	free(w->buf[1]);
	free(w);
}
