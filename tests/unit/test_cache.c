/* test_cache.c - the CUBIN cache (cache.c): template hashes that follow local
 * headers, compile keys, store/lookup round trips, stats, clear, and the
 * cache directory.
 *
 * Every test runs with FATUNE_CACHE_DIR set to a fresh mkdtemp directory, and
 * writes its templates there too, so nothing outside it is touched.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define XXH_INLINE_ALL
#include <xxhash.h>
#include <unistd.h>

#include "compile/cache.h"

struct fx {
	char dir[64];	/* the mkdtemp directory, also FATUNE_CACHE_DIR */
	char tpl[128];	/* dir/tpl: templates written by the tests */
};

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	return remove(path);
}

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	strcpy(fx->dir, "/tmp/fatune-test-cache.XXXXXX");
	if (!mkdtemp(fx->dir))
		return -1;
	snprintf(fx->tpl, sizeof(fx->tpl), "%s/tpl", fx->dir);
	if (mkdir(fx->tpl, 0755))
		return -1;
	if (setenv("FATUNE_CACHE_DIR", fx->dir, 1))
		return -1;
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;
	int rc = nftw(fx->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);

	unsetenv("FATUNE_CACHE_DIR");
	free(fx);
	return rc;
}

/* ---- helpers ------------------------------------------------------------ */

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		fail_msg("cannot write '%s'", path);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static void assert_hex16(const char *hex)
{
	assert_int_equal(strlen(hex), 16);
	for (int i = 0; i < 16; i++)
		if (!((hex[i] >= '0' && hex[i] <= '9') || (hex[i] >= 'a' && hex[i] <= 'f')))
			fail_msg("'%s' is not 16 lowercase hex digits", hex);
}

static void hash_of(const struct fx *fx, const char *name, char hex[17])
{
	char path[512];
	struct ft_err err;

	snprintf(path, sizeof(path), "%s/%s", fx->tpl, name);
	ft_err_clear(&err);
	if (ft_template_hash(path, NULL, 0, hex, &err))
		fail_msg("ft_template_hash('%s'): %s", path, err.msg);
	assert_hex16(hex);
}

static const char *const main_cu = "#include \"common.cuh\"\n"
				   "#include <cuda_fp16.h>\n"
				   "extern \"C\" __global__ void k(float *o) { o[0] = common(); }\n";
static const char *const common_cuh = "#pragma once\n"
				      "  #  include \"sub/inner.cuh\"\n"
				      "__device__ float common() { return inner() + 1.0f; }\n";
static const char *const inner_cuh = "#pragma once\n"
				     "__device__ float inner() { return 2.0f; }\n";

/* main.cu -> common.cuh -> sub/inner.cuh, plus unrelated.cuh that nobody
 * includes. */
static void write_tree(const struct fx *fx)
{
	char sub[256];

	snprintf(sub, sizeof(sub), "%s/sub", fx->tpl);
	mkdir(sub, 0755);
	write_file(fx->tpl, "main.cu", main_cu);
	write_file(fx->tpl, "common.cuh", common_cuh);
	write_file(fx->tpl, "sub/inner.cuh", inner_cuh);
	write_file(fx->tpl, "unrelated.cuh", "#define UNRELATED 1\n");
}

/* ---- template hash ------------------------------------------------------ */

