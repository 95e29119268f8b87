/*
 * check_util: strict parsing, errors and atomic output of sim/util.
 */
#include <check.h>
#include <csv.h>
#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sim/util.h"
#include "tests/check_main.h"

/* Under AddressSanitizer a failed malloc must return NULL (as libc's does) for the
 * out-of-memory test; this binary only. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "allocator_may_return_null=1";
}

START_TEST(parse_strict)
{
	int64_t v;
	double d;
	bool b;
	char why[128];
	ck_assert_int_eq(parse_i64("42", 0, 100, &v, why, sizeof why), 0);
	ck_assert_int_eq(v, 42);
	ck_assert_int_eq(parse_i64("4.0", 0, 100, &v, why, sizeof why), 0);
	ck_assert_int_eq(v, 4);
	ck_assert_int_eq(parse_i64("-3", 0, 100, &v, why, sizeof why), -1);
	ck_assert_int_eq(parse_i64("101", 0, 100, &v, why, sizeof why), -1);
	ck_assert_int_eq(parse_i64("12x", 0, 100, &v, why, sizeof why), -1);
	ck_assert_ptr_nonnull(strstr(why, "'12x'"));
	ck_assert_int_eq(parse_i64("", 0, 100, &v, why, sizeof why), -1);
	ck_assert_int_eq(parse_i64(" 1", 0, 100, &v, why, sizeof why), -1);
	ck_assert_int_eq(parse_i64("4.5", 0, 100, &v, why, sizeof why), -1);
	ck_assert_int_eq(parse_f64("0.25", 0, 1, &d, why, sizeof why), 0);
	ck_assert_double_eq(d, 0.25);
	ck_assert_int_eq(parse_f64("nan", 0, 1, &d, why, sizeof why), -1);
	ck_assert_int_eq(parse_f64("2", 0, 1, &d, why, sizeof why), -1);
	ck_assert_int_eq(parse_bool("On", &b, why, sizeof why), 0);
	ck_assert(b);
	ck_assert_int_eq(parse_bool("maybe", &b, why, sizeof why), -1);
}
END_TEST

START_TEST(first_error_wins)
{
	struct bs_err e = {0};
	ck_assert_int_eq(bs_errf(&e, BS_EXIT_INPUT, "a.csv", 7, "prompt_tokens", "bad %d", 1), -1);
	bs_errf(&e, BS_EXIT_USAGE, "b.csv", 9, NULL, "later");
	ck_assert_int_eq(e.code, BS_EXIT_INPUT);
	ck_assert_str_eq(e.file, "a.csv");
	ck_assert_int_eq(e.line, 7);
	ck_assert_str_eq(e.msg, "bad 1");
}
END_TEST

/* A value too long for the error's buffers is cut at a UTF-8 character boundary and marked
 * "...": 600 two-byte characters in a 512-byte message keep 254 of them (508 bytes) and the
 * mark; a 300-byte path keeps 252 bytes; a short message is untouched. */
START_TEST(long_error_text_cut_whole)
{
	char *msg = xmalloc(1201), *path = xmalloc(301);
	for (int i = 0; i < 600; i++)
		memcpy(msg + 2 * i, "\xc3\xa9", 2); /* é */
	msg[1200] = 0;
	memset(path, 'p', 300);
	path[300] = 0;
	struct bs_err e = {0};
	bs_errf(&e, BS_EXIT_INPUT, path, 1, "f", "%s", msg);
	ck_assert_uint_eq(strlen(e.msg), 508 + 3);
	ck_assert_str_eq(e.msg + 508, "...");
	ck_assert_int_eq(memcmp(e.msg, msg, 508), 0);
	ck_assert_uint_eq(strlen(e.file), 252 + 3);
	ck_assert_str_eq(e.file + 252, "...");
	struct bs_err e2 = {0};
	bs_errf(&e2, BS_EXIT_INPUT, NULL, 0, NULL, "%s", "short \xc3\xa9");
	ck_assert_str_eq(e2.msg, "short \xc3\xa9");
	free(msg);
	free(path);
}
END_TEST

START_TEST(outset_atomic)
{
	char dir[] = "/tmp/bs_outsetXXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	char *a = xasprintf("%s/a.txt", dir), *b = xasprintf("%s/b.txt", dir);
	struct bs_err e = {0};
	struct outset s;
	outset_init(&s);
	FILE *f = outset_open(&s, a, &e);
	ck_assert_ptr_nonnull(f);
	fputs("hello\n", f);
	ck_assert_int_eq(access(a, F_OK), -1); /* not visible before commit */
	outset_abort(&s);
	ck_assert_int_eq(access(a, F_OK), -1);
	outset_init(&s);
	fputs("x", outset_open(&s, a, &e));
	fputs("y", outset_open(&s, b, &e));
	ck_assert_int_eq(outset_commit(&s, &e), 0);
	ck_assert_int_eq(access(a, F_OK), 0);
	ck_assert_int_eq(access(b, F_OK), 0);
	unlink(a);
	unlink(b);
	rmdir(dir);
	free(a);
	free(b);
}
END_TEST

