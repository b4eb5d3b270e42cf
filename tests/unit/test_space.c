/* test_space.c - loading space files (good and bad) and the config text form.
 *
 * Every file in tests/spaces/bad/ must be refused with FT_EINPUT and a message
 * "FILE:LINE: key 'KEY': ..." naming the right line and key; the table below
 * says which, and the test also fails if a bad file is added without a row.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "space/space.h"

static char srcdir[FT_PATH_MAX];

/* $FATUNE_SOURCE_DIR/rel */
static const char *src(const char *rel, char *buf, size_t size)
{
	snprintf(buf, size, "%s/%s", srcdir, rel);
	return buf;
}

/* A scratch directory holding an empty template k.cu; write() puts files there. */
struct scratch {
	char dir[64];
	char path[128];
};

static void scratch_open(struct scratch *s)
{
	FILE *f;

	strcpy(s->dir, "/tmp/fatune-space-XXXXXX");
	assert_non_null(mkdtemp(s->dir));
	snprintf(s->path, sizeof(s->path), "%s/k.cu", s->dir);
	f = fopen(s->path, "w");
	assert_non_null(f);
	fputs("/* empty */\n", f);
	assert_int_equal(fclose(f), 0);
}

static const char *scratch_write(struct scratch *s, const char *name, const char *text)
{
	FILE *f;

	snprintf(s->path, sizeof(s->path), "%s/%s", s->dir, name);
	f = fopen(s->path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
	assert_int_equal(fclose(f), 0);
	return s->path;
}

static void scratch_close(struct scratch *s)
{
	char cmd[96];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", s->dir);
	assert_int_equal(system(cmd), 0);
}

/* ---- good files --------------------------------------------------------------- */

static void test_minimal(void **state)
{
	static struct ft_space sp;
	struct ft_err err = { 0 };
	char path[FT_PATH_MAX], want[FT_PATH_MAX], hex[17];
	FILE *f;
	char *buf = malloc(1 << 16);
	size_t n;

	(void)state;
	src("tests/spaces/good_minimal.yaml", path, sizeof(path));
	if (ft_space_load(&sp, path, &err))
		fail_msg("%s", err.msg);
	assert_string_equal(sp.path, path);
	assert_string_equal(sp.name, "minimal");
	src("tests/spaces/../kernels/static_smem.cu", want, sizeof(want));
	assert_string_equal(sp.template_path, want);
	assert_string_equal(sp.template_name, "static_smem");
	assert_string_equal(sp.kernel, "fatune_static_smem_fwd");
	assert_string_equal(sp.combine_kernel, "");
	assert_int_equal(sp.smem_kind, FT_SMEM_STATIC);
	assert_int_equal(sp.nparams, 1);
	assert_string_equal(sp.params[0].name, "TILE_M");
	assert_int_equal(sp.params[0].kind, FT_PARAM_COMPILE);
	assert_int_equal(sp.params[0].nvalues, 2);
	assert_int_equal(sp.params[0].values[0], 16);
	assert_int_equal(sp.params[0].values[1], 32);
	assert_int_equal(sp.params[0].line, 9);
	assert_int_equal(sp.nconstraints, 0);
	assert_string_equal(sp.smem.text, "0");
	assert_string_equal(sp.smem.key, "smem_bytes");
	assert_int_equal(sp.smem.line, 10);
	assert_string_equal(sp.threads.text, "128");
	/* the flow list splits ceil_div(S, TILE_M) at its comma: joined back */
	assert_string_equal(sp.grid[0].text, "ceil_div(S, TILE_M)");
	assert_string_equal(sp.grid[0].key, "launch.grid[0]");
	assert_int_equal(sp.grid[0].line, 13);
	assert_string_equal(sp.grid[1].text, "H");
	assert_string_equal(sp.grid[2].text, "B");
	assert_string_equal(sp.combine_threads.text, "");
	/* hash: xxh64, seed 0, of the file's bytes */
	f = fopen(path, "rb");
	assert_non_null(f);
	n = fread(buf, 1, 1 << 16, f);
	fclose(f);
	assert_true(n > 0);
	assert_true(sp.hash == XXH64(buf, n, 0));
	snprintf(hex, sizeof(hex), "%016llx", (unsigned long long)XXH64(buf, n, 0));
	assert_string_equal(sp.hash_hex, hex);
	free(buf);
}

static void test_static_smem(void **state)
{
	static struct ft_space sp;
	struct ft_err err = { 0 };
	char path[FT_PATH_MAX];

	(void)state;
	if (ft_space_load(&sp, src("tests/spaces/static_smem.yaml", path, sizeof(path)), &err))
		fail_msg("%s", err.msg);
	assert_int_equal(sp.nparams, 3);
	assert_int_equal(ft_space_param(&sp, "NUM_WARPS_PER_BLOCK"), 0);
	assert_int_equal(ft_space_param(&sp, "TILE_M"), 1);
	assert_int_equal(ft_space_param(&sp, "KEYS_PER_WARP"), 2);
	assert_int_equal(ft_space_param(&sp, "tile_m"), -1);
	assert_int_equal(ft_space_param(&sp, "NOPE"), -1);
	assert_int_equal(sp.params[0].nvalues, 3);
	assert_int_equal(sp.params[0].values[2], 12);
	assert_int_equal(sp.nconstraints, 2);
	assert_string_equal(sp.constraints[0].name, "lanes_split_head_dim");
	assert_string_equal(sp.constraints[0].expr.text, "D % 32 == 0");
	assert_string_equal(sp.constraints[0].expr.key, "constraints.lanes_split_head_dim");
}

/* Every key of the format, in the forms the README documents. */
static void test_full_format(void **state)
{
	static struct ft_space sp;
	struct ft_err err = { 0 };
	struct scratch s;
	const char *path;

	(void)state;
	scratch_open(&s);
	path = scratch_write(&s, "full.yaml",
			     "fatune_space: 1\n"
			     "name: full-format_1\n"
			     "description: free text, ignored [really]\n"
			     "template:\n"
			     "  file: k.cu\n"
			     "  kernel: fatune_attention_fwd\n"
			     "  combine_kernel: fatune_attention_combine\n"
			     "  shared_memory: dynamic\n"
			     "parameters:\n"
			     "  NUM_WARPS_PER_BLOCK: [4, 8]\n"
			     "  TILE_M: {values: [64, 128], kind: compile}\n"
			     "  KV_STAGES: {range: [1, 3]}\n"
			     "  TILE_N: {range: [32, 128, 32]}\n"
			     "  NEG: [-2, 0]\n"
			     "  NUM_SPLITS: {values: [1, 2, 4], kind: launch}\n"
			     "constraints:\n"
			     "  warps_split_rows: TILE_M % (NUM_WARPS_PER_BLOCK * 16) == 0\n"
			     "  splits_have_work: NUM_SPLITS == 1 OR ceil_div(S, TILE_N) >= NUM_SPLITS\n"
			     "  quoted: \"TILE_M >= 64\"\n"
			     "smem_bytes: DTYPE_BYTES * D * (TILE_M + 2 * TILE_N * KV_STAGES)\n"
			     "launch:\n"
			     "  threads: NUM_WARPS_PER_BLOCK * 32\n"
			     "  grid: [ceil_div(S, TILE_M) * NUM_SPLITS, H, B]\n"
			     "  combine_threads: 128\n"
			     "  combine_grid: [ceil_div(S, 128), min(H, max(1, 2)), B]\n");
	if (ft_space_load(&sp, path, &err))
		fail_msg("%s", err.msg);
	assert_string_equal(sp.name, "full-format_1");
	assert_string_equal(sp.template_name, "k");
	assert_string_equal(sp.combine_kernel, "fatune_attention_combine");
	assert_int_equal(sp.smem_kind, FT_SMEM_DYNAMIC);
	assert_int_equal(sp.nparams, 6);
	assert_int_equal(sp.params[1].kind, FT_PARAM_COMPILE);
	assert_int_equal(sp.params[2].nvalues, 3);	/* range [1, 3] */
	assert_int_equal(sp.params[2].values[0], 1);
	assert_int_equal(sp.params[2].values[2], 3);
	assert_int_equal(sp.params[3].nvalues, 4);	/* 32, 64, 96, 128 */
	assert_int_equal(sp.params[3].values[3], 128);
	assert_int_equal(sp.params[4].values[0], -2);
	assert_int_equal(sp.params[5].kind, FT_PARAM_LAUNCH);
	assert_int_equal(sp.params[5].line, 15);
	assert_int_equal(sp.nconstraints, 3);
	assert_string_equal(sp.constraints[1].expr.text,
			    "NUM_SPLITS == 1 OR ceil_div(S, TILE_N) >= NUM_SPLITS");
	assert_int_equal(sp.constraints[1].expr.line, 18);
	assert_string_equal(sp.constraints[2].expr.text, "TILE_M >= 64");
	assert_string_equal(sp.grid[0].text, "ceil_div(S, TILE_M) * NUM_SPLITS");
	assert_string_equal(sp.combine_threads.text, "128");
	assert_string_equal(sp.combine_grid[1].text, "min(H, max(1, 2))");
	assert_string_equal(sp.combine_grid[2].key, "launch.combine_grid[2]");
	scratch_close(&s);
}

/* workspace.init: each of the four modes, zero by default */
static void test_workspace_init(void **state)
{
	static struct ft_space sp;
	static const struct {
		const char *init;
		enum ft_workspace_init want;
	} cases[] = {
		{ "", FT_WS_ZERO },	       { "zero", FT_WS_ZERO }, { "poison", FT_WS_POISON },
		{ "none", FT_WS_NONE },      { "zero_once", FT_WS_ZERO_ONCE },
	};
	struct ft_err err = { 0 };
	struct scratch s;
	char body[1024];

	(void)state;
	scratch_open(&s);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(body, sizeof(body),
			 "fatune_space: 1\nname: ws\n"
			 "template: {file: k.cu, kernel: k, combine_kernel: c, shared_memory: dynamic, abi: 2}\n"
			 "parameters:\n  NUM_SPLITS: {values: [1, 2], kind: launch}\n  IN_KERNEL: [0, 1]\n"
			 "smem_bytes: 0\n"
			 "workspace:\n  bytes: iif(IN_KERNEL == 1, 4 * H * B, 0)\n%s%s%s"
			 "launch:\n  threads: 32\n  grid: [NUM_SPLITS, H, B]\n"
			 "  combine_threads: iif(IN_KERNEL == 1, 0, 128)\n  combine_grid: [1, H, B]\n"
			 "  combine_pdl: 1 - IN_KERNEL\n",
			 cases[i].init[0] ? "  init: " : "", cases[i].init, cases[i].init[0] ? "\n" : "");
		if (ft_space_load(&sp, scratch_write(&s, "ws.yaml", body), &err))
			fail_msg("case %zu: %s", i, err.msg);
		assert_int_equal(sp.workspace_init, cases[i].want);
		assert_string_equal(sp.workspace.text, "iif(IN_KERNEL == 1, 4 * H * B, 0)");
		assert_string_equal(sp.combine_threads.text, "iif(IN_KERNEL == 1, 0, 128)");
		assert_string_equal(sp.combine_pdl.text, "1 - IN_KERNEL");
	}
	scratch_close(&s);
}