static void test_template_hash_follows_includes(void **state)
{
	struct fx *fx = *state;
	char h0[17], h[17];

	write_tree(fx);
	hash_of(fx, "main.cu", h0);
	/* stable */
	hash_of(fx, "main.cu", h);
	assert_string_equal(h, h0);

	/* an unrelated file next to the template does not matter */
	write_file(fx->tpl, "unrelated.cuh", "#define UNRELATED 2\n");
	hash_of(fx, "main.cu", h);
	assert_string_equal(h, h0);

	/* the template itself */
	write_file(fx->tpl, "main.cu", "// a comment is a change too\n");
	hash_of(fx, "main.cu", h);
	assert_string_not_equal(h, h0);
	write_file(fx->tpl, "main.cu", main_cu);
	hash_of(fx, "main.cu", h);
	assert_string_equal(h, h0);

	/* a header it includes */
	write_file(fx->tpl, "common.cuh",
		   "#pragma once\n  #  include \"sub/inner.cuh\"\n"
		   "__device__ float common() { return inner() + 3.0f; }\n");
	hash_of(fx, "main.cu", h);
	assert_string_not_equal(h, h0);
	write_file(fx->tpl, "common.cuh", common_cuh);
	hash_of(fx, "main.cu", h);
	assert_string_equal(h, h0);

	/* a header that header includes, from a subdirectory */
	write_file(fx->tpl, "sub/inner.cuh", "#pragma once\n__device__ float inner() { return 4.0f; }\n");
	hash_of(fx, "main.cu", h);
	assert_string_not_equal(h, h0);
	write_file(fx->tpl, "sub/inner.cuh", inner_cuh);
	hash_of(fx, "main.cu", h);
	assert_string_equal(h, h0);
}

static void test_template_hash_cycle_and_missing(void **state)
{
	struct fx *fx = *state;
	char path[512], h[17], h2[17];
	struct ft_err err;

	/* headers that include each other end the walk */
	write_file(fx->tpl, "a.cuh", "#include \"b.cuh\"\nint a;\n");
	write_file(fx->tpl, "b.cuh", "#include \"a.cuh\"\nint b;\n");
	write_file(fx->tpl, "cyc.cu", "#include \"a.cuh\"\n");
	hash_of(fx, "cyc.cu", h);
	write_file(fx->tpl, "b.cuh", "#include \"a.cuh\"\nint b2;\n");
	hash_of(fx, "cyc.cu", h2);
	assert_string_not_equal(h, h2);

	/* a missing template is the caller's mistake */
	snprintf(path, sizeof(path), "%s/absent.cu", fx->tpl);
	ft_err_clear(&err);
	assert_int_equal(ft_template_hash(path, NULL, 0, h, &err), -1);
	assert_int_equal(err.status, FT_EINPUT);
	assert_non_null(strstr(err.msg, "absent.cu"));
}

static void test_template_hash_of_content(void **state)
{
	struct fx *fx = *state;
	char other[256], h0[17], h[17];

	/* the same tree elsewhere hashes the same (cache.c: content only, so a
	 * moved checkout keeps its keys), and a different name with the same
	 * bytes as well */
	write_tree(fx);
	hash_of(fx, "main.cu", h0);
	snprintf(other, sizeof(other), "%s/sub", fx->tpl);
	write_file(other, "main.cu", main_cu);
	write_file(other, "common.cuh", common_cuh);
	mkdir(strcat(other, "/sub"), 0755);
	write_file(other, "inner.cuh", inner_cuh);
	hash_of(fx, "sub/main.cu", h);
	assert_string_equal(h, h0);
}

/* Headers NVRTC finds in kernel_templates/ of the data dir ($FATUNE_SOURCE_DIR)
 * are part of the hash, unless one of the same name sits next to the
 * includer, which NVRTC would take instead (nvrtc.h, cache.c). */
