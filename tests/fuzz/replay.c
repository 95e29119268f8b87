/*
 * replay: feeds every regular file of the directories (or files) named on the command line to
 * the harness's LLVMFuzzerTestOneInput, in name order, and prints "replay: N inputs".  The same
 * inputs as libFuzzer's corpus, without libFuzzer: it runs with any compiler.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sim/util.h"
#include "tests/fuzz/fuzz.h"

/* Every byte of PATH (read_file would stop at a NUL byte, which many inputs hold), or NULL. */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 1 << 16, n = 0, r;
	char *buf = xmalloc(cap);
	while ((r = fread(buf + n, 1, cap - n, f)) > 0)
		if ((n += r) == cap)
			buf = xrealloc(buf, cap *= 2);
	bool bad = ferror(f);
	fclose(f);
	if (bad) {
		free(buf);
		return NULL;
	}
	*len = n;
	return buf;
}

static int run_file(const char *path)
{
	size_t len;
	char *buf = slurp(path, &len);
	if (!buf) {
		fprintf(stderr, "replay: %s: cannot read\n", path);
		return -1;
	}
	fprintf(stderr, "replay: %s\n", path);
	LLVMFuzzerTestOneInput((const uint8_t *)buf, len);
	free(buf);
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
	size_t total = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) != 0) {
			fprintf(stderr, "replay: %s: no such file or directory\n", argv[i]);
			return 1;
		}
		if (!S_ISDIR(st.st_mode)) {
			if (run_file(argv[i]))
				return 1;
			total++;
			continue;
		}
		DIR *d = opendir(argv[i]);
		if (!d)
			return 1;
		char **names = NULL;
		size_t n = 0;
		struct dirent *e;
		while ((e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			names = xrealloc(names, (n + 1) * sizeof *names);
			names[n++] = xasprintf("%s/%s", argv[i], e->d_name);
		}
		closedir(d);
		if (n) /* qsort's array may not be NULL, even when empty (an empty crashes folder) */
			qsort(names, n, sizeof *names, cmp_str);
		int rc = 0;
		for (size_t k = 0; k < n; k++) {
			if (!rc && stat(names[k], &st) == 0 && S_ISREG(st.st_mode)) {
				rc = run_file(names[k]);
				total++;
			}
			free(names[k]);
		}
		free(names);
		if (rc)
			return 1;
	}
	printf("replay: %zu inputs\n", total);
	return 0;
}
