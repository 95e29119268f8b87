/*
 * trace_vllm: a `vllm bench serve --save-result --save-detailed` file read as a trace.
 *
 * The file (vllm-project/vllm, vllm/benchmarks/serve.py, main_async(): result_json, written by
 * json.dump, one object) holds the benchmark's settings and summary and, with --save-detailed
 * (without it main_async deletes them), the requests as parallel lists built by benchmark():
 *   input_lens   [output.prompt_len for output in outputs]: prompt tokens;
 *   output_lens  calculate_metrics()'s actual_output_lens: the tokens generated (counted by the
 *                tokenizer when the backend does not report them), 0 for a failed request;
 *   start_times  [output.start_time ...]: time.perf_counter() when the request was sent, in
 *                seconds from an arbitrary origin;
 *   errors       [output.error ...]: "" for a request that succeeded.
 * Request i is element i of every list (the order of the dataset's requests).  A row per
 * request that succeeded: prompt input_lens[i], output output_lens[i], arrival start_times[i]
 * made relative to the earliest (as the start_time column of its per-request records:
 * trace.c); a failed request is left out (its output length is not known), with one warning.
 * Each value goes through the validators of every other trace (tl_set_field), under the
 * member's name and index ("input_lens[3]"); rows keep their position in the lists (from 1)
 * as their record, as a JSON array's elements do.
 */
#include "workloads/trace_load_int.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

bool trace_vllm_is_result(const cJSON *obj)
{
	if (!cJSON_IsObject(obj))
		return false;
	/* the per-request lists, or the summary members every generation result has */
	return cJSON_GetObjectItemCaseSensitive(obj, "input_lens") ||
	       (cJSON_GetObjectItemCaseSensitive(obj, "request_throughput") &&
		cJSON_GetObjectItemCaseSensitive(obj, "num_prompts") &&
		cJSON_GetObjectItemCaseSensitive(obj, "duration"));
}

/* An error on member NAME of the file (no line: the file is one object). */
static int member_err(struct loader *L, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int member_err(struct loader *L, const char *name, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	L->failed = true;
	return bs_errf(L->err, BS_EXIT_INPUT, L->t->name, 0, name, "%s", msg);
}

/* Member NAME: a list (NULL when absent and not REQUIRED, after an error when wrong). */
static const cJSON *list_member(struct loader *L, const cJSON *obj, const char *name,
				bool required, bool *bad)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);
	if (!v && !required)
		return NULL;
	if (!v) {
		*bad = true;
		member_err(L, name, "missing: a vllm bench serve result keeps its requests' lists "
			   "only with --save-detailed (vllm bench serve --save-result "
			   "--save-detailed)");
		return NULL;
	}
	if (!cJSON_IsArray(v)) {
		*bad = true;
		member_err(L, name, "expected a list (one element per request)");
		return NULL;
	}
	return v;
}

/* A count member (completed, failed): absent is -1; else a non-negative integer. */
static int count_member(struct loader *L, const cJSON *obj, const char *name, int64_t *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);
	*out = -1;
	if (!v)
		return 0;
	double d = cJSON_IsNumber(v) ? v->valuedouble : -1;
	if (!(d >= 0 && d <= TRACE_MAX_ROWS && d == (double)(int64_t)d))
		return member_err(L, name, "expected a count of requests (an integer >= 0)");
	*out = (int64_t)d;
	return 0;
}

/* Element I of list member NAME as column C's value of the row being read. */
static int element(struct loader *L, enum col c, const char *name, const cJSON *list, int i)
{
	snprintf(L->colname[c], sizeof L->colname[c], "%s[%d]", name, i);
	bool ok;
	char *s = tl_json_text(cJSON_GetArrayItem(list, i), c, &ok);
	int rc;
	if (!ok) {
		char sb[64];
		rc = tl_err(L, c, "expected a number, got '%s'", tl_short_text(s, sb, sizeof sb));
	} else if (!*s) {
		rc = tl_err(L, c, "expected a number, got null");
	} else {
		rc = tl_set_field(L, c, s);
	}
	free(s);
	return rc;
}

int trace_vllm_read(struct loader *L, const cJSON *obj)
{
	bool bad = false;
	const cJSON *in = list_member(L, obj, "input_lens", true, &bad);
	const cJSON *out = bad ? NULL : list_member(L, obj, "output_lens", true, &bad);
	const cJSON *st = bad ? NULL : list_member(L, obj, "start_times", false, &bad);
	const cJSON *er = bad ? NULL : list_member(L, obj, "errors", false, &bad);
	if (bad)
		return -1;
	int n = cJSON_GetArraySize(in);
	const struct {
		const cJSON *l;
		const char *name;
	} lists[] = {{out, "output_lens"}, {st, "start_times"}, {er, "errors"}};
	for (size_t k = 0; k < sizeof lists / sizeof *lists; k++)
		if (lists[k].l && cJSON_GetArraySize(lists[k].l) != n)
			return member_err(L, lists[k].name, "%d elements, but input_lens has %d: "
					  "the lists hold one element per request each",
					  cJSON_GetArraySize(lists[k].l), n);
	int64_t completed, failed;
	if (count_member(L, obj, "completed", &completed) ||
	    count_member(L, obj, "failed", &failed))
		return -1;
	if (completed >= 0 && failed >= 0 && completed + failed != n)
		return member_err(L, "completed", "%lld completed and %lld failed requests, but the "
				  "lists hold %d", (long long)completed, (long long)failed, n);
	tl_add_col(L, COL_PROMPT, "input_lens");
	tl_add_col(L, COL_OUTPUT, "output_lens");
	if (st)
		tl_add_col(L, COL_ARRIVAL, "start_time"); /* seconds, made relative (trace.c) */
	L->record = 0;
	if (tl_check_columns(L))
		return -1;
	int left_out = 0;
	for (int i = 0; i < n; i++) {
		if (er) {
			const cJSON *e = cJSON_GetArrayItem(er, i);
			if (!cJSON_IsNull(e) && !cJSON_IsString(e)) {
				char name[48];
				snprintf(name, sizeof name, "errors[%d]", i);
				return member_err(L, name, "expected a string (\"\" when the request "
						  "succeeded) or null");
			}
			if (cJSON_IsString(e) && *e->valuestring) {
				left_out++;
				continue;
			}
		}
		L->record = 0;
		tl_begin_row(L);
		if (element(L, COL_PROMPT, "input_lens", in, i) ||
		    element(L, COL_OUTPUT, "output_lens", out, i) ||
		    (st && element(L, COL_ARRIVAL, "start_times", st, i)) || tl_end_row(L))
			return -1;
		L->t->recno[L->t->n - 1] = (uint32_t)i + 1;
	}
	/* the columns' names for later messages (max_model_len rules, statistics) */
	snprintf(L->colname[COL_PROMPT], sizeof L->colname[COL_PROMPT], "input_lens");
	snprintf(L->colname[COL_OUTPUT], sizeof L->colname[COL_OUTPUT], "output_lens");
	if (st)
		snprintf(L->colname[COL_ARRIVAL], sizeof L->colname[COL_ARRIVAL], "start_times");
	if (left_out && left_out == n)
		return member_err(L, "errors", "every one of the benchmark's %d requests failed: no "
				  "request to replay", n);
	if (left_out)
		bs_warn("%s: %d of the benchmark's %d requests failed (errors): left out of the "
			"trace", L->t->name, left_out, n);
	return 0;
}