/* Lenient forms that strtod/strtoll would take and the strict parsers refuse. */
START_TEST(parse_refuses_hex_and_words)
{
	int64_t v = 7;
	double d = 7;
	char why[128];
	const char *bad[] = {"0x10", "0X10", "0x1p4", "inf", "-inf", "nan", "infinity", "1 ",
			     " 1", "\t1", "1\n", "e5", ".", "+", "-", "1e", "1,0"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		ck_assert_msg(parse_i64(bad[i], 0, 1000, &v, why, sizeof why) == -1, "%s", bad[i]);
		ck_assert_msg(parse_f64(bad[i], 0, 1000, &d, why, sizeof why) == -1, "%s", bad[i]);
	}
	ck_assert_int_eq(v, 7);
	ck_assert_double_eq(d, 7);
	/* Decimal forms stay accepted. */
	ck_assert_int_eq(parse_i64("1e3", 0, 1000, &v, why, sizeof why), 0);
	ck_assert_int_eq(v, 1000);
	ck_assert_int_eq(parse_i64("+12", 0, 1000, &v, why, sizeof why), 0);
	ck_assert_int_eq(v, 12);
	ck_assert_int_eq(parse_f64("-.5e1", -10, 10, &d, why, sizeof why), 0);
	ck_assert_double_eq(d, -5);
	/* Integral floats beyond int64: refused before any conversion (float-cast-overflow). */
	ck_assert_int_eq(parse_i64("1e300", INT64_MIN, INT64_MAX, &v, why, sizeof why), -1);
	ck_assert_ptr_nonnull(strstr(why, "out of range"));
	ck_assert_int_eq(parse_i64("9223372036854775808", INT64_MIN, INT64_MAX, &v, why, sizeof why),
			 -1);
	ck_assert_int_eq(parse_i64("9.3e18", INT64_MIN, INT64_MAX, &v, why, sizeof why), -1);
	ck_assert_int_eq(parse_i64("-9.2e18", INT64_MIN, INT64_MAX, &v, why, sizeof why), 0);
	ck_assert_int_eq(v, -9200000000000000000LL);
}
END_TEST

START_TEST(checked_conversions)
{
	int64_t v = 5;
	ck_assert_int_eq(f64_to_i64(9223372036854775808.0, &v), -1); /* 2^63 */
	ck_assert_int_eq(f64_to_i64(-9223372036854775808.0, &v), 0);
	ck_assert(v == INT64_MIN);
	ck_assert_int_eq(f64_to_i64(NAN, &v), -1);
	ck_assert_int_eq(f64_to_i64(INFINITY, &v), -1);
	ck_assert_int_eq(f64_to_i64(1e300, &v), -1);
	ck_assert_int_eq(f64_to_i64(2.5, &v), 0);
	ck_assert_int_eq(v, 3); /* halves away from zero, as llround */
	ck_assert_int_eq(f64_to_i64(-2.5, &v), 0);
	ck_assert_int_eq(v, -3);
	ck_assert_int_eq(s_to_ns(1.5, &v), 0);
	ck_assert_int_eq(v, 1500000000);
	ck_assert_int_eq(s_to_ns(9.2e9, &v), 0);
	ck_assert(v == 9200000000000000000LL);
	ck_assert_int_eq(s_to_ns(9.21e9, &v), -1);
	ck_assert_int_eq(s_to_ns(1e10, &v), -1);
}
END_TEST

START_TEST(mkdir_p_empty)
{
	struct bs_err e = {0};
	ck_assert_int_eq(mkdir_p("", &e), -1);
	ck_assert_int_eq(e.code, BS_EXIT_USAGE);
	ck_assert_str_eq(e.msg, "empty output directory name");
	struct outset s;
	outset_init(&s);
	bs_err_clear(&e);
	ck_assert_ptr_null(outset_open(&s, "", &e));
	ck_assert_str_eq(e.msg, "empty output file name");
}
END_TEST

static char *path_in(const char *dir, const char *name)
{
	return xasprintf("%s/%s", dir, name);
}

static bool exists(const char *dir, const char *name)
{
	char *p = path_in(dir, name);
	bool r = access(p, F_OK) == 0;
	free(p);
	return r;
}

static void put(const char *dir, const char *name, const char *text)
{
	char *p = path_in(dir, name);
	FILE *f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	free(p);
}

