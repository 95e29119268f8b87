/*
 * trace_json: traces in JSON Lines (one object per line, record = line) or a JSON array of
 * objects (record = the element's position), parsed by cJSON.  Values go through the same
 * validators as the CSV reader's (trace_load_int.h); Mooncake's hash_ids lists are collected
 * here for the prefix groups.
 */
#include "workloads/trace_load_int.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

char *tl_json_text(const cJSON *v, enum col c, bool *ok)
{
	*ok = true;
	if (cJSON_IsNull(v))
		return xstrdup("");
	if (c == COL_TASK || c == COL_ID) {
		if (cJSON_IsString(v))
			return xstrdup(v->valuestring);
		if (c == COL_ID && cJSON_IsNumber(v))
			return xstrdup("0");
	} else if (cJSON_IsNumber(v)) {
		double d = v->valuedouble;
		if (d == floor(d) && fabs(d) < 9e15)
			return xasprintf("%lld", (long long)d);
		return xasprintf("%.17g", d);
	}
	*ok = false;
	char *p = cJSON_PrintUnformatted(v);
	char *s = xstrdup(p ? p : "?");
	cJSON_free(p);
	return s;
}

/* Mooncake's hash_ids: a list of non-negative integers, appended to L->hid. */
static int json_hash_ids(struct loader *L, const cJSON *v)
{
	if (cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsArray(v))
		return tl_err(L, COL_HASH_IDS, "expected a list of non-negative integers");
	size_t k = 0;
	const cJSON *e;
	cJSON_ArrayForEach(e, v) {
		double d = cJSON_IsNumber(e) ? e->valuedouble : -1;
		if (!(d >= 0 && d < 9e15 && d == floor(d)))
			return tl_err(L, COL_HASH_IDS, "element %zu: expected a non-negative integer", k + 1);
		if (L->nhid == L->hidcap) {
			L->hidcap = L->hidcap ? 2 * L->hidcap : 1024;
			L->hid = xrealloc(L->hid, L->hidcap * sizeof *L->hid);
		}
		L->hid[L->nhid++] = (int64_t)d;
		k++;
	}
	L->given[COL_HASH_IDS] = true;
	L->v[COL_HASH_IDS] = (int64_t)k;
	return 0;
}

static int json_record(struct loader *L, const cJSON *obj, bool first)
{
	if (!cJSON_IsObject(obj))
		return tl_err(L, COL_IGNORE, "expected a JSON object (one request)");
	bool seen[NCOL] = {0};
	const cJSON *it;
	cJSON_ArrayForEach(it, obj) {
		enum col c = tl_col_lookup(it->string);
		if (c == COL_IGNORE)
			continue;
		if (seen[c])
			return tl_err(L, COL_IGNORE, "field '%s' repeats field '%s'", it->string,
				    L->colname[c]);
		seen[c] = true;
		if (!L->has[c] && !first && (c == COL_PROMPT || c == COL_ARRIVAL || c == COL_OUTPUT)) {
			snprintf(L->colname[c], sizeof L->colname[c], "%s", it->string);
			return tl_err(L, c, "given here but not in the first record");
		}
		tl_add_col(L, c, it->string);
	}
	if (first && tl_check_columns(L))
		return -1;
	tl_begin_row(L);
	cJSON_ArrayForEach(it, obj) {
		enum col c = tl_col_lookup(it->string);
		if (c == COL_IGNORE)
			continue;
		if (c == COL_HASH_IDS) {
			if (json_hash_ids(L, it))
				return -1;
			continue;
		}
		bool ok;
		char *s = tl_json_text(it, c, &ok);
		if (!ok) {
			char sb[64];
			tl_err(L, c, "expected %s, got '%s'",
			     c == COL_TASK ? "a string" : "a number", tl_short_text(s, sb, sizeof sb));
			free(s);
			return -1;
		}
		int rc = tl_set_field(L, c, s);
		free(s);
		if (rc)
			return -1;
	}
	return tl_end_row(L);
}

