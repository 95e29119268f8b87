/*
 * profile: loads the hardware and model profiles compiled into the binary
 * (models/data/<hardware>.json with "kind": "hardware", models/data/models.json), and profiles
 * from a file at run time: a `hardware` value holding a '/' or ending in ".json" is a path (a
 * profile `bucketsim calibrate` wrote), and so is such a `model` value (an object with the
 * members of an entry of models.json), each checked member by member.  Unknown names are
 * input errors (exit 3) that list every valid name.  The embedded files are parsed once per
 * process (embedded_json, sim/embed.h), so a sweep's or a fuzzer's repeated set-ups only look
 * the names up.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/cost_int.h"
#include "sim/embed.h"

const char *const perf_param_names[PP_COUNT] = {
	"eta_compute", "n_half_tokens", "eta_weights", "eta_kv", "eta_attn", "t_pass_ms",
	"t_allreduce_us", "ar_overlap",
};
const double perf_param_json_scale[PP_COUNT] = {1, 1, 1, 1, 1, 1e3, 1e6, 1};
const bool perf_param_is_eff[PP_COUNT] = {true, false, true, true, true, false, false, true};

static const char prefix[] = "models/data/";

static bool is_hw_file(const struct embedded_file *f)
{
	size_t n = strlen(f->path), pl = sizeof prefix - 1;
	if (strncmp(f->path, prefix, pl) || n < pl + 6 || strcmp(f->path + n - 5, ".json"))
		return false;
	const cJSON *k = cJSON_GetObjectItemCaseSensitive(embedded_json(f->path), "kind");
	return cJSON_IsString(k) && !strcmp(k->valuestring, "hardware");
}

void profile_list_names(FILE *out, bool hardware, const char *sep)
{
	bool first = true;
	if (hardware) {
		for (const struct embedded_file *f = embedded_files; f->path; f++) {
			if (!is_hw_file(f))
				continue;
			size_t pl = sizeof prefix - 1;
			fprintf(out, "%s%.*s", first ? "" : sep, (int)(strlen(f->path) - pl - 5),
				f->path + pl);
			first = false;
		}
		return;
	}
	const cJSON *j = embedded_json("models/data/models.json");
	const cJSON *mm = cJSON_GetObjectItemCaseSensitive(j, "models"), *it;
	cJSON_ArrayForEach(it, mm) {
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(it, "name");
		if (cJSON_IsString(n)) {
			fprintf(out, "%s%s", first ? "" : sep, n->valuestring);
			first = false;
		}
	}
}

static char *names_text(bool hardware)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		BUG("open_memstream failed");
	profile_list_names(f, hardware, ", ");
	fclose(f);
	return buf;
}

static int unknown(const char *what, const char *name, bool hardware, struct bs_err *err)
{
	char *names = names_text(hardware);
	bs_errf(err, BS_EXIT_INPUT, NULL, 0, what, "unknown %s '%s' (valid: %s)",
		hardware ? "hardware" : "model", name, names);
	free(names);
	return -1;
}

/* The shared tree of embedded hardware profile NAME, or NULL. */
static const cJSON *hw_embedded(const char *name)
{
	if (strchr(name, '/') || strlen(name) > 64)
		return NULL;
	char path[128];
	snprintf(path, sizeof path, "%s%s.json", prefix, name);
	const cJSON *j = embedded_json(path);
	const cJSON *k = cJSON_GetObjectItemCaseSensitive(j, "kind");
	return cJSON_IsString(k) && !strcmp(k->valuestring, "hardware") ? j : NULL;
}

cJSON *profile_hw_json(const char *name)
{
	const cJSON *j = hw_embedded(name);
	return j ? cJSON_Duplicate(j, true) : NULL;
}

/* The members every hardware profile has (spec, then params); vector_bf16_tflops may be null. */
static const char *const spec_keys[] = {
	"peak_bf16_tflops", "peak_fp8_tflops", "hbm_gib", "hbm_tb_s", "scaleup_gb_s",
	"scaleout_gb_s", "scaleup_peers", NULL};
