/*
 * check_config: the configuration store (sim/config.h): defaults, precedence (default < preset
 * < file < command line, whatever the order of calls), JSON flattening and its errors with
 * line numbers, strict typed values, the env list, derived values, the effective-config JSON,
 * choices from the policy registry.
 */
#include <check.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policies/policy.h"
#include "policies/presets.h"
#include "sim/config.h"
#include "tests/check_main.h"

static char *write_tmp(const char *text)
{
	char *path = strdup("/tmp/bs_cfgXXXXXX");
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

START_TEST(defaults_and_types)
{
	struct config c;
	config_init(&c);
	ck_assert_int_eq(config_int(&c, "server.max_num_seqs"), 256);
	ck_assert_int_eq(config_int(&c, "server.block_size"), 128);
	ck_assert(config_bool(&c, "server.prefix_caching"));
	ck_assert(!config_is_set(&c, "server.max_model_len")); /* auto */
	ck_assert_str_eq(config_str(&c, "bucketing.strategy"), "exponential");
	struct bs_err e = {0};
	ck_assert_int_eq(config_set_arg(&c, "server.max_num_seqs=x", &e), -1);
	ck_assert_int_eq(e.code, BS_EXIT_USAGE);
	ck_assert_str_eq(e.field, "server.max_num_seqs");
	bs_err_clear(&e);
	ck_assert_int_eq(config_set_arg(&c, "bucketing.strategy=bogus", &e), -1);
	/* the registered strategies, in registry order */
	const struct policy_family *strategies = policy_family_by_key("bucketing.strategy");
	char want[512] = "valid: ";
	for (size_t m = 0; strategies->members[m]; m++) {
		if (m)
			strcat(want, ", ");
		strcat(want, strategies->members[m]->name);
	}
	ck_assert_msg(strstr(e.msg, want), "%s: not '%s'", e.msg, want);
	bs_err_clear(&e);
	ck_assert_int_eq(config_set_arg(&c, "no.such=1", &e), -1);
	ck_assert_ptr_nonnull(strstr(e.msg, "unknown config key"));
	bs_err_clear(&e);
	ck_assert_int_eq(config_set_arg(&c, "server.prefix_caching=off", &e), 0);
	ck_assert(!config_bool(&c, "server.prefix_caching"));
	ck_assert_int_eq(config_set_arg(&c, "slo.ttft_ms=250.5", &e), 0);
	ck_assert_double_eq(config_double(&c, "slo.ttft_ms"), 250.5);
	config_release(&c);
}
END_TEST

START_TEST(precedence)
{
	struct config c;
	config_init(&c);
	struct bs_err e = {0};
	char *f = write_tmp("{\"server\": {\"max_num_seqs\": 8, \"block_size\": 64},\n"
			    " \"scheduler.order\": \"ljf\", \"env\": {\"VLLM_SKIP_WARMUP\": true}}\n");
	/* The command line first, then the file, then a preset: the command line still wins,
	 * the file over the preset. */
	ck_assert_int_eq(config_set_arg(&c, "server.max_num_seqs=16", &e), 0);
	ck_assert_int_eq(config_load_json(&c, f, &e), 0);
	ck_assert_int_eq(preset_apply(&c, "uellm", &e), 0);
	ck_assert_int_eq(config_int(&c, "server.max_num_seqs"), 16);
	ck_assert_int_eq(config_int(&c, "server.block_size"), 64);
	ck_assert_str_eq(config_str(&c, "scheduler.order"), "ljf");          /* file > preset */
	ck_assert_str_eq(config_str(&c, "scheduler.batching"), "static");    /* preset > default */
	ck_assert_str_eq(config_env(&c, "VLLM_SKIP_WARMUP"), "true");
	ck_assert_int_eq(config_find(&c, "server.max_num_seqs")->origin, CFG_ORIGIN_CMDLINE);
	ck_assert_int_eq(config_find(&c, "scheduler.batching")->origin, CFG_ORIGIN_PRESET);
	ck_assert_int_eq(config_set_env_arg(&c, "VLLM_SKIP_WARMUP=false", CFG_ORIGIN_CMDLINE, &e), 0);
	ck_assert_str_eq(config_env(&c, "VLLM_SKIP_WARMUP"), "false");
	/* Derived values fill auto keys only. */
	config_set_derived(&c, "server.max_model_len", "4096");
	config_set_derived(&c, "server.max_num_seqs", "1");
	ck_assert_int_eq(config_int(&c, "server.max_model_len"), 4096);
	ck_assert_int_eq(config_int(&c, "server.max_num_seqs"), 16);
	/* The effective config: integers as integers, every key present. */
	cJSON *j = config_to_json(&c);
	char *txt = cJSON_PrintUnformatted(j);
	ck_assert_ptr_nonnull(strstr(txt, "\"server.max_num_seqs\":16,"));
	ck_assert_ptr_nonnull(strstr(txt, "\"env\":{\"VLLM_SKIP_WARMUP\":\"false\"}"));
	free(txt);
	cJSON_Delete(j);
	unlink(f);
	free(f);
	config_release(&c);
}
END_TEST

/* The --env list past its index's growth: each name found with its last value, a lower origin
 * ignored, the variables kept in the order first given; every key found by name. */
START_TEST(env_many_and_every_key)
{
	struct config c;
	config_init(&c);
	struct bs_err e = {0};
	char arg[64];
	for (int i = 0; i < 1000; i++) {
		snprintf(arg, sizeof arg, "V%d=%d", i, i);
		ck_assert_int_eq(config_set_env_arg(&c, arg, CFG_ORIGIN_CMDLINE, &e), 0);
	}
	for (int i = 0; i < 1000; i += 3) {
		snprintf(arg, sizeof arg, "V%d=x%d", i, i);
		ck_assert_int_eq(config_set_env_arg(&c, arg, CFG_ORIGIN_CMDLINE, &e), 0);
	}
	ck_assert_int_eq(config_set_env_arg(&c, "V1=file", CFG_ORIGIN_FILE, &e), 0);
	ck_assert_uint_eq(c.nenv, 1000);
	for (int i = 0; i < 1000; i++) {
		char want[16], name[16];
		snprintf(name, sizeof name, "V%d", i);
		snprintf(want, sizeof want, i % 3 ? "%d" : "x%d", i);
		ck_assert_str_eq(config_env(&c, name), want);
		ck_assert_str_eq(c.env[i].name, name);
	}
	ck_assert_ptr_null(config_env(&c, "V1000"));
	ck_assert_ptr_null(config_env(&c, "V"));
	for (size_t i = 0; i < c.n; i++)
		ck_assert_ptr_eq(config_find(&c, c.e[i].def->key), &c.e[i]);
	ck_assert_ptr_null(config_find(&c, "server.max_num_seq"));
	ck_assert_ptr_null(config_find(&c, ""));
	config_release(&c);
	ck_assert_ptr_null(config_find(&c, "server.max_num_seqs"));
	ck_assert_ptr_null(config_env(&c, "V1"));
}
END_TEST

START_TEST(json_errors_name_the_line)
{
	struct {
		const char *text, *field, *msg;
		long line;
	} cases[] = {
		{"{\n \"server\": {\n  \"max_num_seqs\": -4\n }\n}\n", "server.max_num_seqs",
		 "expected an integer in", 3},
		{"{\n \"bucketing\": {\"strategy\": \"fast\"}\n}\n", "bucketing.strategy",
		 "unknown bucketing 'fast'; valid: exponential", 2},
		{"{\n\n \"nope\": 1\n}\n", "nope", "unknown config key", 3},
		{"{\n \"server\": {\"max_num_seqs\": 4,\n}\n", "", "invalid JSON", 3},
		{"[1, 2]\n", "", "expected a JSON object", 1},
		{"{\"env\": [1]}\n", "env", "expected an object", 1},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		struct config c;
		config_init(&c);
		struct bs_err e = {0};
		char *f = write_tmp(cases[i].text);
		ck_assert_int_eq(config_load_json(&c, f, &e), -1);
		ck_assert_int_eq(e.code, BS_EXIT_INPUT);
		ck_assert_str_eq(e.file, f);
		ck_assert_msg(e.line == cases[i].line, "case %zu: line %ld", i, e.line);
		ck_assert_str_eq(e.field, cases[i].field);
		ck_assert_msg(strstr(e.msg, cases[i].msg), "case %zu: %s", i, e.msg);
		unlink(f);
		free(f);
		config_release(&c);
	}
	struct config c;
	config_init(&c);
	struct bs_err e = {0};
	ck_assert_int_eq(config_load_json(&c, "/nonexistent/x.json", &e), -1);
	ck_assert_ptr_nonnull(strstr(e.msg, "cannot open"));
	config_release(&c);
}
END_TEST

/* A key given twice in one file, in any spelling, is refused at its second occurrence; the
 * same key in two files, or different keys of one object given in two places, are not. */
START_TEST(json_duplicate_keys)
{
	struct {
		const char *text, *field, *msg;
		long line;
	} cases[] = {
		{"{\"workload.num_requests\": 5,\n \"workload\": {\"num_requests\": 7}}\n",
		 "workload.num_requests", "given twice in the file (first on line 1)", 2},
		{"{\n \"server\": {\"max_num_seqs\": 8},\n \"server.max_num_seqs\": 8\n}\n",
		 "server.max_num_seqs", "given twice in the file (first on line 2)", 3},
		{"{\n \"sim\": {\"strict\": true,\n  \"strict\": false}\n}\n", "sim.strict",
		 "(first on line 2)", 3},
		{"{\"slo.ttft_ms\": 100,\n\n \"slo.ttft_ms\": null}\n", "slo.ttft_ms",
		 "(first on line 1)", 3},
		{"{\"workload\": {\"rate\": 2},\n \"workload\": {\"cv\": 3}}\n", "workload",
		 "(first on line 1)", 2},
		{"{\"env\": {\"VLLM_SKIP_WARMUP\": \"1\",\n \"VLLM_SKIP_WARMUP\": \"0\"}}\n",
		 "VLLM_SKIP_WARMUP", "(first on line 1)", 2},
		/* a string value equal to a key's name is not the key */
		{"{\"model\": \"x\", \"bucketing.file\": \"seed\",\n \"workload\": {\"cv\": 2,"
		 "\n \"cv\": 3}}\n", "workload.cv", "(first on line 2)", 3},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		struct config c;
		config_init(&c);
		struct bs_err e = {0};
		char *f = write_tmp(cases[i].text);
		ck_assert_int_eq(config_load_json(&c, f, &e), -1);
		ck_assert_int_eq(e.code, BS_EXIT_INPUT);
		ck_assert_str_eq(e.file, f);
		ck_assert_msg(e.line == cases[i].line, "case %zu: line %ld", i, e.line);
		ck_assert_str_eq(e.field, cases[i].field);
		ck_assert_msg(strstr(e.msg, cases[i].msg), "case %zu: %s", i, e.msg);
		unlink(f);
		free(f);
		config_release(&c);
	}
	/* Two objects, and the same key in two files: the later file wins. */
	struct config c;
	config_init(&c);
	struct bs_err e = {0};
	char *f1 = write_tmp("{\"workload\": {\"rate\": 2}, \"workload.cv\": 3}\n");
	char *f2 = write_tmp("{\"workload\": {\"rate\": 5}}\n");
	ck_assert_int_eq(config_load_json(&c, f1, &e), 0);
	ck_assert_int_eq(config_load_json(&c, f2, &e), 0);
	ck_assert_double_eq(config_double(&c, "workload.rate"), 5);
	ck_assert_double_eq(config_double(&c, "workload.cv"), 3);
	unlink(f1);
	unlink(f2);
	free(f1);
	free(f2);
	config_release(&c);
	/* Many keys (the set grows past its first size). */
	config_init(&c);
	char *big = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&big, &len);
	fputs("{\"env\": {", m);
	for (int i = 0; i < 500; i++)
		fprintf(m, "%s\"X_%d\": %d", i ? ", " : "", i, i);
	fputs(", \"X_17\": 1}}\n", m);
	fclose(m);
	ck_assert_int_eq(config_load_json_text(&c, "big.json", big, &e), -1);
	ck_assert_str_eq(e.field, "X_17");
	free(big);
	config_release(&c);
}
END_TEST