/* Entries of DIR other than . and .. */
static int entries(const char *dir)
{
	DIR *d = opendir(dir);
	ck_assert_ptr_nonnull(d);
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

/* A pid that is certainly not running: a child that has exited and been reaped. */
static long dead_pid(void)
{
	pid_t c = fork();
	ck_assert_int_ge(c, 0);
	if (c == 0)
		_exit(0);
	waitpid(c, NULL, 0);
	return (long)c;
}

static const char *const known[] = {"summary.json", "requests.csv", "batches.csv", NULL};

START_TEST(outset_directory)
{
	char dir[] = "/tmp/bs_outdirXXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	/* An earlier run's set, and the leftovers of a killed one. */
	put(dir, "summary.json", "old");
	put(dir, "batches.csv", "old");
	put(dir, OUTSET_MARKER, "summary.json\nbatches.csv\n");
	put(dir, "notes.txt", "the user's");
	long dead = dead_pid();
	char *stale = xasprintf("%s/.bucketsim.tmp.%ld", dir, dead);
	ck_assert_int_eq(mkdir(stale, 0777), 0);
	put(stale, "requests.csv", "partial");
	char *stale_file = xasprintf("requests.csv.tmp.%ld", dead);
	put(dir, stale_file, "partial");
	char *live = xasprintf(".bucketsim.tmp.%ld", (long)getppid()); /* running: kept */
	char *livep = path_in(dir, live);
	ck_assert_int_eq(mkdir(livep, 0777), 0);

	struct bs_err e = {0};
	struct outset s;
	ck_assert_int_eq(outset_init_dir(&s, dir, known, &e), 0);
	ck_assert_int_eq(access(stale, F_OK), -1);
	ck_assert(!exists(dir, stale_file));
	ck_assert(exists(dir, live));
	FILE *f = outset_open_in(&s, "summary.json", &e);
	ck_assert_ptr_nonnull(f);
	fputs("new", f);
	FILE *g = outset_open_in(&s, "requests.csv", &e);
	fputs("rows", g);
	/* Nothing visible before the commit; the earlier set is intact. */
	ck_assert(!exists(dir, "requests.csv"));
	ck_assert(exists(dir, "batches.csv"));
	ck_assert_int_eq(outset_commit(&s, &e), 0);
	/* This run's files, its marker, no batches.csv from the earlier run, the user's file. */
	ck_assert(exists(dir, "summary.json"));
	ck_assert(exists(dir, "requests.csv"));
	ck_assert(!exists(dir, "batches.csv"));
	ck_assert(exists(dir, "notes.txt"));
	char *m = path_in(dir, OUTSET_MARKER);
	char *txt = read_file(m, NULL, &e);
	ck_assert_str_eq(txt, "summary.json\nrequests.csv\n");
	free(txt);
	char *sp = path_in(dir, "summary.json");
	txt = read_file(sp, NULL, &e);
	ck_assert_str_eq(txt, "new");
	free(txt);
	/* dir: summary, requests, marker, notes, the running process's directory, the lock. */
	ck_assert(exists(dir, OUTSET_LOCK));
	ck_assert_int_eq(entries(dir), 6);

	/* An aborted set leaves the committed one untouched and nothing else. */
	ck_assert_int_eq(outset_init_dir(&s, dir, known, &e), 0);
	fputs("x", outset_open_in(&s, "batches.csv", &e));
	outset_abort(&s);
	ck_assert_int_eq(entries(dir), 6);
	ck_assert(!exists(dir, "batches.csv"));

	/* Temporaries are exclusive: this process's directory already there is an error. */
	char *mine = xasprintf("%s/.bucketsim.tmp.%ld", dir, (long)getpid());
	ck_assert_int_eq(mkdir(mine, 0777), 0);
	bs_err_clear(&e);
	ck_assert_int_eq(outset_init_dir(&s, dir, known, &e), -1);
	ck_assert_ptr_nonnull(strstr(e.msg, "cannot create directory"));
	rmdir(mine);
	rmdir(livep);
	char *cmd = xasprintf("rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
	free(mine);
	free(m);
	free(sp);
	free(stale);
	free(stale_file);
	free(live);
	free(livep);
}
END_TEST

/* What stands in the way of the commit and cannot be replaced (here a non-empty directory named
 * like an output) fails it with that name, and the earlier set is back as it was: its files,
 * its marker, no temporary, nothing moved aside. */
START_TEST(outset_commit_blocked)
{
	char dir[] = "/tmp/bs_outblkXXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	put(dir, "summary.json", "old");
	put(dir, OUTSET_MARKER, "summary.json\n");
	char *blocker = path_in(dir, "requests.csv");
	ck_assert_int_eq(mkdir(blocker, 0777), 0);
	put(blocker, "keep", "the user's");

	struct bs_err e = {0};
	struct outset s;
	ck_assert_int_eq(outset_init_dir(&s, dir, known, &e), 0);
	fputs("new", outset_open_in(&s, "summary.json", &e));
	fputs("rows", outset_open_in(&s, "requests.csv", &e));
	ck_assert_int_eq(outset_commit(&s, &e), -1);
	ck_assert_int_eq(e.code, BS_EXIT_RUNTIME);
	ck_assert_ptr_nonnull(strstr(e.msg, "it is a directory"));
	ck_assert_ptr_nonnull(strstr(e.file, "requests.csv"));
	ck_assert(exists(blocker, "keep"));
	char *sp = path_in(dir, "summary.json");
	char *txt = read_file(sp, NULL, &e);
	ck_assert_str_eq(txt, "old");
	free(txt);
	char *mp = path_in(dir, OUTSET_MARKER);
	txt = read_file(mp, NULL, &e);
	ck_assert_str_eq(txt, "summary.json\n");
	free(txt);
	free(mp);
	/* summary.json, the marker, the directory in the way and the lock: no temporary and
	 * nothing moved aside left. */
	ck_assert_int_eq(entries(dir), 4);
	char *cmd = xasprintf("rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
	free(sp);
	free(blocker);
}
END_TEST

/* SIGTERM and SIGINT while a set is open remove its temporaries; the process still dies of the
 * signal. */
START_TEST(outset_signal_cleanup)
{
	int sigs[] = {SIGTERM, SIGINT};
	for (int k = 0; k < 2; k++) {
		char dir[] = "/tmp/bs_outsigXXXXXX";
		ck_assert_ptr_nonnull(mkdtemp(dir));
		pid_t c = fork();
		ck_assert_int_ge(c, 0);
		if (c == 0) {
			struct bs_err e = {0};
			struct outset s;
			if (outset_init_dir(&s, dir, known, &e))
				_exit(10);
			FILE *f = outset_open_in(&s, "summary.json", &e);
			if (!f)
				_exit(11);
			fputs("partial", f);
			fflush(f);
			raise(sigs[k]);
			_exit(12);
		}
		int st;
		waitpid(c, &st, 0);
		ck_assert(WIFSIGNALED(st));
		ck_assert_int_eq(WTERMSIG(st), sigs[k]);
		ck_assert_int_eq(entries(dir), 0);
		rmdir(dir);
	}
}
END_TEST

/* The directories a set created for its output (and only those) go when it fails or is
 * interrupted, deepest first; a commit keeps them; a directory that was there stays. */
START_TEST(outset_created_dirs)
{
	char base[] = "/tmp/bs_outmkXXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(base));
	struct bs_err e = {0};
	struct outset s;
	char *out = xasprintf("%s/new/a/b", base);
	ck_assert_int_eq(outset_init_dir(&s, out, known, &e), 0);
	fputs("x", outset_open_in(&s, "summary.json", &e));
	outset_abort(&s);
	ck_assert_int_eq(entries(base), 0);
	/* committed: kept */
	ck_assert_int_eq(outset_init_dir(&s, out, known, &e), 0);
	fputs("x", outset_open_in(&s, "summary.json", &e));
	ck_assert_int_eq(outset_commit(&s, &e), 0);
	ck_assert(exists(out, "summary.json"));
	/* a directory that existed stays: only keep/x/y (trailing slash) goes */
	char *keep = path_in(base, "keep");
	ck_assert_int_eq(mkdir(keep, 0777), 0);
	char *deep = xasprintf("%s/x/y/", keep);
	ck_assert_int_eq(outset_init_dir(&s, deep, known, &e), 0);
	outset_abort(&s);
	ck_assert_int_eq(access(keep, F_OK), 0);
	ck_assert_int_eq(entries(keep), 0);
	/* a parent something else wrote into meanwhile is not empty: kept, with its content */
	char *mid = xasprintf("%s/m", keep), *mdeep = xasprintf("%s/m/n", keep);
	ck_assert_int_eq(outset_init_dir(&s, mdeep, known, &e), 0);
	put(mid, "other.txt", "someone else's");
	outset_abort(&s);
	ck_assert(exists(mid, "other.txt"));
	ck_assert_int_eq(entries(mid), 1);
	/* creation failing part-way (a name too long) leaves none of the directories it made */
	char *lng = xasprintf("%s/n2/a/%0300d", base, 0);
	bs_err_clear(&e);
	ck_assert_int_eq(outset_init_dir(&s, lng, known, &e), -1);
	ck_assert_int_eq(e.code, BS_EXIT_RUNTIME);
	ck_assert(!exists(base, "n2"));
	/* file mode: outset_mkdir, abort and commit */
	char *fdir = xasprintf("%s/f/g", base), *fpath = xasprintf("%s/f/g/x.txt", base);
	outset_init(&s);
	ck_assert_int_eq(outset_mkdir(&s, fdir, &e), 0);
	fputs("x", outset_open(&s, fpath, &e));
	outset_abort(&s);
	ck_assert(!exists(base, "f"));
	outset_init(&s);
	ck_assert_int_eq(outset_mkdir(&s, fdir, &e), 0);
	fputs("x", outset_open(&s, fpath, &e));
	ck_assert_int_eq(outset_commit(&s, &e), 0);
	ck_assert_int_eq(access(fpath, F_OK), 0);
	/* SIGINT and SIGTERM: the same as an abort */
	int sigs[] = {SIGINT, SIGTERM};
	for (int k = 0; k < 2; k++) {
		char *sdir = xasprintf("%s/sig/a/b", base);
		pid_t c = fork();
		ck_assert_int_ge(c, 0);
		if (c == 0) {
			if (outset_init_dir(&s, sdir, known, &e))
				_exit(10);
			FILE *f = outset_open_in(&s, "summary.json", &e);
			if (!f)
				_exit(11);
			fputs("partial", f);
			fflush(f);
			raise(sigs[k]);
			_exit(12);
		}
		int st;
		waitpid(c, &st, 0);
		ck_assert(WIFSIGNALED(st));
		ck_assert_int_eq(WTERMSIG(st), sigs[k]);
		ck_assert(!exists(base, "sig"));
		free(sdir);
	}
	char *cmd = xasprintf("rm -rf '%s'", base);
	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
	free(out);
	free(keep);
	free(deep);
	free(mid);
	free(mdeep);
	free(lng);
	free(fdir);
	free(fpath);
}
END_TEST

/* Running out of memory is an error exit with a message, not an abort with a core dump. */
START_TEST(oom_is_an_error_exit)
{
	int pfd[2];
	ck_assert_int_eq(pipe(pfd), 0);
	pid_t c = fork();
	ck_assert_int_ge(c, 0);
	if (c == 0) {
		dup2(pfd[1], 2);
		volatile size_t huge = SIZE_MAX / 4;
		void *p = xmalloc(huge);
		free(p);
		_exit(0);
	}
	close(pfd[1]);
	/* All of stderr: under AddressSanitizer its own warning comes first. */
	char buf[4096];
	size_t len = 0;
	ssize_t n;
	while (len < sizeof buf - 1 && (n = read(pfd[0], buf + len, sizeof buf - 1 - len)) > 0)
		len += (size_t)n;
	close(pfd[0]);
	buf[len] = 0;
	int st;
	waitpid(c, &st, 0);
	ck_assert(WIFEXITED(st));
	ck_assert_int_eq(WEXITSTATUS(st), BS_EXIT_RUNTIME);
	ck_assert_ptr_nonnull(strstr(buf, "bucketsim: error: out of memory"));
}
END_TEST

/* The parsers' fast path for plain decimals against their general path (strtoll/strtod). */
START_TEST(fast_parse_equals_reference)
{
	char s[64], why[128];
	unsigned long long x = 88172645463325252ULL;
	for (int i = 0; i < 200000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		int ip = (int)(x % 17), fp = (int)((x >> 8) % 19);
		unsigned long long a = (x >> 12) % 1000000000000000000ULL;
		int n = snprintf(s, sizeof s, "%s%.*llu", (x >> 50) % 4 ? "" : "-", ip ? ip : 1,
				 a % 10000000000000000ULL);
		if (fp && (x >> 40) % 3)
			snprintf(s + n, sizeof s - (size_t)n, ".%0*llu", fp, (x >> 20) % 1000000000000ULL);
		double d1 = -1, d2 = -1;
		int64_t v1 = -1, v2 = -1;
		util_reference_parse = false;
		/* Ranges that cut through the samples: out-of-range values are errors both ways. */
		double lo = (x >> 44) % 2 ? -1e300 : 0;
		int64_t ilo = (x >> 45) % 2 ? INT64_MIN : -999, ihi = (x >> 46) % 2 ? INT64_MAX : 1000000;
		int r1 = parse_f64(s, lo, 1e300, &d1, why, sizeof why);
		int q1 = parse_i64(s, ilo, ihi, &v1, why, sizeof why);
		double d3 = -1;
		int64_t v3 = -1;
		bool fr = parse_f64_span(s, strlen(s), lo, 1e300, &d3);
		bool fq = parse_i64_span(s, strlen(s), ilo, ihi, &v3);
		util_reference_parse = true;
		int r2 = parse_f64(s, lo, 1e300, &d2, why, sizeof why);
		int q2 = parse_i64(s, ilo, ihi, &v2, why, sizeof why);
		double d4;
		int64_t v4;
		ck_assert(!parse_f64_span(s, strlen(s), lo, 1e300, &d4));
		ck_assert(!parse_i64_span(s, strlen(s), ilo, ihi, &v4));
		util_reference_parse = false;
		ck_assert_msg(r1 == r2 && d1 == d2 && signbit(d1) == signbit(d2), "%s: %.17g vs %.17g",
			      s, d1, d2);
		ck_assert_msg(q1 == q2 && v1 == v2, "%s: %lld vs %lld", s, (long long)v1, (long long)v2);
		/* The span fast path: taken for every in-range value of at most 15 digits, and
		 * then exact. */
		int nd = 0;
		for (const char *c = s; *c; c++)
			nd += *c >= '0' && *c <= '9';
		ck_assert_msg(fr == (r2 == 0 && nd <= 15) && (!fr || (d3 == d2 && signbit(d3) == signbit(d2))),
			      "%s: span %d %.17g", s, fr, d3);
		ck_assert_msg(fq == (q2 == 0 && nd <= 15 && !strchr(s, '.')) && (!fq || v3 == v2), "%s: span %d",
			      s, fq);
	}
}
END_TEST

/* Levenshtein distances worked by hand, and the early stop against a full table on random
 * strings: the distance when at most MAX, else MAX + 1. */
static size_t full_edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), d[20][20];
	for (size_t i = 0; i <= la; i++)
		for (size_t j = 0; j <= lb; j++) {
			if (!i || !j) {
				d[i][j] = i + j;
				continue;
			}
			size_t x = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			size_t y = d[i - 1][j] + 1, z = d[i][j - 1] + 1;
			d[i][j] = x < y ? (x < z ? x : z) : (y < z ? y : z);
		}
	return d[la][lb];
}

/* FNV-1a 64 against the published test vectors (FNV's basis), and continuing a hash equals
 * hashing the whole. */
START_TEST(fnv1a_vectors)
{
	ck_assert_uint_eq(fnv1a(FNV1A_BASIS, "", 0), 0xcbf29ce484222325ull);
	ck_assert_uint_eq(fnv1a(FNV1A_BASIS, "a", 1), 0xaf63dc4c8601ec8cull);
	ck_assert_uint_eq(fnv1a(FNV1A_BASIS, "foobar", 6), 0x85944171f73967e8ull);
	ck_assert_uint_eq(fnv1a(fnv1a(FNV1A_BASIS, "foo", 3), "bar", 3), 0x85944171f73967e8ull);
}
END_TEST

START_TEST(edit_distance)
{
	ck_assert_uint_eq(str_edit_distance("kitten", "sitting", 10), 3);
	ck_assert_uint_eq(str_edit_distance("kitten", "sitting", 3), 3);
	ck_assert_uint_eq(str_edit_distance("kitten", "sitting", 2), 3);
	ck_assert_uint_eq(str_edit_distance("", "abc", 5), 3);
	ck_assert_uint_eq(str_edit_distance("abc", "", 0), 1);
	ck_assert_uint_eq(str_edit_distance("VLLM_PROMPT_BS_BUCKET_MIN", "VLLM_PROMPT_BS_BUCKET_MAX", 3), 2);
	ck_assert_uint_eq(str_edit_distance("flaw", "lawn", 3), 2);
	char longer[70];
	memset(longer, 'a', 65);
	longer[65] = 0;
	ck_assert_uint_eq(str_edit_distance(longer, "a", 3), 4);
	unsigned long long x = 2463534242ULL;
	for (int n = 0; n < 20000; n++) {
		char a[20], b[20];
		for (char *s = a; s <= b; s += b - a) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			size_t len = x % 19;
			for (size_t i = 0; i < len; i++)
				s[i] = (char)('a' + (x >> (5 + 2 * i)) % 3);
			s[len] = 0;
		}
		size_t full = full_edit_distance(a, b);
		for (size_t max = 0; max < 8; max++)
			ck_assert_msg(str_edit_distance(a, b, max) == (full <= max ? full : max + 1),
				      "%s %s %zu", a, b, max);
	}
}
END_TEST