/* Moves L->record from the line of START to the line of AT; returns AT's column (1-based). */
static long advance_to(struct loader *L, const char *start, const char *at)
{
	long line = L->record, col = 1;
	for (const char *p = start; at && p < at; p++) {
		if (*p == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	L->record = line;
	return col;
}

static int json_syntax_error(struct loader *L, const char *start, const char *end)
{
	/* Line and column of the failure from cJSON's end pointer. */
	return tl_err(L, COL_IGNORE, "invalid JSON at column %ld", advance_to(L, start, end));
}

/* cJSON skips a NUL byte as a blank, and decodes a "\u0000" escape into a NUL that cuts its
 * string: either in the text [START, START + N) is an error at its line and column (lines
 * counted from L->record). */
static int json_nul_check(struct loader *L, const char *start, size_t n)
{
	const char *z = memchr(start, 0, n);
	if (z)
		return tl_err(L, COL_IGNORE, "NUL byte at column %ld", advance_to(L, start, z));
	size_t e = json_nul_escape(start, n);
	if (e < n)
		return tl_err(L, COL_IGNORE, "%s (column %ld)", JSON_NUL_ESCAPE_MSG,
			      advance_to(L, start, start + e));
	size_t run, b = json_bad_number(start, n, &run);
	if (b < n) {
		char msg[160];
		snprintf(msg, sizeof msg, JSON_BAD_NUMBER_MSG, (int)(run > 40 ? 40 : run), start + b);
		return tl_err(L, COL_IGNORE, "%s (column %ld)", msg, advance_to(L, start, start + b));
	}
	return 0;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* A vllm bench serve result from byte I of BUF: one object (record = line 1 and on), nothing
 * after it; its members are trace_vllm_read's. */
static int load_vllm(struct loader *L, const char *buf, size_t i, size_t len)
{
	L->record = 1;
	if (json_nul_check(L, buf, len))
		return -1;
	L->record = 1;
	const char *end = NULL;
	cJSON *obj = cJSON_ParseWithLengthOpts(buf + i, len - i, &end, false);
	if (!obj)
		return json_syntax_error(L, buf, end);
	const char *q = end;
	while (q < buf + len && is_blank(*q))
		q++;
	if (q < buf + len) {
		cJSON_Delete(obj);
		advance_to(L, buf, q);
		return tl_err(L, COL_IGNORE, "text after the vllm bench serve result (a file of "
			      "several, as --append-result writes, is not a trace: give one result "
			      "a file)");
	}
	int rc = trace_vllm_read(L, obj);
	cJSON_Delete(obj);
	return rc;
}

int trace_load_json(struct loader *L, const char *buf, size_t len)
{
	size_t i = utf8_bom_len(buf, len); /* a byte-order mark (cJSON skips it too) */
	while (i < len && is_blank(buf[i]))
		i++;
	if (i == len) {
		L->record = 0;
		return tl_err(L, COL_IGNORE, "empty file (no records)");
	}
	if (buf[i] == '[') {
		/* A JSON array of objects: record N is the array's Nth element. */
		L->record = 1;
		if (json_nul_check(L, buf, len))
			return -1;
		const char *end = NULL;
		cJSON *arr = cJSON_ParseWithLengthOpts(buf, len, &end, false);
		if (!arr)
			return json_syntax_error(L, buf, end);
		const char *q = end;
		while (q < buf + len && is_blank(*q))
			q++;
		if (q < buf + len) {
			cJSON_Delete(arr);
			return json_syntax_error(L, buf, q);
		}
		const cJSON *it;
		long k = 0;
		cJSON_ArrayForEach(it, arr) {
			L->record = ++k;
			if (json_record(L, it, k == 1)) {
				cJSON_Delete(arr);
				return -1;
			}
		}
		cJSON_Delete(arr);
		return 0;
	}
	/* A `vllm bench serve --save-result` file: one object, its requests in lists
	 * (trace_vllm.c); recognised by its members. */
	if (buf[i] == '{') {
		cJSON *obj = cJSON_ParseWithLengthOpts(buf + i, len - i, NULL, false);
		bool vllm = obj && trace_vllm_is_result(obj);
		cJSON_Delete(obj);
		if (vllm)
			return load_vllm(L, buf, i, len);
	}
	/* JSON Lines: one object per line; blank lines are skipped; record = line number. */
	L->record = 0;
	bool first = true;
	for (size_t pos = 0; pos < len;) {
		const char *line = buf + pos;
		const char *nl = memchr(line, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - line) : len - pos;
		pos += n + 1;
		L->record++;
		if (json_nul_check(L, line, n))
			return -1;
		size_t k = 0;
		while (k < n && is_blank(line[k]))
			k++;
		if (k == n)
			continue;
		const char *end = NULL;
		cJSON *obj = cJSON_ParseWithLengthOpts(line, n, &end, false);
		if (!obj)
			return json_syntax_error(L, line, end);
		for (const char *q = end; q < line + n; q++)
			if (!is_blank(*q)) {
				cJSON_Delete(obj);
				return json_syntax_error(L, line, q);
			}
		int rc = json_record(L, obj, first);
		cJSON_Delete(obj);
		if (rc)
			return -1;
		first = false;
	}
	return 0;
}