/* applies_to: the shapes a space is searched for (a search scope; the
 * constraints still decide validity, so export and check are unchanged) */
static void test_applies_to(void **state)
{
	static struct ft_space sp;
	struct ft_err err = { 0 };
	struct scratch s;
	char why[512];
	const struct ft_arch *arch = ft_arch_find("sm_90", NULL);
	struct ft_shape decode = { 2, 32, 1, 128, 0, FT_FP16, 4096, 8, FT_LAYOUT_BHSD };
	struct ft_shape prefill = { 1, 8, 512, 64, 0, FT_FP16, 512, 8, FT_LAYOUT_BHSD };
	static const char body[] = "fatune_space: 1\nname: dec\n"
				   "template: {file: k.cu, kernel: k, shared_memory: dynamic, abi: 2}\n"
				   "parameters:\n  W: [1, 2]\n"
				   "applies_to: S * H / H_KV <= 16 AND CC >= 80\n"
				   "smem_bytes: 0\nlaunch:\n  threads: 32 * W\n  grid: [1, H, B]\n";

	(void)state;
	scratch_open(&s);
	if (ft_space_load(&sp, scratch_write(&s, "dec.yaml", body), &err))
		fail_msg("%s", err.msg);
	assert_string_equal(sp.applies_to.text, "S * H / H_KV <= 16 AND CC >= 80");
	assert_int_equal(sp.applies_to.line, 6);
	assert_int_equal(ft_space_applies(&sp, &decode, arch, &err), 1);
	assert_int_equal(ft_space_applies(&sp, &prefill, arch, &err), 0);
	assert_null(ft_space_unsearched(&sp, arch, &decode, why, sizeof(why)));
	assert_non_null(ft_space_unsearched(&sp, arch, &prefill, why, sizeof(why)));
	assert_non_null(strstr(why, "searched only for shapes where S * H / H_KV <= 16 AND CC >= 80 (applies_to, line 6)"));
	/* not a validity rule: the space can run the prefill shape */
	assert_null(ft_space_unfit(&sp, arch, &prefill, why, sizeof(why)));
	/* one that cannot be evaluated there is not searched, and says why */
	if (ft_space_load(&sp, scratch_write(&s, "zero.yaml", "fatune_space: 1\nname: zero\n"
				   "template: {file: k.cu, kernel: k, shared_memory: dynamic, abi: 2}\n"
				   "parameters:\n  W: [1, 2]\napplies_to: S / (S_KV - S_KV)\n"
				   "smem_bytes: 0\nlaunch:\n  threads: 32 * W\n  grid: [1, H, B]\n"), &err))
		fail_msg("%s", err.msg);
	assert_int_equal(ft_space_applies(&sp, &prefill, arch, &err), -1);
	assert_int_equal(err.status, FT_EINPUT);
	assert_non_null(strstr(err.msg, "key 'applies_to'"));
	assert_non_null(ft_space_unsearched(&sp, arch, &prefill, why, sizeof(why)));
	assert_non_null(strstr(why, "applies_to"));
	/* a space without one is searched for every shape */
	if (ft_space_load(&sp, src("tests/spaces/good_minimal.yaml", why, sizeof(why)), &err))
		fail_msg("%s", err.msg);
	assert_int_equal(ft_space_applies(&sp, &prefill, arch, &err), 1);
	scratch_close(&s);
}

