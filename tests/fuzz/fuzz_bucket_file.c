/*
 * fuzz_bucket_file: the bucket-file grammar (policies/bucket_file.c), whose Cartesian products
 * must stay capped.  The file reader refuses NUL bytes before parsing; so does this harness.
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
	struct blist prompt = {0}, decode = {0};
	struct bs_err err = {0};
	bucket_file_parse_text(text, "fuzz.txt", &prompt, &decode, &err);
	blist_free(&prompt);
	blist_free(&decode);
	free(text);
	return 0;
}