/* The nearest name: the first of the smallest distance, at most STR_NEAR_MAX (3) edits. */
START_TEST(near_name)
{
	const char *names[] = {"server.max_num_seqs", "server.max_num_batched_tokens",
			       "server.max_model_len", NULL};
	struct str_near n;
	char hint[128];
	str_near_init(&n, "server.max_num_seq");
	for (size_t i = 0; names[i]; i++)
		str_near_try(&n, names[i]);
	ck_assert_str_eq(n.best, "server.max_num_seqs");
	ck_assert_uint_eq(n.dist, 1);
	str_near_hint(&n, hint, sizeof hint);
	ck_assert_str_eq(hint, "; did you mean server.max_num_seqs?");
	/* 4 edits away: no hint */
	str_near_init(&n, "server.max_num");
	for (size_t i = 0; names[i]; i++)
		str_near_try(&n, names[i]);
	ck_assert_ptr_null(n.best);
	str_near_hint(&n, hint, sizeof hint);
	ck_assert_str_eq(hint, "");
	/* a tie keeps the first: "abd" is 1 from "abc" and from "abe" */
	str_near_init(&n, "abd");
	str_near_try(&n, "abc");
	str_near_try(&n, "abe");
	ck_assert_str_eq(n.best, "abc");
}
END_TEST