/* ---- bad files --------------------------------------------------------------- */

struct bad {
	const char *file;	/* in tests/spaces/bad/ */
	int line;
	const char *key;
	const char *phrase;	/* part of what is wrong */
	int at_open;		/* loads, but ft_enum_open refuses it */
};

static const struct bad bad_files[] = {
	{ "applies_to_parameter.yaml", 10, "applies_to", "'TILE_M' is not a name of the shape", 0 },
	{ "bad_expression.yaml", 13, "constraints.warps_fit", "bad expression 'TILE_M ==': the expression is incomplete", 1 },
	{ "bad_kind.yaml", 10, "parameters.NUM_SPLITS.kind", "'runtime' is neither compile", 0 },
	{ "bad_param_name.yaml", 10, "parameters.2STAGES", "not a C identifier", 0 },
	{ "bad_shared_memory.yaml", 7, "template.shared_memory", "'global' is neither static", 0 },
	{ "bad_version.yaml", 2, "fatune_space", "version 2 is not supported", 0 },
	{ "combine_no_kernel.yaml", 14, "launch.combine_threads", "no template.combine_kernel", 0 },
	{ "combine_no_launch.yaml", 12, "launch.combine_threads", "combine_kernel is set", 0 },
	{ "derive_cycle.yaml", 11, "derive.ROWS_M", "'WARPS_X' is derived after this entry", 0 },
	{ "derive_self.yaml", 11, "derive.TILE_M", "'TILE_M' is derived by this very entry", 0 },
	{ "derive_unknown_name.yaml", 11, "derive.ROWS_M", "unknown name 'WARPS'", 0 },
	{ "duplicate_key.yaml", 8, "name", "duplicate key (first at line 3)", 0 },
	{ "duplicate_param.yaml", 11, "parameters.TILE_M", "duplicate parameter", 0 },
	{ "empty.yaml", 1, "(top level)", "the file is empty", 0 },
	{ "empty_values.yaml", 10, "parameters.KV_STAGES.values", "empty value list", 0 },
	{ "forbidden_function.yaml", 13, "launch.grid[2]", "function 'random' is not allowed", 1 },
	{ "grid_two_items.yaml", 13, "launch.grid", "has 2 items", 0 },
	{ "malformed_yaml.yaml", 10, "parameters.TILE_M", "malformed YAML: did not find expected ',' or ']'", 0 },
	{ "missing_kernel.yaml", 4, "template.kernel", "missing required key", 0 },
	{ "missing_smem.yaml", 2, "smem_bytes", "missing required key", 0 },
	{ "missing_template.yaml", 5, "template.file", "/tests/spaces/bad/../../kernels/no_such_kernel.cu' cannot be read", 0 },
	{ "non_integer.yaml", 10, "parameters.TILE_M", "non-integer value '32.5'", 0 },
	{ "not_a_mapping.yaml", 2, "(top level)", "is a list, not a mapping", 0 },
	{ "pdl_no_combine.yaml", 14, "launch.combine_pdl", "no template.combine_kernel", 0 },
	{ "reserved_name.yaml", 10, "parameters.head_dim", "macro fatune passes", 0 },
	{ "sql_injection.yaml", 11, "constraints.evil", "no matching '('", 0 },
	{ "tab_indent.yaml", 5, "template", "malformed YAML", 0 },
	{ "too_many_params.yaml", 25, "parameters.P16", "too many parameters", 0 },
	{ "too_many_values.yaml", 10, "parameters.UNROLL.range", "too many values (100)", 0 },
	{ "two_documents.yaml", 14, "(top level)", "second YAML document", 0 },
	{ "unknown_key.yaml", 13, "launch.block", "unknown key: the keys allowed here are threads, grid, combine_threads, combine_grid", 0 },
	{ "unknown_name.yaml", 10, "smem_bytes", "unknown name 'TILE_N'", 1 },
	{ "wrong_type.yaml", 4, "template", "expected a mapping", 0 },
};

