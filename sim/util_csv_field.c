/*
 * util_csv_field: the field buffer every CSV reader of the project gives libcsv
 * (csv_parser_setup, util.h): libcsv's 128-byte growth steps answered from a capacity that
 * doubles, kept in a header in front of the buffer.  Owns nothing beyond the buffers it returns,
 * which libcsv frees through csv_field_free.
 */
#include <csv.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "sim/util.h"

/* The capacity of a field buffer, kept in front of it (aligned as malloc aligns). */
union csv_field_hdr {
	size_t cap;
	max_align_t align;
};

void *csv_field_realloc(void *ptr, size_t size)
{
	union csv_field_hdr *h = ptr ? (union csv_field_hdr *)ptr - 1 : NULL;
	size_t cap = h ? h->cap : 0;
	if (size <= cap)
		return ptr;
	size_t max = SIZE_MAX - sizeof *h;
	if (size > max)
		return NULL;
	size_t want = cap > max / 2 ? max : 2 * cap;
	if (want < size)
		want = size;
	union csv_field_hdr *n = realloc(h, sizeof *h + want);
	if (!n && want > size) /* the doubled size failed: the size asked for may still fit */
		n = realloc(h, sizeof *h + (want = size));
	if (!n)
		return NULL;
	n->cap = want;
	return n + 1;
}

void csv_field_free(void *ptr)
{
	if (ptr)
		free((union csv_field_hdr *)ptr - 1);
}

size_t csv_field_capacity(const void *ptr)
{
	return ptr ? ((const union csv_field_hdr *)ptr - 1)->cap : 0;
}

void csv_parser_setup(struct csv_parser *p, unsigned char options)
{
	if (csv_init(p, options) != 0)
		BUG("csv_init failed");
	csv_set_realloc_func(p, csv_field_realloc);
	csv_set_free_func(p, csv_field_free);
}