/* PATH holding LEN bytes of TEXT. */
static void put_file(const char *path, const char *text, size_t len)
{
	FILE *f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(text, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
}

/* S as fputs_escaped writes it (owned by the caller). */
static char *escaped(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	ck_assert_ptr_nonnull(f);
	fputs_escaped(s, f);
	fclose(f);
	return buf;
}

/* fputs_escaped: C0 controls, DEL, the C1 controls of UTF-8 and malformed UTF-8 bytes are
 * escaped, well-formed UTF-8 (two, three and four bytes) and backslashes are kept. */
START_TEST(escape_controls)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{"plain text, 'quoted'", "plain text, 'quoted'"},
		{"a\033[2Jb", "a\\x1b[2Jb"},
		{"10\n", "10\\n"},
		{"\t\r\001\037\177", "\\t\\r\\x01\\x1f\\x7f"},
		{"caf\303\251 \342\202\254 \360\237\230\200", "caf\303\251 \342\202\254 \360\237\230\200"},
		{"\302\233x", "\\xc2\\x9bx"},          /* U+009B, the 8-bit CSI */
		{"\302\240", "\302\240"},                 /* U+00A0 is printable */
		{"\233[2J", "\\x9b[2J"},                  /* a lone C1 byte */
		{"\303", "\\xc3"},                         /* a sequence cut by the end */
		{"\343\201x", "\\xe3\\x81x"},           /* ... and by an ASCII byte */
		{"\\u0000 kept", "\\u0000 kept"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char *got = escaped(cases[i].in);
		ck_assert_str_eq(got, cases[i].out);
		free(got);
	}
}
END_TEST

