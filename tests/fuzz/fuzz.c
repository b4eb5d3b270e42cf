/* fuzz.c - the temporary tree and helpers behind fuzz.h (not a target: targets are fuzz_<name>.c). */
#include "fuzz.h"

#include "db/db.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef FATUNE_SOURCE_DIR
#error "FATUNE_SOURCE_DIR must name the source tree (CMake defines it)"
#endif

/* sibling name in the tree -> source-tree directory it links to */
static const char *const links[][2] = {
	{ "kernel_templates", "kernel_templates" }, { "search_spaces", "search_spaces" },
	{ "spaces", "tests/spaces" },		     { "kernels", "tests/kernels" },
	{ "campaigns", "tests/campaigns" },
};

static char tree[64];

/* the names fz_file wrote into <tree>/in, removed at exit */
#define MAX_NAMES 8
static char names[MAX_NAMES][64];
static int nnames;

static void cleanup(void)
{
	char p[512];

	for (int i = 0; i < nnames; i++) {
		snprintf(p, sizeof(p), "%s/in/%s", tree, names[i]);
		fz_remove_db(p);
	}
	snprintf(p, sizeof(p), "%s/in", tree);
	rmdir(p);
	for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", tree, links[i][0]);
		unlink(p);
	}
	rmdir(tree);
}

static void make_tree(void)
{
	char p[512];

	if (tree[0])
		return;
	snprintf(tree, sizeof(tree), "/tmp/fatune-fuzz.XXXXXX");
	if (!mkdtemp(tree))
		abort();
	atexit(cleanup);
	snprintf(p, sizeof(p), "%s/in", tree);
	if (mkdir(p, 0700))
		abort();
	for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", tree, links[i][0]);
		if (symlink(fz_src(links[i][1]), p))
			abort();
	}
}

const char *fz_src(const char *rel)
{
	static char path[1024];

	snprintf(path, sizeof(path), "%s/%s", FATUNE_SOURCE_DIR, rel);
	return path;
}

const char *fz_file(const uint8_t *data, size_t size, const char *name)
{
	static char path[600];
	FILE *f;
	int i;

	make_tree();
	for (i = 0; i < nnames && strcmp(names[i], name); i++)
		;
	if (i == nnames) {
		if (nnames == MAX_NAMES || strlen(name) >= sizeof(names[0]))
			abort();
		strcpy(names[nnames++], name);
	}
	snprintf(path, sizeof(path), "%s/in/%s", tree, name);
	f = fopen(path, "wb");
	if (!f || fwrite(data, 1, size, f) != size || fclose(f))
		abort();
	return path;
}

char *fz_string(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

void fz_remove_db(const char *path)
{
	static const char *const suffix[] = { "", "-wal", "-shm", "-journal" };
	char p[700];

	for (size_t i = 0; i < sizeof(suffix) / sizeof(suffix[0]); i++) {
		snprintf(p, sizeof(p), "%s%s", path, suffix[i]);
		unlink(p);
	}
}

void fz_fail(const char *file, int line, const struct ft_err *err)
{
	fprintf(stderr, "fuzz: %s:%d: property broken (%s)\n", file, line,
		err && err->msg[0] ? err->msg : "no message");
	abort();
}

int fz_unchanged(const char *path, const uint8_t *data, size_t size)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = malloc(size + 1);
	size_t n;
	int same;

	if (!f || !buf)
		FZ_FAIL(NULL);
	n = fread(buf, 1, size + 1, f);
	fclose(f);
	same = n == size && (size == 0 || !memcmp(buf, data, size));
	free(buf);
	return same;
}

int fz_count_row(void *ctx, int ncols, const char *const *cols, const char *const *values,
		 const int *types)
{
	(void)cols;
	(void)values;
	(void)types;
	*(long long *)ctx += ncols > 0;
	return 0;
}

int fz_write_run(struct ft_db *db, struct ft_err *err)
{
	struct ft_run run = { .fatune_version = "0", .arch = "sm_90", .device = "", .nvrtc_version = "13.0",
			      .driver_version = "", .template_name = "t", .template_hash = "0",
			      .space_name = "s", .family = "mma", .abi = 2, .space_path = "s.yaml",
			      .space_hash = "0", .search_key = "k", .mode = "feasibility",
			      .strategy = "exhaustive", .seed = 1, .budget = -1, .timing = "warm" };
	struct ft_trial t;
	long long run_id = 0;
	int put, done;

	ft_trial_init(&t);
	strcpy(t.config, "A=1");
	t.status = FT_ST_COMPILED;
	run.shape = (struct ft_shape){ 1, 8, 256, 64, 0, FT_FP16, 256, 8, FT_LAYOUT_BHSD };
	if (ft_db_run_begin(db, &run, &run_id, err))
		return -1;
	put = ft_db_trials_put(db, run_id, "k", &t, 1, err);
	done = ft_db_run_finish(db, run_id, "done", 1.0, err);
	return put || done ? -1 : 0;
}