static const char *const param_keys[] = {
	"compile_c0_s", "compile_c1_ms_per_token", "capture_s", "runtime_penalty_s",
	"fp8_compile_factor", "kv_link_latency_us", NULL};

static bool is_profile_path(const char *name)
{
	size_t n = strlen(name);
	return strchr(name, '/') || (n > 5 && !strcmp(name + n - 5, ".json"));
}

/* The members a profile file may hold, and the check that it holds no other and none twice.
 * OBJ is the object being checked: NULL for the top level, or the member holding it ("spec").
 * A hardware profile: kind, name, description, calibrated, spec, params and fit (what
 * `bucketsim calibrate` records of the fit: not read, so not checked); spec: spec_keys,
 * vector_bf16_tflops and sources (a note); params: the performance and compile parameters. */
typedef bool member_ok_fn(const char *obj, const char *name);

static bool in_list(const char *const *list, const char *name)
{
	for (; *list; list++)
		if (!strcmp(*list, name))
			return true;
	return false;
}

static const char *const hw_top_keys[] = {
	"kind", "name", "description", "calibrated", "device", "spec", "params", "fit", NULL};
static const char *const spec_extra_keys[] = {"vector_bf16_tflops", "sources", NULL};
/* The integer members of a model profile (an entry of models/data/models.json) and their
 * ranges: what the equations can take without overflowing. */
static const struct {
	const char *key;
	double min, max;
} model_ints[] = {
	{"layers", 1, 1 << 12}, {"hidden", 1, 1 << 20}, {"heads", 1, 1 << 16},
	{"kv_heads", 1, 1 << 16}, {"head_dim", 1, 1 << 14}, {"ffn", 1, 1 << 24},
	{"vocab", 1, 1 << 24}, {"experts", 1, 1 << 12}, {"experts_per_token", 1, 1 << 12},
	{"max_context", 1, 1 << 24}, {"learned_positions", 0, 1 << 24},
};

/* A model profile's members other than its integers (model_ints, below). */
static const char *const model_keys[] = {
	"gated_mlp", "tied_embeddings", "kind", "name", "hf", NULL};

static bool hw_member_ok(const char *obj, const char *name)
{
	if (!obj)
		return in_list(hw_top_keys, name);
	if (!strcmp(obj, "spec"))
		return in_list(spec_keys, name) || in_list(spec_extra_keys, name);
	for (int i = 0; i < PP_COUNT; i++)
		if (!strcmp(perf_param_names[i], name))
			return true;
	return in_list(param_keys, name);
}

/* "a, b, c": the members OK allows in OBJ (for the message of an unknown one). */
static char *members_text(member_ok_fn *ok, const char *obj)
{
	static const char *const *lists[] = {hw_top_keys, spec_keys, spec_extra_keys, param_keys,
					     model_keys, NULL};
	const char *cand[128];
	size_t n = 0;
	for (int i = 0; i < PP_COUNT; i++)
		cand[n++] = perf_param_names[i];
	for (size_t i = 0; i < sizeof model_ints / sizeof *model_ints; i++)
		cand[n++] = model_ints[i].key;
	for (size_t l = 0; lists[l]; l++)
		for (const char *const *p = lists[l]; *p; p++)
			cand[n++] = *p;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		BUG("open_memstream failed");
	bool first = true;
	for (size_t i = 0; i < n; i++) {
		size_t k = 0;
		while (k < i && strcmp(cand[k], cand[i]))
			k++;
		if (k == i && ok(obj, cand[i])) {
			fprintf(f, "%s%s", first ? "" : ", ", cand[i]);
			first = false;
		}
	}
	fclose(f);
	return buf;
}

/* Refuses a member of object O (OBJ, as above) that OK does not allow, or one given twice (cJSON
 * keeps both and reads the first), naming the file PATH, the member's line in TEXT (searched
 * from *POS on) and the member; the objects spec and params are checked the same way. */