/* json_bad_number: the numbers cJSON takes that JSON does not, found outside strings only. */
START_TEST(json_numbers)
{
	static const struct {
		const char *text;
		size_t at, run; /* at = SIZE_MAX: none */
	} cases[] = {
		{"{\"a\": 10, \"b\": -0.5e+3, \"c\": 0, \"d\": [1E9, -0]}", SIZE_MAX, 0},
		{"{\"a\": 010}", 6, 3},
		{"{\"a\": -01}", 6, 3},
		{"{\"a\": 1.}", 6, 2},
		{"{\"a\": 1.e3}", 6, 4},
		{"{\"a\": -.5}", 6, 3},
		{"{\"a\": 1e}", 6, 2},
		{"{\"a\": 1e+}", 6, 3},
		{"{\"a\": -}", 6, 1},
		{"{\"a\": 1-2}", 6, 3},
		{"{\"010\": \"1.\", \"q\\\"01\": 7}", SIZE_MAX, 0},
		{"[true, false, null, 00]", 20, 2},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		size_t n = strlen(cases[i].text), run = 0;
		size_t at = json_bad_number(cases[i].text, n, &run);
		ck_assert_msg(at == (cases[i].at < n ? cases[i].at : n), "case %zu: at %zu", i, at);
		if (at < n)
			ck_assert_uint_eq(run, cases[i].run);
	}
}
END_TEST

/* shortest_g: the shortest text that reads back (two timestamps 0.4 s apart near 1.7e9 were
 * both printed as 1.7e+09). */
START_TEST(shortest_text)
{
	char b[32];
	ck_assert_str_eq(shortest_g(1700000000.5, b, sizeof b), "1700000000.5");
	ck_assert_str_eq(shortest_g(1700000000.1, b, sizeof b), "1700000000.1");
	ck_assert_str_eq(shortest_g(2.5, b, sizeof b), "2.5");
	ck_assert_str_eq(shortest_g(0.1 + 0.2, b, sizeof b), "0.30000000000000004");
	ck_assert_str_eq(shortest_g(1e-300, b, sizeof b), "1e-300");
}
END_TEST

/* read_file_lim: the reading stops after the first NUL byte (/dev/zero ends at once), and the
 * size, line and JSON-array limits hold on the bytes read, each error naming the file, the
 * limit and (for a line) the line. */
