/*
 * fuzz_calib: the calibration CSV reader of `bucketsim calibrate` (models/calib.c).
 */
#include <stdlib.h>

#include "models/calib_int.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct calib_row *rows = NULL;
	size_t n = 0;
	struct bs_err err = {0};
	if (calib_read_csv_text("fuzz.csv", (const char *)data, size, &rows, &n, &err) == 0)
		free(rows);
	return 0;
}