#define NBAD ((int)(sizeof(bad_files) / sizeof(bad_files[0])))

static void check_bad(const struct bad *b)
{
	static struct ft_space sp;
	struct ft_err err = { 0 };
	char path[FT_PATH_MAX], want[FT_PATH_MAX + 128];
	struct ft_shape shape = { 1, 8, 512, 64, 0, FT_FP16, 512, 8, FT_LAYOUT_BHSD };
	const struct ft_arch *arch = ft_arch_find("sm_89", NULL);
	struct ft_enum *e = NULL;
	int rc;

	snprintf(path, sizeof(path), "%s/tests/spaces/bad/%s", srcdir, b->file);
	rc = ft_space_load(&sp, path, &err);
	if (b->at_open) {
		if (rc)
			fail_msg("%s should load (its problem shows at open): %s", b->file, err.msg);
		rc = ft_enum_open(&e, &sp, &shape, arch, NULL, &err);
		ft_enum_close(e);
	}
	if (rc != -1)
		fail_msg("%s was accepted", b->file);
	assert_int_equal(err.status, FT_EINPUT);
	snprintf(want, sizeof(want), "%s:%d: key '%s': ", path, b->line, b->key);
	if (strncmp(err.msg, want, strlen(want)))
		fail_msg("%s: message '%s' does not start with '%s'", b->file, err.msg, want);
	if (!strstr(err.msg, b->phrase))
		fail_msg("%s: message '%s' lacks '%s'", b->file, err.msg, b->phrase);
	assert_null(strchr(err.msg, '\n'));
}