static void test_template_hash_follows_kernel_templates(void **state)
{
	struct fx *fx = *state;
	const char *src = getenv("FATUNE_SOURCE_DIR");
	char *saved = src ? strdup(src) : NULL;
	char kt[256], h0[17], h[17];

	snprintf(kt, sizeof(kt), "%s/kernel_templates", fx->dir);
	assert_int_equal(mkdir(kt, 0755), 0);
	write_file(kt, "fatune_abi.h", "#define FATUNE_ABI_VERSION 1\n");
	assert_int_equal(setenv("FATUNE_SOURCE_DIR", fx->dir, 1), 0);
	write_file(fx->tpl, "user.cu", "#include \"fatune_abi.h\"\nint x;\n");
	hash_of(fx, "user.cu", h0);

	/* a changed ABI header gives a new hash */
	write_file(kt, "fatune_abi.h", "#define FATUNE_ABI_VERSION 2\n");
	hash_of(fx, "user.cu", h);
	assert_string_not_equal(h, h0);

	/* with a local copy, the local copy counts and the shared one does not */
	write_file(fx->tpl, "fatune_abi.h", "#define FATUNE_ABI_VERSION 9\n");
	hash_of(fx, "user.cu", h0);
	write_file(kt, "fatune_abi.h", "#define FATUNE_ABI_VERSION 3\n");
	hash_of(fx, "user.cu", h);
	assert_string_equal(h, h0);
	write_file(fx->tpl, "fatune_abi.h", "#define FATUNE_ABI_VERSION 10\n");
	hash_of(fx, "user.cu", h);
	assert_string_not_equal(h, h0);

	if (saved) {
		setenv("FATUNE_SOURCE_DIR", saved, 1);
		free(saved);
	} else {
		unsetenv("FATUNE_SOURCE_DIR");
	}
}

/* ---- hashes and keys ---------------------------------------------------- */

static void test_hash_hex(void **state)
{
	char h[17], h2[17];

	/* xxh64 with seed 0: the published test vectors */
	ft_hash_hex("", 0, h);
	assert_string_equal(h, "ef46db3751d8e999");
	ft_hash_hex("abc", 3, h);
	assert_string_equal(h, "44bc2cf5ad770999");
	/* 16 digits even when the value has leading zeros; different bytes differ */
	for (int i = 0; i < 200; i++) {
		char buf[16];
		int n = snprintf(buf, sizeof(buf), "k%d", i);

		ft_hash_hex(buf, (size_t)n, h);
		assert_hex16(h);
		ft_hash_hex(buf, (size_t)n - 1, h2);
		assert_string_not_equal(h, h2);
	}
}

static void base_req(struct ft_compile_req *r)
{
	memset(r, 0, sizeof(*r));
	r->source_path = "/somewhere/attention.cu";
	r->arch = "sm_89";
	r->ndefines = 3;
	r->define_names[0] = "BLOCK_M";
	r->define_values[0] = 64;
	r->define_names[1] = "NUM_WARPS";
	r->define_values[1] = 4;
	r->define_names[2] = "HEAD_DIM";
	r->define_values[2] = 64;
	r->kernels[0] = "attn";
}

static void key_of(const struct ft_compile_req *r, const char *tpl, char key[17])
{
	ft_compile_key(r, tpl, key);
	assert_hex16(key);
}

static void test_compile_key(void **state)
{
	const char *tpl = "0123456789abcdef";
	struct ft_compile_req r, q;
	char k0[17], k[17];
	char name[16], arch[8];

	base_req(&r);
	key_of(&r, tpl, k0);

	/* equal requests, built from other string objects, give equal keys */
	base_req(&q);
	snprintf(name, sizeof(name), "NUM_WARPS");
	snprintf(arch, sizeof(arch), "sm_89");
	q.define_names[1] = name;
	q.arch = arch;
	key_of(&q, "0123456789abcdef", k);
	assert_string_equal(k, k0);
	/* where the template lives is not part of the key: its content hash is */
	q.source_path = "/elsewhere/copy-of-attention.cu";
	key_of(&q, tpl, k);
	assert_string_equal(k, k0);

	/* a changed define value */
	base_req(&q);
	q.define_values[1] = 8;
	key_of(&q, tpl, k);
	assert_string_not_equal(k, k0);
	/* a changed define name */
	base_req(&q);
	q.define_names[2] = "HEAD_DIM2";
	key_of(&q, tpl, k);
	assert_string_not_equal(k, k0);
	/* one define more */
	base_req(&q);
	q.define_names[3] = "IS_CAUSAL";
	q.define_values[3] = 0;
	q.ndefines = 4;
	key_of(&q, tpl, k);
	assert_string_not_equal(k, k0);
	/* one define less */
	base_req(&q);
	q.ndefines = 2;
	key_of(&q, tpl, k);
	assert_string_not_equal(k, k0);
	/* name/value boundaries: A1=2 is not A=12 */
	base_req(&q);
	q.ndefines = 1;
	q.define_names[0] = "A1";
	q.define_values[0] = 2;
	key_of(&q, tpl, k);
	q.define_names[0] = "A";
	q.define_values[0] = 12;
	{
		char k2[17];

		key_of(&q, tpl, k2);
		assert_string_not_equal(k, k2);
	}
	/* another arch */
	base_req(&q);
	q.arch = "sm_90";
	key_of(&q, tpl, k);
	assert_string_not_equal(k, k0);
	q.arch = "sm_80";
	{
		char k2[17];

		key_of(&q, tpl, k2);
		assert_string_not_equal(k2, k);
		assert_string_not_equal(k2, k0);
	}
	/* another template hash */
	base_req(&q);
	key_of(&q, "0123456789abcdee", k);
	assert_string_not_equal(k, k0);
}