static int check_members(const cJSON *o, const char *obj, member_ok_fn *ok, const char *what,
			 const char *path, const char *text, size_t *pos, struct bs_err *err)
{
	/* Every member is allowed, and none twice, so there are at most as many as allowed. */
	long lines[64];
	int n = 0;
	const cJSON *it;
	cJSON_ArrayForEach(it, o) {
		long line = json_member_line(text, it->string, pos);
		char field[96];
		snprintf(field, sizeof field, "%s%s%.80s", obj ? obj : "", obj ? "." : "", it->string);
		if (!ok(obj, it->string)) {
			char *names = members_text(ok, obj);
			bs_errf(err, BS_EXIT_INPUT, path, line, field, "unknown member of %s%s%s "
				"(valid: %s)", what, obj ? "'s " : "", obj ? obj : "", names);
			free(names);
			return -1;
		}
		int i = 0;
		for (const cJSON *q = o->child; q != it; q = q->next, i++)
			if (!strcmp(q->string, it->string))
				return lines[i] > 0
					       ? bs_errf(err, BS_EXIT_INPUT, path, line, field, "given twice "
							 "(first on line %ld)", lines[i])
					       : bs_errf(err, BS_EXIT_INPUT, path, line, field,
							 "given twice");
		if (n >= (int)(sizeof lines / sizeof *lines))
			BUG("profile check: more members than allowed");
		lines[n++] = line;
		if (!obj && cJSON_IsObject(it) &&
		    (!strcmp(it->string, "spec") || !strcmp(it->string, "params")) &&
		    check_members(it, it->string, ok, what, path, text, pos, err))
			return -1;
	}
	return 0;
}

static int bad_member(const char *path, const char *obj, const char *key, struct bs_err *err)
{
	char field[96];
	snprintf(field, sizeof field, "%s.%s", obj, key);
	return bs_errf(err, BS_EXIT_INPUT, path, 0, field, "missing or not a number (a hardware "
		       "profile as `bucketsim calibrate` writes)");
}