START_TEST(registry_choices)
{
	/* A policy family's key takes exactly its registered members, in registry order, and a
	 * policy's own keys are keys like any other. */
	struct config c;
	config_init(&c);
	struct bs_err e = {0};
	for (size_t f = 0; policy_families[f]; f++) {
		const struct policy_family *fam = policy_families[f];
		const struct cfg_entry *ent = config_find(&c, fam->key);
		ck_assert_ptr_nonnull(ent);
		ck_assert_int_eq(ent->def->type, CFG_CHOICE);
		for (size_t m = 0; fam->members[m]; m++) {
			ck_assert_int_eq(config_set(&c, fam->key, fam->members[m]->name,
						    CFG_ORIGIN_CMDLINE, NULL, 0, &e), 0);
			for (const struct cfg_def *d = fam->members[m]->keys; d && d->key; d++)
				if (d->type == CFG_READS) /* defined by its owner */
					ck_assert_ptr_nonnull(config_find(&c, d->key));
				else
					ck_assert_ptr_eq(config_find(&c, d->key)->def, d);
		}
	}
	ck_assert_int_eq(config_set(&c, "scheduler.order", "lfw", CFG_ORIGIN_CMDLINE, NULL, 0, &e),
			 -1);
	ck_assert_int_eq(e.code, BS_EXIT_USAGE);
	ck_assert_str_eq(e.field, "scheduler.order");
	/* The registered orders, in registry order (a new policy changes the list, not this
	 * test), among them every shipped one. */
	char want[1024] = "unknown order 'lfw'; valid: ";
	const struct policy_family *orders = policy_family_by_key("scheduler.order");
	for (size_t m = 0; orders->members[m]; m++) {
		if (m)
			strcat(want, ", ");
		strcat(want, orders->members[m]->name);
	}
	ck_assert_str_eq(e.msg, want);
	static const char *const shipped[] = {"fcfs", "sjf", "ljf", "sjf_total", "ljf_total",
					      "priority", "earliest_bucket", "slo_output", "sjf_aging"};
	for (size_t i = 0; i < sizeof shipped / sizeof *shipped; i++)
		ck_assert_ptr_nonnull(policy_find(orders, shipped[i]));
	/* a family key's choices are its registered members, in registry order */
	char buf[256], members[256] = "";
	const struct policy_family *groupings = policy_family_by_key("scheduler.grouping");
	for (size_t m = 0; groupings->members[m]; m++) {
		if (m)
			strcat(members, "|");
		strcat(members, groupings->members[m]->name);
	}
	ck_assert_str_eq(config_choices(config_find(&c, "scheduler.grouping")->def, "|", buf,
					sizeof buf), members);
	ck_assert_str_eq(config_choices(config_find(&c, "cluster.mode")->def, "|", buf, sizeof buf),
			 "colocated|disaggregated");
	config_release(&c);
}
END_TEST