/* ---- store, lookup, stats, clear --------------------------------------- */

static void fake_out(struct ft_compile_out *o, size_t size, int seed)
{
	unsigned char *b;

	memset(o, 0, sizeof(*o));
	b = malloc(size);
	assert_non_null(b);
	memcpy(b, "\x7f" "ELF", 4);
	for (size_t i = 4; i < size; i++)
		b[i] = (unsigned char)(i * 31 + (size_t)seed);
	o->ok = 1;
	o->cubin = b;
	o->cubin_size = size;
	o->log = calloc(1, 1);
	o->res[0] = (struct ft_resources){ 96 + seed, 16384, 0, 0, 0, 0 };
	o->res[1] = (struct ft_resources){ -1, -1, -1, -1, -1, 0 };
}

static long long file_size(const char *path)
{
	struct stat sb;

	if (stat(path, &sb))
		return -1;
	return (long long)sb.st_size;
}

static void test_store_lookup_roundtrip(void **state)
{
	struct fx *fx = *state;
	struct ft_compile_out o;
	struct ft_resources res[2];
	struct ft_err err;
	char path[4200], expect[256];
	FILE *f;
	unsigned char *back;

	fake_out(&o, 5000, 1);
	o.res[1] = (struct ft_resources){ 24, 0, 8, 4, 4, 7520 };
	ft_err_clear(&err);
	assert_int_equal(ft_cache_store("00000000000000aa", &o, &err), 0);

	/* the CUBIN sits where ft_cache_path says, byte for byte */
	assert_int_equal(ft_cache_path("00000000000000aa", path, sizeof(path), &err), 0);
	snprintf(expect, sizeof(expect), "%s/cubin/00000000000000aa.cubin", fx->dir);
	assert_string_equal(path, expect);
	assert_int_equal(file_size(path), 5000);
	back = malloc(5000);
	assert_non_null(back);
	f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fread(back, 1, 5000, f), 5000);
	fclose(f);
	assert_memory_equal(back, o.cubin, 5000);
	free(back);

	/* resources of both kernels come back */
	memset(res, 0x5a, sizeof(res));
	assert_int_equal(ft_cache_lookup("00000000000000aa", res), 1);
	assert_memory_equal(&res[0], &o.res[0], sizeof(res[0]));
	assert_memory_equal(&res[1], &o.res[1], sizeof(res[1]));

	/* storing again under the same key replaces the entry */
	ft_compile_out_release(&o);
	fake_out(&o, 3000, 2);
	assert_int_equal(ft_cache_store("00000000000000aa", &o, &err), 0);
	assert_int_equal(ft_cache_lookup("00000000000000aa", res), 1);
	assert_int_equal(res[0].regs, 98);
	assert_int_equal(file_size(path), 3000);
	ft_compile_out_release(&o);
}