/* A hardware profile file, checked so that loading it cannot meet a missing member. */
static cJSON *load_hw_file(const char *path, struct bs_err *err)
{
	char *text;
	size_t len, pos = 0;
	cJSON *j = read_json_text(path, &text, &len, err); /* NUL bytes and \u0000 refused there */
	if (!j) {
		/* read_json names the file; say which key gave it. */
		snprintf(err->field, sizeof err->field, "hardware");
		return NULL;
	}
	const cJSON *k = cJSON_GetObjectItemCaseSensitive(j, "kind");
	if (!cJSON_IsString(k) || strcmp(k->valuestring, "hardware")) {
		bs_errf(err, BS_EXIT_INPUT, path, 0, "kind",
			"not a hardware profile (\"kind\": \"hardware\")");
		cJSON_Delete(j);
		free(text);
		return NULL;
	}
	int members = check_members(j, NULL, hw_member_ok, "a hardware profile", path, text, &pos,
				    err);
	free(text);
	if (members) {
		cJSON_Delete(j);
		return NULL;
	}
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(j, "spec");
	const cJSON *pp = cJSON_GetObjectItemCaseSensitive(j, "params");
	int rc = 0;
	for (size_t i = 0; spec_keys[i] && !rc; i++)
		if (!cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(s, spec_keys[i])))
			rc = bad_member(path, "spec", spec_keys[i], err);
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(s, "vector_bf16_tflops");
	if (!rc && v && !cJSON_IsNull(v) && !cJSON_IsNumber(v))
		rc = bad_member(path, "spec", "vector_bf16_tflops", err);
	for (size_t i = 0; param_keys[i] && !rc; i++)
		if (!cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(pp, param_keys[i])))
			rc = bad_member(path, "params", param_keys[i], err);
	for (int i = 0; i < PP_COUNT && !rc; i++)
		if (!cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(pp, perf_param_names[i])))
			rc = bad_member(path, "params", perf_param_names[i], err);
	/* What the equations can take: rates, sizes and bandwidths above 0 (a 0 divides), the
	 * efficiencies in (0, 1] (the all-reduce overlap in [0, 1]), times and costs at least 0,
	 * the scale-up peers a whole number (0: a switch). */
	static const struct {
		const char *obj, *key;
		double min, max;
		bool above_min, integer;
	} ranges[] = {
		{"spec", "peak_bf16_tflops", 0, 1e6, true, false},
		{"spec", "peak_fp8_tflops", 0, 1e6, true, false},
		{"spec", "hbm_gib", 0, 1e6, true, false},
		{"spec", "hbm_tb_s", 0, 1e4, true, false},
		{"spec", "scaleup_gb_s", 0, 1e6, true, false},
		{"spec", "scaleout_gb_s", 0, 1e6, true, false},
		{"spec", "scaleup_peers", 0, 1024, false, true},
		{"params", "eta_compute", 0, 1, true, false},
		{"params", "n_half_tokens", 0, 1e9, false, false},
		{"params", "eta_weights", 0, 1, true, false},
		{"params", "eta_kv", 0, 1, true, false},
		{"params", "eta_attn", 0, 1, true, false},
		{"params", "t_pass_ms", 0, 1e6, false, false},
		{"params", "t_allreduce_us", 0, 1e9, false, false},
		{"params", "ar_overlap", 0, 1, false, false},
		{"params", "compile_c0_s", 0, 1e6, false, false},
		{"params", "compile_c1_ms_per_token", 0, 1e6, false, false},
		{"params", "capture_s", 0, 1e6, false, false},
		{"params", "runtime_penalty_s", 0, 1e6, false, false},
		{"params", "fp8_compile_factor", 0, 1e3, true, false},
		{"params", "kv_link_latency_us", 0, 1e9, false, false},
	};
	for (size_t i = 0; i < sizeof ranges / sizeof *ranges && !rc; i++) {
		double x = cJSON_GetObjectItemCaseSensitive(!strcmp(ranges[i].obj, "spec") ? s : pp,
							    ranges[i].key)->valuedouble;
		if (!(ranges[i].above_min ? x > ranges[i].min : x >= ranges[i].min) ||
		    !(x <= ranges[i].max) || (ranges[i].integer && x != floor(x))) {
			char field[96];
			snprintf(field, sizeof field, "%s.%s", ranges[i].obj, ranges[i].key);
			rc = bs_errf(err, BS_EXIT_INPUT, path, 0, field, "%.17g: must be in %s%g, %g]%s "
				     "(a hardware profile as `bucketsim calibrate` writes)", x,
				     ranges[i].above_min ? "(" : "[", ranges[i].min, ranges[i].max,
				     ranges[i].integer ? " and a whole number" : "");
		}
	}
	const cJSON *vb = cJSON_GetObjectItemCaseSensitive(s, "vector_bf16_tflops");
	if (!rc && cJSON_IsNumber(vb) && !(vb->valuedouble > 0 && vb->valuedouble <= 1e6))
		rc = bs_errf(err, BS_EXIT_INPUT, path, 0, "spec.vector_bf16_tflops",
			     "%.17g: must be in (0, 1e+06], or null when not known", vb->valuedouble);
	if (rc) {
		cJSON_Delete(j);
		return NULL;
	}
	return j;
}

/* A number member; missing or not a number is a bug in the shipped profile (files are checked
 * by load_hw_file first). */
static double num(const cJSON *o, const char *key, const char *where, bool null_ok)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	if (null_ok && (!v || cJSON_IsNull(v)))
		return 0;
	if (!cJSON_IsNumber(v))
		BUG("profile %s: '%s' missing or not a number", where, key);
	return v->valuedouble;
}