START_TEST(read_limits)
{
	char dir[] = "/tmp/bs_rdXXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	char *p = xasprintf("%s/f", dir);
	struct bs_err e = {0};
	size_t len = 99;
	put_file(p, "a\nbb\0cc\0", 8);
	char *t = read_file(p, &len, &e);
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(len, 5);
	ck_assert_int_eq(memcmp(t, "a\nbb\0", 6), 0);
	free(t);
	t = read_file("/dev/zero", &len, &e);
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(len, 1);
	free(t);

	struct read_lim size10 = {10, "a test file", 0, 0};
	put_file(p, "0123456789", 10);
	t = read_file_lim(p, &len, &size10, &e);
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(len, 10);
	free(t);
	put_file(p, "0123456789a", 11);
	ck_assert_ptr_null(read_file_lim(p, &len, &size10, &e));
	ck_assert_int_eq(e.code, BS_EXIT_INPUT);
	ck_assert_str_eq(e.file, p);
	ck_assert_int_eq(e.line, 0);
	ck_assert_str_eq(e.msg, "larger than 10 bytes, the limit of a test file");
	bs_err_clear(&e);

	struct read_lim line4 = {0, "a JSON array", 4, 20};
	put_file(p, "abcd\r\nabcd\nabcde\nx", 18); /* line 2's '\r' counts */
	ck_assert_ptr_null(read_file_lim(p, &len, &line4, &e));
	ck_assert_int_eq(e.line, 1);
	ck_assert_str_eq(e.msg, "line longer than the limit of 4 bytes");
	bs_err_clear(&e);
	put_file(p, "abcd\nabcd\nabcde\nx", 17);
	ck_assert_ptr_null(read_file_lim(p, &len, &line4, &e));
	ck_assert_int_eq(e.line, 3);
	bs_err_clear(&e);
	/* A JSON array: one long line, bounded as a whole. */
	put_file(p, " \n [1,2,3,4,5,6,7]\n", 19);
	t = read_file_lim(p, &len, &line4, &e);
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(len, 19);
	free(t);
	put_file(p, "[1,2,3,4,5,6,7,8,9,10]", 22);
	ck_assert_ptr_null(read_file_lim(p, &len, &line4, &e));
	ck_assert_str_eq(e.msg, "larger than 20 bytes, the limit of a JSON array");
	bs_err_clear(&e);
	/* A NUL ends the reading before a limit is passed. */
	put_file(p, "abc\0defghijklmnopq", 18);
	t = read_file_lim(p, &len, &line4, &e);
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(len, 4);
	free(t);

	/* A FIFO fed without end (no size to stat): the limit stops the reading. */
	ck_assert_int_eq(mkfifo(p, 0600) == 0 || (unlink(p) == 0 && mkfifo(p, 0600) == 0), 1);
	pid_t c = fork();
	ck_assert_int_ge(c, 0);
	if (c == 0) {
		signal(SIGPIPE, SIG_DFL);
		FILE *w = fopen(p, "w");
		char blk[4096];
		memset(blk, 'x', sizeof blk);
		while (w && fwrite(blk, 1, sizeof blk, w) == sizeof blk)
			;
		_exit(0);
	}
	struct read_lim mib = {(size_t)1 << 20, "a test file", 0, 0};
	ck_assert_ptr_null(read_file_lim(p, &len, &mib, &e));
	ck_assert_str_eq(e.msg, "larger than 1 MiB, the limit of a test file");
	bs_err_clear(&e);
	kill(c, SIGKILL);
	waitpid(c, NULL, 0);
	unlink(p);
	rmdir(dir);
	free(p);
}
END_TEST

static void no_field(void *s, size_t len, void *data)
{
	(void)s;
	(void)len;
	++*(int *)data;
}

static void no_record(int c, void *data)
{
	(void)c;
	*(int *)data += 100;
}

/* csv_parse_lines stops before a NUL byte (never handed to a field) and before the line that
 * makes a record longer than max_rec, with the record's line. */
START_TEST(csv_lines_stops)
{
	static const char nul[] = "a,b\n\n\"c\nd\",x\0y\n";
	struct csv_parser p;
	struct csv_lines ln;
	int calls = 0;
	ck_assert_int_eq(csv_init(&p, CSV_STRICT), 0);
	csv_lines_init(&ln, no_field, no_record, &calls);
	ck_assert_uint_eq(csv_parse_lines(&p, nul, sizeof nul - 1, &ln), 12);
	ck_assert_int_eq(ln.stop, CSV_LINES_NUL);
	ck_assert_int_eq(ln.rec_line, 3);
	ck_assert_int_eq(ln.line, 4);
	ck_assert_int_eq(calls, 103); /* a, b, record; "c\nd"; x unfinished */
	csv_free(&p);
	/* A NUL alone, at the start of a line. */
	ck_assert_int_eq(csv_init(&p, CSV_STRICT), 0);
	csv_lines_init(&ln, no_field, no_record, &calls);
	ck_assert_uint_eq(csv_parse_lines(&p, "a\n\0", 3, &ln), 2);
	ck_assert_int_eq(ln.stop, CSV_LINES_NUL);
	ck_assert_int_eq(ln.rec_line, 2);
	csv_free(&p);
	/* max_rec 8: blank lines are not counted; a record of two lines of 5 bytes is 10. */
	ck_assert_int_eq(csv_init(&p, CSV_STRICT), 0);
	csv_lines_init(&ln, no_field, no_record, &calls);
	ln.max_rec = 8;
	static const char two[] = "abcdefg\n\n\n\n\n\n\n\n\n\n1234\n\"abc\ncd\"\n";
	ck_assert_uint_eq(csv_parse_lines(&p, two, sizeof two - 1, &ln), sizeof two - 1 - 4);
	ck_assert_int_eq(ln.stop, CSV_LINES_LONG);
	ck_assert_int_eq(ln.rec_line, 12);
	csv_free(&p);
	/* Fed in pieces, a line without end is stopped as well. */
	ck_assert_int_eq(csv_init(&p, CSV_STRICT), 0);
	csv_lines_init(&ln, no_field, no_record, &calls);
	ln.max_rec = 8;
	size_t fed = 0;
	for (int i = 0; i < 10 && ln.stop == CSV_LINES_OK; i++)
		fed += csv_parse_lines(&p, "xyz", 3, &ln);
	ck_assert_int_eq(ln.stop, CSV_LINES_LONG);
	ck_assert_uint_eq(fed, 6);
	csv_free(&p);
}
END_TEST

struct field_copy {
	size_t n, len, longest;
	int ok, recs;
};

static void count_record(int ch, void *data)
{
	(void)ch;
	((struct field_copy *)data)->recs++;
}