static void test_lookup_miss(void **state)
{
	struct fx *fx = *state;
	struct ft_compile_out o;
	struct ft_resources res[2];
	struct ft_err err;
	char path[4200];

	assert_int_equal(ft_cache_lookup("ffffffffffffffff", res), 0);

	/* an entry whose CUBIN is gone is a miss, not half a hit */
	fake_out(&o, 100, 3);
	assert_int_equal(ft_cache_store("1111111111111111", &o, &err), 0);
	ft_compile_out_release(&o);
	assert_int_equal(ft_cache_lookup("1111111111111111", res), 1);
	snprintf(path, sizeof(path), "%s/cubin/1111111111111111.cubin", fx->dir);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(ft_cache_lookup("1111111111111111", res), 0);
	/* and one whose resources are gone as well */
	fake_out(&o, 100, 3);
	assert_int_equal(ft_cache_store("2222222222222222", &o, &err), 0);
	ft_compile_out_release(&o);
	snprintf(path, sizeof(path), "%s/cubin/2222222222222222.res", fx->dir);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(ft_cache_lookup("2222222222222222", res), 0);
	/* and resources cut short: only the first kernel's line, then mid-line */
	fake_out(&o, 100, 3);
	assert_int_equal(ft_cache_store("3333333333333333", &o, &err), 0);
	ft_compile_out_release(&o);
	snprintf(path, sizeof(path), "%s/cubin/3333333333333333.res", fx->dir);
	{
		FILE *f = fopen(path, "r");
		char line[256];

		assert_non_null(f);
		assert_non_null(fgets(line, sizeof(line), f));
		fclose(f);
		assert_int_equal(truncate(path, (off_t)strlen(line)), 0);
	}
	assert_int_equal(ft_cache_lookup("3333333333333333", res), 0);
	assert_int_equal(truncate(path, 5), 0);
	assert_int_equal(ft_cache_lookup("3333333333333333", res), 0);
}

/* Flips one byte of path at off (or cuts it to off bytes when cut). */
static void damage_file(const char *path, long off, int cut)
{
	FILE *f;
	int c;

	if (cut) {
		assert_int_equal(truncate(path, off), 0);
		return;
	}
	f = fopen(path, "r+b");
	assert_non_null(f);
	assert_int_equal(fseek(f, off, SEEK_SET), 0);
	c = fgetc(f);
	assert_true(c != EOF);
	assert_int_equal(fseek(f, off, SEEK_SET), 0);
	assert_int_equal(fputc(c ^ 0x40, f), c ^ 0x40);
	assert_int_equal(fclose(f), 0);
}

/* A CUBIN cut short or altered, a hash altered in its .res file, or a .res
 * without a hash (an older fatune's) is a miss and cannot be read for
 * loading; storing again makes it whole. */