int profile_load_hw(const char *name, struct hw_spec *hw, struct perf_params *p,
		    struct compile_params *c, struct bs_err *err)
{
	cJSON *owned = NULL;   /* a file's tree; an embedded one is shared */
	const cJSON *j;
	if (is_profile_path(name)) {
		if (!(j = owned = load_hw_file(name, err)))
			return -1;
	} else if (!(j = hw_embedded(name))) {
		return unknown("hardware", name, true, err);
	}
	memset(hw, 0, sizeof *hw);
	/* A file's profile is named by its base name without ".json" (the path stays in the
	 * configuration's "hardware"). */
	const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
	size_t bl = strlen(base);
	if (is_profile_path(name) && bl > 5 && !strcmp(base + bl - 5, ".json"))
		bl -= 5;
	snprintf(hw->name, sizeof hw->name, "%.*s", (int)bl, base);
	const cJSON *chip = cJSON_GetObjectItemCaseSensitive(j, "name");
	snprintf(hw->chip, sizeof hw->chip, "%s", cJSON_IsString(chip) ? chip->valuestring : hw->name);
	const cJSON *d = cJSON_GetObjectItemCaseSensitive(j, "description");
	if (cJSON_IsString(d))
		snprintf(hw->desc, sizeof hw->desc, "%s", d->valuestring);
	hw->calibrated = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "calibrated"));
	/* "device": "gpu" or "hpu"; a profile without it is a Gaudi when its chip is named so. */
	const cJSON *dev = cJSON_GetObjectItemCaseSensitive(j, "device");
	if (cJSON_IsString(dev) && strcmp(dev->valuestring, "gpu") && strcmp(dev->valuestring, "hpu")) {
		cJSON_Delete(owned);
		return bs_errf(err, BS_EXIT_INPUT, name, 0, "device",
			       "expected \"gpu\" or \"hpu\", got \"%s\"", dev->valuestring);
	}
	hw->gpu = cJSON_IsString(dev) ? !strcmp(dev->valuestring, "gpu")
				      : strncmp(hw->chip, "gaudi", 5) != 0;
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(j, "spec");
	hw->peak_bf16 = num(s, "peak_bf16_tflops", name, false) * 1e12;
	hw->peak_fp8 = num(s, "peak_fp8_tflops", name, false) * 1e12;
	hw->vector_bf16 = num(s, "vector_bf16_tflops", name, true) * 1e12;
	hw->hbm_bytes = num(s, "hbm_gib", name, false) * 1073741824.0;
	hw->hbm_bw = num(s, "hbm_tb_s", name, false) * 1e12;
	hw->scaleup_bw = num(s, "scaleup_gb_s", name, false) * 1e9;
	hw->scaleout_bw = num(s, "scaleout_gb_s", name, false) * 1e9;
	hw->scaleup_peers = (int)num(s, "scaleup_peers", name, false);
	const cJSON *pp = cJSON_GetObjectItemCaseSensitive(j, "params");
	for (int i = 0; i < PP_COUNT; i++)
		p->v[i] = num(pp, perf_param_names[i], name, false) / perf_param_json_scale[i];
	c->c0 = num(pp, "compile_c0_s", name, false);
	c->c1 = num(pp, "compile_c1_ms_per_token", name, false) * 1e-3;
	c->capture = num(pp, "capture_s", name, false);
	c->runtime = num(pp, "runtime_penalty_s", name, false);
	c->fp8_factor = num(pp, "fp8_compile_factor", name, false);
	c->kv_latency = num(pp, "kv_link_latency_us", name, false) * 1e-6;
	cJSON_Delete(owned);
	return 0;
}

static int geti(const cJSON *o, const char *key, const char *where)
{
	return (int)num(o, key, where, false);
}

/* The members of a model profile: model_ints, the two booleans, and kind, name and hf (not
 * read). */
static bool model_member_ok(const char *obj, const char *name)
{
	(void)obj;
	for (size_t i = 0; i < sizeof model_ints / sizeof *model_ints; i++)
		if (!strcmp(model_ints[i].key, name))
			return true;
	return in_list(model_keys, name);
}

/* A model profile file: an object with the members of an entry of models/data/models.json
 * ("kind": "model" optional; "name" and "hf" are not read), checked so that loading it cannot
 * meet a missing or absurd member.
 * Returns the tree (owned) or NULL with ERR filled. */
