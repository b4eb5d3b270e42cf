/* fuzz.c - the temporary tree and helpers behind fuzz.h (not a target: targets are fuzz_<name>.c). */
#include "fuzz.h"

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

static void cleanup(void)
{
	char p[512];

	snprintf(p, sizeof(p), "%s/in", tree);
	/* the inputs' files: names the targets use */
	{
		static const char *const names[] = { "space.yaml", "campaign.yaml", "fuzz.db" };
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			char f[600];
			snprintf(f, sizeof(f), "%s/%s", p, names[i]);
			fz_remove_db(f);
		}
	}
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

	make_tree();
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