static void test_damaged_entry_is_a_miss(void **state)
{
	struct fx *fx = *state;
	static const struct {
		const char *what;
		const char *file;	/* "cubin" or "res" */
		long off;
		int cut;
	} cases[] = {
		{ "cubin cut short", "cubin", 2500, 1 },
		{ "cubin empty", "cubin", 0, 1 },
		{ "cubin byte altered", "cubin", 4321, 0 },
		{ "cubin first byte altered", "cubin", 0, 0 },
		{ "hash altered", "res", -5, 0 },	/* from the end: inside the size */
		{ "no hash line", "res", -1, 1 },	/* cut before the hash line */
	};
	struct ft_compile_out o;
	struct ft_resources res[2];
	struct ft_err err;
	char cubin[4200], resp[4200];
	void *image;
	size_t size;

	fake_out(&o, 5000, 4);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		long off = cases[i].off;

		ft_err_clear(&err);
		assert_int_equal(ft_cache_store("5555555555555555", &o, &err), 0);
		assert_int_equal(ft_cache_lookup("5555555555555555", res), 1);
		assert_int_equal(ft_cache_path("5555555555555555", cubin, sizeof(cubin), &err), 0);
		assert_int_equal(ft_cache_read(cubin, &image, &size, &err), 0);
		assert_int_equal(size, 5000);
		assert_memory_equal(image, o.cubin, 5000);
		free(image);

		snprintf(resp, sizeof(resp), "%s/cubin/5555555555555555.res", fx->dir);
		if (!strcmp(cases[i].file, "res") && cases[i].cut) {
			/* keep the two resource lines only */
			FILE *f = fopen(resp, "r");
			char line[256];
			long keep = 0;

			assert_non_null(f);
			for (int k = 0; k < 2; k++) {
				assert_non_null(fgets(line, sizeof(line), f));
				keep += (long)strlen(line);
			}
			fclose(f);
			off = keep;
		} else if (off < 0) {
			off += file_size(resp);
		}
		damage_file(!strcmp(cases[i].file, "res") ? resp : cubin, off, cases[i].cut);
		if (ft_cache_lookup("5555555555555555", res) != 0)
			fail_msg("%s: still a hit", cases[i].what);
		image = (void *)1;
		ft_err_clear(&err);
		if (ft_cache_read(cubin, &image, &size, &err) != -1)
			fail_msg("%s: read for loading", cases[i].what);
		assert_int_equal(err.status, FT_EFAIL);
		assert_non_null(strstr(err.msg, "recompiled"));
		assert_null(image);
	}
	/* stored again (as a recompile does): a hit with the right bytes */
	assert_int_equal(ft_cache_store("5555555555555555", &o, &err), 0);
	assert_int_equal(ft_cache_lookup("5555555555555555", res), 1);
	ft_compile_out_release(&o);
}

/* Rewrites an entry's .res file with the first kernel's line replaced by line0
 * and the hash line by tail (NULL: kept). */
static void rewrite_res(const char *path, const char *line0, const char *tail)
{
	char lines[3][256];
	FILE *f = fopen(path, "r");

	assert_non_null(f);
	for (int k = 0; k < 3; k++)
		assert_non_null(fgets(lines[k], sizeof(lines[k]), f));
	fclose(f);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%s%s%s", line0, lines[1], tail ? tail : lines[2]);
	assert_int_equal(fclose(f), 0);
}

/* The hash covers the resource numbers: a .res whose registers or spills were
 * edited (numbers still well formed) is a miss, so no verdict (spills, too
 * many registers, serialized wgmma) is drawn from numbers ptxas never
 * reported; so is an older fatune's entry, whose hash covered the CUBIN only,
 * or whose lines lack the wgmma note's number. */
static void test_edited_resources_are_a_miss(void **state)
{
	struct fx *fx = *state;
	struct ft_compile_out o;
	struct ft_resources res[2];
	struct ft_err err;
	char resp[4200], old[128];

	ft_err_clear(&err);
	fake_out(&o, 3000, 7);	/* res[0] = { 103, 16384, 0, 0, 0, 0 } */
	snprintf(resp, sizeof(resp), "%s/cubin/6666666666666666.res", fx->dir);
	assert_int_equal(ft_cache_store("6666666666666666", &o, &err), 0);
	assert_int_equal(ft_cache_lookup("6666666666666666", res), 1);
	assert_int_equal(res[0].spill_stores, 0);
	rewrite_res(resp, "103 16384 0 64 64 0\n", NULL);	/* spills for a clean kernel */
	assert_int_equal(ft_cache_lookup("6666666666666666", res), 0);
	assert_int_equal(ft_cache_store("6666666666666666", &o, &err), 0);
	rewrite_res(resp, "255 16384 0 0 0 0\n", NULL);		/* registers */
	assert_int_equal(ft_cache_lookup("6666666666666666", res), 0);
	assert_int_equal(ft_cache_store("6666666666666666", &o, &err), 0);
	rewrite_res(resp, "103 16384 0 0 0 7520\n", NULL);	/* wgmma serialized */
	assert_int_equal(ft_cache_lookup("6666666666666666", res), 0);
	/* an older fatune's entry: "xxh64 <hash of the CUBIN alone> <size>" */
	assert_int_equal(ft_cache_store("6666666666666666", &o, &err), 0);
	snprintf(old, sizeof(old), "xxh64 %016llx %zu\n", (unsigned long long)XXH64(o.cubin, o.cubin_size, 0),
		 o.cubin_size);
	rewrite_res(resp, "103 16384 0 0 0\n", old);
	assert_int_equal(ft_cache_lookup("6666666666666666", res), 0);
	/* a fatune before the wgmma note: five numbers a line, its hash right */
	{
		static const char five[] = "103 16384 0 0 0\n-1 -1 -1 -1 -1\n";
		XXH64_state_t st;
		FILE *f;

		XXH64_reset(&st, 0);
		XXH64_update(&st, five, sizeof(five) - 1);
		XXH64_update(&st, o.cubin, o.cubin_size);
		f = fopen(resp, "w");
		assert_non_null(f);
		fprintf(f, "%sxxh64r %016llx %zu\n", five, (unsigned long long)XXH64_digest(&st),
			o.cubin_size);
		assert_int_equal(fclose(f), 0);
		assert_int_equal(ft_cache_lookup("6666666666666666", res), 0);
	}
	/* stored again: a hit */
	assert_int_equal(ft_cache_store("6666666666666666", &o, &err), 0);
	assert_int_equal(ft_cache_lookup("6666666666666666", res), 1);
	ft_compile_out_release(&o);
}