static cJSON *load_model_file(const char *path, struct bs_err *err)
{
	char *text;
	size_t len, pos = 0;
	cJSON *j = read_json_text(path, &text, &len, err); /* NUL bytes and \u0000 refused there */
	if (!j) {
		/* read_json names the file; say which key gave it. */
		snprintf(err->field, sizeof err->field, "model");
		return NULL;
	}
	const cJSON *k = cJSON_GetObjectItemCaseSensitive(j, "kind");
	if (!cJSON_IsObject(j) || (k && (!cJSON_IsString(k) || strcmp(k->valuestring, "model")))) {
		bs_errf(err, BS_EXIT_INPUT, path, 0, "kind",
			"not a model profile (an object with the members of an entry of "
			"models/data/models.json; \"kind\", when given, is \"model\")");
		cJSON_Delete(j);
		free(text);
		return NULL;
	}
	int rc = check_members(j, NULL, model_member_ok, "a model profile", path, text, &pos, err);
	free(text);
	for (size_t i = 0; i < sizeof model_ints / sizeof *model_ints && !rc; i++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, model_ints[i].key);
		if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) ||
		    v->valuedouble < model_ints[i].min || v->valuedouble > model_ints[i].max)
			rc = bs_errf(err, BS_EXIT_INPUT, path, 0, model_ints[i].key, "missing or not an "
				     "integer in [%.0f, %.0f] (a model profile as an entry of "
				     "models/data/models.json)", model_ints[i].min, model_ints[i].max);
	}
	static const char *const bools[] = {"gated_mlp", "tied_embeddings", NULL};
	for (size_t i = 0; bools[i] && !rc; i++)
		if (!cJSON_IsBool(cJSON_GetObjectItemCaseSensitive(j, bools[i])))
			rc = bs_errf(err, BS_EXIT_INPUT, path, 0, bools[i], "missing or not true/false");
	if (!rc) {
		int heads = cJSON_GetObjectItemCaseSensitive(j, "heads")->valueint;
		int kvh = cJSON_GetObjectItemCaseSensitive(j, "kv_heads")->valueint;
		int ne = cJSON_GetObjectItemCaseSensitive(j, "experts")->valueint;
		int k_e = cJSON_GetObjectItemCaseSensitive(j, "experts_per_token")->valueint;
		if (heads % kvh)
			rc = bs_errf(err, BS_EXIT_INPUT, path, 0, "kv_heads", "%d does not divide the "
				     "%d attention heads (grouped-query attention)", kvh, heads);
		else if (k_e > ne)
			rc = bs_errf(err, BS_EXIT_INPUT, path, 0, "experts_per_token", "%d is more "
				     "than the %d experts", k_e, ne);
	}
	if (rc) {
		cJSON_Delete(j);
		return NULL;
	}
	return j;
}

/* Fills M from a model entry IT (checked: embedded, or by load_model_file). */
static void model_from_json(const cJSON *it, const char *name, struct model_arch *m)
{
	memset(m, 0, sizeof *m);
	snprintf(m->name, sizeof m->name, "%.31s", name);
	m->layers = geti(it, "layers", name);
	m->hidden = geti(it, "hidden", name);
	m->heads = geti(it, "heads", name);
	m->kv_heads = geti(it, "kv_heads", name);
	m->head_dim = geti(it, "head_dim", name);
	m->ffn = geti(it, "ffn", name);
	m->vocab = geti(it, "vocab", name);
	m->experts = geti(it, "experts", name);
	m->experts_per_token = geti(it, "experts_per_token", name);
	m->max_context = geti(it, "max_context", name);
	m->learned_positions = geti(it, "learned_positions", name);
	m->gated_mlp = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(it, "gated_mlp"));
	m->tied_embeddings = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(it, "tied_embeddings"));
}

int profile_load_model(const char *name, struct model_arch *m, struct bs_err *err)
{
	if (is_profile_path(name)) {
		cJSON *j = load_model_file(name, err);
		if (!j)
			return -1;
		/* Named as a hardware file is: its base name without ".json". */
		const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
		size_t bl = strlen(base);
		if (bl > 5 && !strcmp(base + bl - 5, ".json"))
			bl -= 5;
		char nm[32];
		snprintf(nm, sizeof nm, "%.*s", (int)(bl < 31 ? bl : 31), base);
		model_from_json(j, nm, m);
		cJSON_Delete(j);
		return 0;
	}
	const cJSON *j = embedded_json("models/data/models.json");
	const cJSON *mm = cJSON_GetObjectItemCaseSensitive(j, "models"), *it;
	cJSON_ArrayForEach(it, mm) {
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(it, "name");
		if (!cJSON_IsString(n) || strcmp(n->valuestring, name))
			continue;
		model_from_json(it, name, m);
		return 0;
	}
	return unknown("model", name, false, err);
}