/* A policy's own keys reach it as par[row]: numbers as set, booleans 0/1, a choice its index,
 * text and unset auto keys NaN. */
START_TEST(policy_params_by_row)
{
	struct config c;
	config_init(&c);
	struct bs_err e = {0};
	struct policy_params par;
	const struct policy_info *st = policy_find(policy_family_by_key("scheduler.batching"), "static");
	const struct policy_info *ms =
		policy_find(policy_family_by_key("scheduler.batching"), "memory_safe");
	const struct policy_info *as = policy_find(policy_family_by_key("cluster.engine_loop"), "async");
	const struct policy_info *fx = policy_find(policy_family_by_key("scheduler.grouping"), "fixed");
	ck_assert_uint_eq(policy_nkeys(st), 2);
	policy_params_read(st, &c, &par); /* the defaults: 10 requests, waste 0.25 */
	ck_assert_double_eq(par.v[0], 10);
	ck_assert_double_eq(par.v[1], 0.25);
	for (int i = 2; i < POLICY_MAX_KEYS; i++)
		ck_assert(isnan(par.v[i]));
	ck_assert_int_eq(config_set_arg(&c, "scheduler.static_batch_size=3", &e), 0);
	ck_assert_int_eq(config_set_arg(&c, "scheduler.static_max_waste=1e-1", &e), 0);
	policy_params_read(st, &c, &par);
	ck_assert_double_eq(par.v[0], 3);
	ck_assert_double_eq(par.v[1], 0.1);
	policy_params_read(ms, &c, &par); /* sum|padded, prompt|total */
	ck_assert_double_eq(par.v[0], 0);
	ck_assert_double_eq(par.v[1], 0);
	ck_assert_int_eq(config_set_arg(&c, "scheduler.kv_accounting=padded", &e), 0);
	ck_assert_int_eq(config_set_arg(&c, "scheduler.kv_charge=total", &e), 0);
	policy_params_read(ms, &c, &par);
	ck_assert_double_eq(par.v[0], 1);
	ck_assert_double_eq(par.v[1], 1);
	policy_params_read(as, &c, &par);
	ck_assert_double_eq(par.v[0], 0);
	ck_assert_int_eq(config_set_arg(&c, "cluster.async_prefill_chunks=true", &e), 0);
	policy_params_read(as, &c, &par);
	ck_assert_double_eq(par.v[0], 1);
	policy_params_read(fx, &c, &par); /* text (an auto key, unset, too) */
	ck_assert(isnan(par.v[0]));
	ck_assert_int_eq(config_set_arg(&c, "scheduler.boundaries=0,256,max", &e), 0);
	policy_params_read(fx, &c, &par);
	ck_assert(isnan(par.v[0]));
	/* Every registered policy's keys fit its par[]. */
	for (size_t f = 0; policy_families[f]; f++)
		for (size_t m = 0; policy_families[f]->members[m]; m++)
			ck_assert_uint_le(policy_nkeys(policy_families[f]->members[m]), POLICY_MAX_KEYS);
	config_release(&c);
}
END_TEST

START_TEST(hash_is_stable)
{
	struct config a, b;
	config_init(&a);
	config_init(&b);
	struct bs_err e = {0};
	ck_assert_uint_eq(config_hash(&a), config_hash(&b));
	config_set_arg(&a, "server.max_num_seqs=8", &e);
	ck_assert_uint_ne(config_hash(&a), config_hash(&b));
	config_set_arg(&b, "server.max_num_seqs=8", &e);
	ck_assert_uint_eq(config_hash(&a), config_hash(&b));
	config_release(&a);
	config_release(&b);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("config");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, defaults_and_types);
	tcase_add_test(tc, precedence);
	tcase_add_test(tc, env_many_and_every_key);
	tcase_add_test(tc, json_errors_name_the_line);
	tcase_add_test(tc, json_duplicate_keys);
	tcase_add_test(tc, hash_is_stable);
	tcase_add_test(tc, registry_choices);
	tcase_add_test(tc, policy_params_by_row);
	suite_add_tcase(s, tc);
	return check_run(s);
}