static void test_stats_and_clear(void **state)
{
	struct fx *fx = *state;
	struct ft_cache_stats st;
	struct ft_compile_out o;
	struct ft_resources res[2];
	struct ft_err err;
	char cubin_dir[256], path[512], expect_dir[256];
	long long removed = -1, bytes = 0;
	static const char *const keys[] = { "000000000000000a", "000000000000000b", "000000000000000c" };

	ft_err_clear(&err);
	assert_int_equal(ft_cache_stats(&st, &err), 0);
	assert_true(st.entries == 0);
	assert_true(st.bytes == 0);
	snprintf(expect_dir, sizeof(expect_dir), "%s/cubin", fx->dir);
	assert_string_equal(st.dir, expect_dir);

	for (int i = 0; i < 3; i++) {
		fake_out(&o, 1000 * (size_t)(i + 1), i);
		assert_int_equal(ft_cache_store(keys[i], &o, &err), 0);
		ft_compile_out_release(&o);
	}
	/* a file that is not ours, in the cache directory */
	snprintf(cubin_dir, sizeof(cubin_dir), "%s/cubin", fx->dir);
	write_file(cubin_dir, "README.txt", "not a cache entry\n");

	/* entries count CUBINs; bytes count what the entries occupy on disk */
	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s.cubin", cubin_dir, keys[i]);
		bytes += file_size(path);
		snprintf(path, sizeof(path), "%s/%s.res", cubin_dir, keys[i]);
		bytes += file_size(path);
	}
	assert_int_equal(ft_cache_stats(&st, &err), 0);
	assert_true(st.entries == 3);
	assert_true(st.bytes == bytes);
	assert_true(st.bytes >= 6000);

	assert_int_equal(ft_cache_clear(&removed, &err), 0);
	assert_true(removed == 3);
	for (int i = 0; i < 3; i++)
		assert_int_equal(ft_cache_lookup(keys[i], res), 0);
	assert_int_equal(ft_cache_stats(&st, &err), 0);
	assert_true(st.entries == 0);
	assert_true(st.bytes == 0);
	/* only entries are removed */
	snprintf(path, sizeof(path), "%s/README.txt", cubin_dir);
	assert_int_equal(access(path, F_OK), 0);
	/* clearing an empty cache removes nothing */
	assert_int_equal(ft_cache_clear(&removed, &err), 0);
	assert_true(removed == 0);
}