static void test_bad_files(void **state)
{
	char dir[FT_PATH_MAX];
	struct dirent *de;
	DIR *d;
	int seen = 0;

	(void)state;
	for (int i = 0; i < NBAD; i++)
		check_bad(&bad_files[i]);
	/* every file in the directory has a row */
	d = opendir(src("tests/spaces/bad", dir, sizeof(dir)));
	assert_non_null(d);
	while ((de = readdir(d))) {
		int found = 0;
		if (de->d_name[0] == '.')
			continue;
		for (int i = 0; i < NBAD; i++)
			found |= !strcmp(bad_files[i].file, de->d_name);
		if (!found)
			fail_msg("tests/spaces/bad/%s has no row in test_space.c", de->d_name);
		seen++;
	}
	closedir(d);
	assert_int_equal(seen, NBAD);
}

/* Problems that need a generated file. */
static void test_bad_generated(void **state)
{
	static struct ft_space sp;
	static const struct {
		const char *body;
		int line;
		const char *key;
		const char *phrase;
	} cases[] = {
		{ "", 1, "(top level)", "empty" },
		{ "just text\n", 1, "(top level)", "a scalar, not a mapping" },
		{ "fatune_space: 1\nname: a b\n", 2, "name", "letters, digits" },
		{ "fatune_space: \"1\"\n", 1, "fatune_space", "without quotes" },
		{ "fatune_space: 1\nparameters: {}\n", 2, "parameters", "no parameters" },
		{ "fatune_space: 1\nparameters:\n  X: 5\n", 3, "parameters.X", "expected a list" },
		{ "fatune_space: 1\nparameters:\n  X: [1, 1]\n", 3, "parameters.X", "listed twice" },
		{ "fatune_space: 1\nparameters:\n  X: {range: [3, 1]}\n", 3, "parameters.X.range", "above" },
		{ "fatune_space: 1\nparameters:\n  X: {range: [1, 3, 0]}\n", 3, "parameters.X.range", "step" },
		{ "fatune_space: 1\nparameters:\n  X: {range: [1, 3], values: [1]}\n", 3, "parameters.X.values", "only one" },
		{ "fatune_space: 1\nparameters:\n  X: {kind: launch}\n", 3, "parameters.X", "missing values" },
		{ "fatune_space: 1\nparameters:\n  X: {values: [1], step: 2}\n", 3, "parameters.X.step", "unknown key" },
		{ "fatune_space: 1\nparameters:\n  X: {values: [1], kind: launch}\n", 3, "parameters.X", "only NUM_SPLITS" },
		{ "fatune_space: 1\nparameters:\n  X: [1]\n  x: [2]\n", 4, "parameters.x", "ignore case" },
		{ "fatune_space: 1\nparameters:\n  CASE: [1]\n", 3, "parameters.CASE", "SQL keyword" },
		{ "fatune_space: 1\nparameters:\n  S: [1]\n", 3, "parameters.S", "reserved" },
		{ "fatune_space: 1\nparameters:\n  FATUNE_SMEM_BYTES: [1]\n", 3, "parameters.FATUNE_SMEM_BYTES", "reserved" },
		{ "fatune_space: 1\nparameters:\n  X: [9223372036854775808]\n", 3, "parameters.X", "non-integer" },
		{ "fatune_space: 1\nconstraints:\n  ok: 1\n  ok: 2\n", 4, "constraints.ok", "duplicate" },
		{ "fatune_space: 1\nconstraints:\n  bad name: 1\n", 3, "constraints.bad name", "letters" },
		{ "fatune_space: 1\nconstraints:\n  e: \"\"\n", 3, "constraints.e", "empty" },
		{ "fatune_space: 1\nworkspace:\n  init: once\n", 3, "workspace.init", "zero_once (zeroed before the first call" },
		{ "fatune_space: 1\nsmem_bytes: [1, 2]\n", 2, "smem_bytes", "expected an expression" },
		{ "fatune_space: 1\nsmem_bytes: 'x' == 1\n", 2, "smem_bytes", "malformed YAML" },
		{ "fatune_space: 1\nsmem_bytes: \"S -- 1\"\n", 2, "smem_bytes", "comment" },
		{ "fatune_space: 1\nlaunch:\n  grid: [(S, H, B]\n", 3, "launch.grid[0]", "not closed" },
		{ "fatune_space: 1\nlaunch:\n  grid: [S, H, B, 1]\n", 3, "launch.grid", "more than 3" },
		{ "fatune_space: 1\ntemplate:\n  file: .\n", 3, "template.file", "cannot be read" },
		{ "fatune_space: 1\ntemplate:\n  kernel: my-kernel\n", 3, "template.kernel", "C identifier" },
		{ "fatune_space: 1\nname: a\n", 1, "template", "missing required key" },
		{ "fatune_space: 1\n---\nname: a\n", 2, "(top level)", "second YAML document" },
		{ "- [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n", 1, "(top level)", "nested more than 32 levels" },
		{ "- [[[[[[[[[[]]]]]]]]]]\n", 1, "(top level)", "a list, not a mapping" },
	};
	struct ft_err err = { 0 };
	struct scratch s;

	(void)state;
	scratch_open(&s);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *path = scratch_write(&s, "g.yaml", cases[i].body);
		char want[256];
		if (ft_space_load(&sp, path, &err) != -1)
			fail_msg("case %zu was accepted", i);
		assert_int_equal(err.status, FT_EINPUT);
		snprintf(want, sizeof(want), "%s:%d: key '%s': ", path, cases[i].line, cases[i].key);
		if (strncmp(err.msg, want, strlen(want)) || !strstr(err.msg, cases[i].phrase))
			fail_msg("case %zu: '%s' is not '%s...%s...'", i, err.msg, want, cases[i].phrase);
	}
	scratch_close(&s);
}

