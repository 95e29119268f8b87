/*
 * fuzz_bucket_log: the server-log reader of strategy log and `buckets --from-log`
 * (policies/bucket_log.c).  The file reader refuses NUL bytes; so does this harness.
 */
#include <stdlib.h>
#include <string.h>

#include "policies/bucket_int.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (memchr(data, 0, size))
		return 0;
	char *text = xmalloc(size + 1);
	memcpy(text, data, size);
	text[size] = 0;
	struct bucket_log lg;
	struct bs_err err = {0};
	bucket_log_parse_text(text, "fuzz.log", &lg, &err);
	bucket_log_free(&lg);
	free(text);
	return 0;
}