/* A real compile through the cache: what NVRTC reported comes back on a hit. */
static void test_real_compile_roundtrip(void **state)
{
	const char *src = getenv("FATUNE_SOURCE_DIR");
	struct ft_compile_req r = { 0 };
	struct ft_compile_out o;
	struct ft_resources res[2];
	struct ft_err err;
	char path[4200], th[17], key[17];

	if (!src || !*src)
		skip();
	snprintf(path, sizeof(path), "%s/tests/unit/fixtures/tiny_kernel.cu", src);
	r.source_path = path;
	r.arch = "sm_89";
	r.ndefines = 1;
	r.define_names[0] = "TINY_TILE";
	r.define_values[0] = 512;
	r.kernels[0] = "tiny";
	r.kernels[1] = "tiny_combine";
	assert_int_equal(ft_template_hash(path, NULL, 0, th, &err), 0);
	ft_compile_key(&r, th, key);
	assert_int_equal(ft_cache_lookup(key, res), 0);
	assert_int_equal(ft_compile(&r, &o, &err), 0);
	assert_int_equal(o.ok, 1);
	assert_int_equal(ft_cache_store(key, &o, &err), 0);
	assert_int_equal(ft_cache_lookup(key, res), 1);
	assert_memory_equal(res, o.res, sizeof(res));
	assert_int_equal(res[0].smem_static, 512 * 4);
	ft_compile_out_release(&o);
}

static void test_cache_dir(void **state)
{
	struct fx *fx = *state;
	char buf[4096], expect[512];
	struct ft_err err;
	struct stat sb;

	/* FATUNE_CACHE_DIR/cubin, created with its parents */
	snprintf(expect, sizeof(expect), "%s/deep/er", fx->dir);
	assert_int_equal(setenv("FATUNE_CACHE_DIR", expect, 1), 0);
	assert_int_equal(ft_cache_dir(buf, sizeof(buf), &err), 0);
	strcat(expect, "/cubin");
	assert_string_equal(buf, expect);
	assert_int_equal(stat(buf, &sb), 0);
	assert_true(S_ISDIR(sb.st_mode));

	/* without it, $XDG_CACHE_HOME/fatune/cubin */
	unsetenv("FATUNE_CACHE_DIR");
	snprintf(expect, sizeof(expect), "%s/xdg", fx->dir);
	{
		const char *old = getenv("XDG_CACHE_HOME");
		char *saved = old ? strdup(old) : NULL;

		assert_int_equal(setenv("XDG_CACHE_HOME", expect, 1), 0);
		assert_int_equal(ft_cache_dir(buf, sizeof(buf), &err), 0);
		strcat(expect, "/fatune/cubin");
		assert_string_equal(buf, expect);
		assert_int_equal(stat(buf, &sb), 0);
		if (saved) {
			setenv("XDG_CACHE_HOME", saved, 1);
			free(saved);
		} else {
			unsetenv("XDG_CACHE_HOME");
		}
	}

	/* a directory that cannot be made is an error naming it */
	assert_int_equal(setenv("FATUNE_CACHE_DIR", "/proc/fatune-no-such-dir", 1), 0);
	ft_err_clear(&err);
	assert_int_equal(ft_cache_dir(buf, sizeof(buf), &err), -1);
	assert_int_equal(err.status, FT_EFAIL);
	assert_non_null(strstr(err.msg, "/proc/fatune-no-such-dir"));
	{
		struct ft_compile_out o;

		fake_out(&o, 10, 0);
		assert_int_equal(ft_cache_store("4444444444444444", &o, &err), -1);
		ft_compile_out_release(&o);
	}
	assert_int_equal(setenv("FATUNE_CACHE_DIR", fx->dir, 1), 0);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_template_hash_follows_includes),
		T(test_template_hash_cycle_and_missing),
		T(test_template_hash_of_content),
		T(test_template_hash_follows_kernel_templates),
		T(test_hash_hex),
		T(test_compile_key),
		T(test_store_lookup_roundtrip),
		T(test_lookup_miss),
		T(test_damaged_entry_is_a_miss),
		T(test_edited_resources_are_a_miss),
		T(test_stats_and_clear),
		T(test_real_compile_roundtrip),
		T(test_cache_dir),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