static void test_file_problems(void **state)
{
	static struct ft_space sp;
	struct ft_err err = { 0 };
	struct scratch s;
	char *big;
	const char *path;
	size_t n = (1 << 20) + 1;

	(void)state;
	scratch_open(&s);
	assert_int_equal(ft_space_load(&sp, "/nonexistent/space.yaml", &err), -1);
	assert_int_equal(err.status, FT_EINPUT);
	assert_non_null(strstr(err.msg, "/nonexistent/space.yaml"));
	assert_int_equal(ft_space_load(&sp, s.dir, &err), -1);	/* a directory */
	assert_int_equal(err.status, FT_EINPUT);
	/* over 1 MiB: refused before parsing (a comment, so it would parse) */
	big = malloc(n + 1);
	assert_non_null(big);
	memset(big, ' ', n);
	big[0] = '#';
	big[n] = '\0';
	path = scratch_write(&s, "big.yaml", big);
	assert_int_equal(ft_space_load(&sp, path, &err), -1);
	assert_non_null(strstr(err.msg, "1 MiB"));
	/* 1 MiB of '[': libyaml's problem, not a crash */
	memset(big, '[', n - 2);
	big[n - 2] = '\0';
	path = scratch_write(&s, "deep.yaml", big);
	assert_int_equal(ft_space_load(&sp, path, &err), -1);
	assert_int_equal(err.status, FT_EINPUT);
	free(big);
	scratch_close(&s);
}