/* Checks every field against what the test fed: "a", "", "x,y\n\"z\"" then one long field of
 * 'q' and a final "end". */
static void copy_field(void *s, size_t len, void *data)
{
	struct field_copy *c = data;
	const char *f = s;
	if (c->n == 0)
		c->ok += len == 1 && f[0] == 'a';
	else if (c->n == 1)
		c->ok += len == 0;
	else if (c->n == 2)
		c->ok += len == 7 && !memcmp(f, "x,y\n\"z\"", 7);
	else if (c->n == 3) {
		size_t i = 0;
		while (i < len && f[i] == 'q')
			i++;
		c->ok += i == len;
		c->longest = len;
	} else if (c->n == 4)
		c->ok += len == 3 && !memcmp(f, "end", 3) && f[3] == 0; /* CSV_APPEND_NULL */
	c->n++;
}

/* csv_parser_setup: a parser that reads short fields holds libcsv's 128-byte block, not a
 * large one (each fuzzing input allocated 1 MiB, under the sanitizers 90 % of its time); a long
 * field is read whole; the buffer behind it doubles, so 16 MiB asked for 128 bytes at a time
 * moves it 17 times, and keeps its bytes when it moves. */
START_TEST(csv_field_buffer)
{
	struct csv_parser p;
	struct csv_lines ln;
	struct field_copy c = {0};
	csv_parser_setup(&p, CSV_STRICT | CSV_APPEND_NULL);
	csv_lines_init(&ln, copy_field, count_record, &c);
	static const char shortf[] = "a,,\"x,y\n\"\"z\"\"\"\n";
	ck_assert_uint_eq(csv_parse_lines(&p, shortf, sizeof shortf - 1, &ln), sizeof shortf - 1);
	ck_assert_uint_eq(c.n, 3);
	ck_assert_int_eq(c.ok, 3);
	ck_assert_uint_le(p.entry_size, 128);
	ck_assert_uint_le(csv_field_capacity(p.entry_buf), 256);
	/* A field of 3 MiB + 5 bytes, fed in one piece, then a short one. */
	size_t big = ((size_t)3 << 20) + 5;
	char *q = xmalloc(big + 6);
	memset(q, 'q', big);
	memcpy(q + big, ",end\n", 6);
	ck_assert_uint_eq(csv_parse_lines(&p, q, big + 5, &ln), big + 5);
	ck_assert_uint_eq(c.n, 5);
	ck_assert_int_eq(c.ok, 5);
	ck_assert_uint_eq(c.longest, big);
	ck_assert_uint_ge(csv_field_capacity(p.entry_buf), big + 1);
	ck_assert_uint_le(csv_field_capacity(p.entry_buf), 2 * (big + 128));
	ck_assert_int_eq(csv_fini_lines(&p, &ln), 0);
	ck_assert_int_eq(c.recs, 2);
	csv_free(&p);
	free(q);
	/* The allocator alone, asked as libcsv asks (128 bytes more each time) up to 16 MiB. */
	unsigned char *b = csv_field_realloc(NULL, 128);
	ck_assert_ptr_nonnull(b);
	ck_assert_uint_eq(csv_field_capacity(b), 128);
	ck_assert_uint_eq(csv_field_capacity(NULL), 0);
	memset(b, 7, 128);
	int moves = 0;
	size_t cap = csv_field_capacity(b);
	for (size_t sz = 256; sz <= ((size_t)16 << 20); sz += 128) {
		unsigned char *n = csv_field_realloc(b, sz);
		ck_assert_ptr_nonnull(n);
		if (csv_field_capacity(n) != cap) {
			moves++;
			cap = csv_field_capacity(n);
			ck_assert_uint_ge(cap, sz);
			ck_assert_int_eq(n[0], 7);
			ck_assert_int_eq(n[127], 7);
		}
		b = n;
	}
	ck_assert_int_eq(moves, 17);
	ck_assert_uint_eq(csv_field_capacity(b), (size_t)16 << 20);
	csv_field_free(b);
	csv_field_free(NULL);
	/* A size no allocation can hold: NULL, the buffer untouched (libcsv then halves its
	 * request, and reports CSV_ENOMEM when nothing fits). */
	b = csv_field_realloc(NULL, 16);
	ck_assert_ptr_null(csv_field_realloc(b, SIZE_MAX - 8));
	ck_assert_uint_eq(csv_field_capacity(b), 16);
	csv_field_free(b);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("util");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, parse_strict);
	tcase_add_test(tc, first_error_wins);
	tcase_add_test(tc, long_error_text_cut_whole);
	tcase_add_test(tc, outset_atomic);
	tcase_add_test(tc, parse_refuses_hex_and_words);
	tcase_add_test(tc, checked_conversions);
	tcase_add_test(tc, mkdir_p_empty);
	tcase_add_test(tc, outset_directory);
	tcase_add_test(tc, outset_commit_blocked);
	tcase_add_test(tc, outset_signal_cleanup);
	tcase_add_test(tc, outset_created_dirs);
	tcase_add_test(tc, oom_is_an_error_exit);
	tcase_add_test(tc, fast_parse_equals_reference);
	tcase_add_test(tc, edit_distance);
	tcase_add_test(tc, near_name);
	tcase_add_test(tc, fnv1a_vectors);
	tcase_add_test(tc, read_limits);
	tcase_add_test(tc, escape_controls);
	tcase_add_test(tc, shortest_text);
	tcase_add_test(tc, json_numbers);
	tcase_add_test(tc, csv_lines_stops);
	tcase_add_test(tc, csv_field_buffer);
	suite_add_tcase(s, tc);
	return check_run(s);
}