/* ---- configs ------------------------------------------------------------------- */

static void test_config(void **state)
{
	static struct ft_space sp;
	struct ft_err err = { 0 };
	char path[FT_PATH_MAX], buf[FT_CONFIG_MAX];
	long long v[FT_MAX_PARAMS], back[FT_MAX_PARAMS];
	static const struct {
		const char *text;
		const char *phrase;
	} bad[] = {
		{ "", "'NUM_WARPS_PER_BLOCK' is missing" },
		{ "NUM_WARPS_PER_BLOCK=4,TILE_M=16", "'KEYS_PER_WARP' is missing" },
		{ "NUM_WARPS_PER_BLOCK=4,TILE_M=16,KEYS_PER_WARP=8,X=1", "unknown parameter 'X'" },
		{ "NUM_WARPS_PER_BLOCK=4,TILE_M=16,TILE_M=32,KEYS_PER_WARP=8", "'TILE_M' is given twice" },
		{ "NUM_WARPS_PER_BLOCK=4,TILE_M=17,KEYS_PER_WARP=8", "TILE_M=17 is not in the space: 'TILE_M' takes 16, 32, 64, 128" },
		{ "NUM_WARPS_PER_BLOCK=four,TILE_M=16,KEYS_PER_WARP=8", "'four' of 'NUM_WARPS_PER_BLOCK' is not an integer: use one of 4, 8, 12" },
		{ "NUM_WARPS_PER_BLOCK=,TILE_M=16,KEYS_PER_WARP=8", "is not an integer" },
		{ "NUM_WARPS_PER_BLOCK,TILE_M=16,KEYS_PER_WARP=8", "not NAME=VALUE" },
		{ "=4,TILE_M=16,KEYS_PER_WARP=8", "no parameter name" },
	};

	(void)state;
	if (ft_space_load(&sp, src("tests/spaces/static_smem.yaml", path, sizeof(path)), &err))
		fail_msg("%s", err.msg);
	/* every config of the space round-trips */
	for (int a = 0; a < sp.params[0].nvalues; a++)
		for (int b = 0; b < sp.params[1].nvalues; b++)
			for (int c = 0; c < sp.params[2].nvalues; c++) {
				v[0] = sp.params[0].values[a];
				v[1] = sp.params[1].values[b];
				v[2] = sp.params[2].values[c];
				ft_config_format(&sp, v, buf, sizeof(buf));
				memset(back, 0, sizeof(back));
				assert_int_equal(ft_config_parse(&sp, buf, back, &err), 0);
				assert_memory_equal(v, back, 3 * sizeof(v[0]));
			}
	v[0] = 12;
	v[1] = 128;
	v[2] = 16;
	assert_string_equal(ft_config_format(&sp, v, buf, sizeof(buf)),
			    "NUM_WARPS_PER_BLOCK=12,TILE_M=128,KEYS_PER_WARP=16");
	/* any order, blanks around tokens */
	memset(back, 0, sizeof(back));
	assert_int_equal(ft_config_parse(&sp, " KEYS_PER_WARP = 8 ,TILE_M=32, NUM_WARPS_PER_BLOCK=8",
					 back, &err),
			 0);
	assert_int_equal(back[0], 8);
	assert_int_equal(back[1], 32);
	assert_int_equal(back[2], 8);
	/* a small buffer is cut, never overrun */
	assert_string_equal(ft_config_format(&sp, v, buf, 8), "NUM_WAR");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err.status = FT_OK;
		if (ft_config_parse(&sp, bad[i].text, back, &err) != -1)
			fail_msg("config '%s' was accepted", bad[i].text);
		assert_int_equal(err.status, FT_EINPUT);
		if (!strstr(err.msg, bad[i].phrase))
			fail_msg("config '%s': '%s' lacks '%s'", bad[i].text, err.msg, bad[i].phrase);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_minimal),	      cmocka_unit_test(test_static_smem),
		cmocka_unit_test(test_full_format),   cmocka_unit_test(test_workspace_init),
		cmocka_unit_test(test_bad_files),
		cmocka_unit_test(test_bad_generated), cmocka_unit_test(test_file_problems),
		cmocka_unit_test(test_config),
		cmocka_unit_test(test_applies_to),
	};
	const char *dir = getenv("FATUNE_SOURCE_DIR");

	if (!dir) {
		fprintf(stderr, "test_space: set FATUNE_SOURCE_DIR to the repository root\n");
		return 1;
	}
	snprintf(srcdir, sizeof(srcdir), "%s", dir);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
