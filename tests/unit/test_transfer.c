/* test_transfer.c - transfer's seeds (search/transfer.h): which best rows seed a shape and in what
 * order, from the tuning database and from the rows of a --seeds-from database, which is never
 * written. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "search/transfer.h"
#include "test_files.h"

struct fx {
	char dir[64];
	char own[128], other[128];
};

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));

	assert_non_null(fx);
	strcpy(fx->dir, "/tmp/fatune-test-transfer.XXXXXX");
	assert_non_null(mkdtemp(fx->dir));
	snprintf(fx->own, sizeof(fx->own), "%s/own.db", fx->dir);
	snprintf(fx->other, sizeof(fx->other), "%s/other.db", fx->dir);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;
	const char *sides[] = { "", "-wal", "-shm" };
	char p[192];

	for (int i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s%s", fx->own, sides[i]);
		unlink(p);
		snprintf(p, sizeof(p), "%s%s", fx->other, sides[i]);
		unlink(p);
	}
	assert_int_equal(rmdir(fx->dir), 0);
	free(fx);
	return 0;
}

/* A fatune database at path holding the best rows given as
 * "arch|device|S|dtype|causal|config" or "...|config|D" (B 1, H 8, D 64
 * unless given, space 'sp'). */
static void make_db(const char *path, const char *const *rows, int n)
{
	struct ft_db *db = NULL;
	struct ft_err err = { 0 };
	sqlite3 *h;

	assert_int_equal(ft_db_open(&db, path, 1, &err), 0);
	ft_db_close(db);
	assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
	for (int i = 0; i < n; i++) {
		char arch[16], device[32], dtype[8], config[64], sql[1024];
		int s, causal, d = 64;

		assert_in_range(sscanf(rows[i], "%15[^|]|%31[^|]|%d|%7[^|]|%d|%63[^|]|%d", arch, device, &s,
				       dtype, &causal, config, &d), 6, 7);
		snprintf(sql, sizeof(sql),
			 "INSERT INTO best (arch, device, space_name, template_hash, template_name, b, h, s, d,"
			 " s_kv, h_kv, dtype, causal, config, fatune_version, updated_at) VALUES ('%s', '%s',"
			 " 'sp', 't', 'sp', 1, 8, %d, %d, %d, 8, '%s', %d, '%s', 'v', 'now')",
			 arch, device, s, d, s, dtype, causal, config);
		assert_int_equal(sqlite3_exec(h, sql, NULL, NULL, NULL), SQLITE_OK);
	}
	sqlite3_close(h);
}

/* This GPU's rows, another GPU model's at +FT_TRANSFER_DEVICE_COST (in the
 * tuning database or a --seeds-from one), nearest first; another dtype, arch
 * or space never. */
static void test_seeds_order(void **state)
{
	struct fx *fx = *state;
	const char *own[] = {
		"sm_90|H100|1024|fp16|0|C=own2x",	/* this GPU, 2x S: 2.0 */
		"sm_90|H200|512|fp16|0|C=other_same",	/* another GPU, same shape: 0.5 */
		"sm_90|H100|512|bf16|0|C=bf16",	/* another dtype: never */
		"sm_80|H100|512|fp16|0|C=arch",	/* another arch: never */
	};
	const char *other[] = {
		"sm_90|H200|2048|fp16|0|C=pool4x",	/* another GPU, 4x S: 4.5 */
		"sm_90|L4|512|fp16|1|C=pool_causal",	/* another GPU, the other flag: 2.5 */
		"sm_90|H200|512|fp16|0|C=other_same",	/* a repeat of a config: once */
		"sm_89|L4|512|fp16|0|C=arch89",	/* another arch: never */
	};
	const char *want[] = { "C=other_same", "C=own2x", "C=pool_causal", "C=pool4x" };
	const double dist[] = { FT_TRANSFER_DEVICE_COST, 2.0, FT_TRANSFER_DEVICE_COST + FT_TRANSFER_CAUSAL_COST,
				4.0 + FT_TRANSFER_DEVICE_COST };
	struct ft_shape sh = { .b = 1, .h = 8, .s = 512, .d = 64, .causal = 0, .dtype = FT_FP16, .s_kv = 512,
			       .h_kv = 8, .layout = FT_LAYOUT_BHSD };
	struct ft_transfer_pool pool = { 0 };
	struct ft_transfer_seeds seeds;
	struct ft_err err = { 0 };
	struct ft_db *db = NULL;
	size_t n0, n1;
	char *before, *after;

	make_db(fx->own, own, 4);
	make_db(fx->other, other, 4);
	before = test_read_file(fx->other, &n0);
	assert_int_equal(ft_transfer_pool_read(&pool, fx->other, &err), 0);
	assert_int_equal(pool.n, 4);	/* every arch's; the seeds keep sm_90's */
	/* the seed database is input: the same bytes, nothing beside it */
	after = test_read_file(fx->other, &n1);
	assert_int_equal(n0, n1);
	assert_memory_equal(before, after, n0);
	free(before);
	free(after);
	{
		char side[192];

		snprintf(side, sizeof(side), "%s-wal", fx->other);
		assert_int_not_equal(access(side, F_OK), 0);
		snprintf(side, sizeof(side), "%s-shm", fx->other);
		assert_int_not_equal(access(side, F_OK), 0);
	}

	assert_int_equal(ft_db_open(&db, fx->own, 0, &err), 0);
	assert_int_equal(ft_transfer_seeds(db, &pool, "sm_90", "H100", "sp", &sh, &seeds, &err), 0);
	assert_int_equal(seeds.n, 4);
	for (int i = 0; i < 4; i++) {
		assert_string_equal(seeds.config[i], want[i]);
		assert_ptr_equal(seeds.ptr[i], seeds.config[i]);
		assert_true(fabs(seeds.distance[i] - dist[i]) < 1e-9);
	}
	assert_int_equal(seeds.other_device, 3);
	/* another GPU's same shape is near: searched with the seeded patience */
	assert_true(seeds.distance[0] < FT_TRANSFER_FAR);

	/* without the pool: the tuning database's rows of every model */
	assert_int_equal(ft_transfer_seeds(db, NULL, "sm_90", "H100", "sp", &sh, &seeds, &err), 0);
	assert_int_equal(seeds.n, 2);
	assert_string_equal(seeds.config[0], "C=other_same");
	assert_string_equal(seeds.config[1], "C=own2x");
	assert_int_equal(seeds.other_device, 1);
	/* seen from the H200, the H100's row is the other model's */
	assert_int_equal(ft_transfer_seeds(db, NULL, "sm_90", "H200", "sp", &sh, &seeds, &err), 0);
	assert_string_equal(seeds.config[0], "C=other_same");
	assert_true(fabs(seeds.distance[0]) < 1e-9);
	assert_true(fabs(seeds.distance[1] - (2.0 + FT_TRANSFER_DEVICE_COST)) < 1e-9);
	ft_db_close(db);
	ft_transfer_pool_free(&pool);
}

/* Rows of the same head dim seed first, at most FT_TRANSFER_NEIGHBOURS of
 * them; then the nearest row of another D whose config is not already a
 * seed, one only. With no row of the same D, up to FT_TRANSFER_NEIGHBOURS
 * rows of other head dims, nearest first. */
static void test_seeds_other_d(void **state)
{
	struct fx *fx = *state;
	const char *own[] = {
		"sm_90|H100|512|fp16|0|C=d64_a",		/* 0 */
		"sm_90|H100|1024|fp16|0|C=d64_b",		/* 2 */
		"sm_90|H100|4096|fp16|0|C=d64_c",		/* 6 */
		"sm_90|H100|256|fp16|1|C=d64_d",		/* 2 + causal 2 */
		"sm_90|H100|8192|fp16|0|C=d64_e",		/* 8: a fifth of the same D, left out */
		"sm_90|H100|512|fp16|0|C=d64_b|128",	/* another D (3), a same-D seed's config: skipped */
		"sm_90|H100|1024|fp16|0|C=d128|128",	/* another D (2 + 3), the nearest new config */
		"sm_90|H100|512|fp16|0|C=d256|256",		/* two factors of D away (6) */
	};
	struct ft_shape sh = { .b = 1, .h = 8, .s = 512, .d = 64, .causal = 0, .dtype = FT_FP16, .s_kv = 512,
			       .h_kv = 8, .layout = FT_LAYOUT_BHSD };
	const char *want[] = { "C=d64_a", "C=d64_b", "C=d64_d", "C=d64_c", "C=d128" };
	struct ft_transfer_seeds seeds;
	struct ft_err err = { 0 };
	struct ft_db *db = NULL;

	make_db(fx->own, own, 8);
	assert_int_equal(ft_db_open(&db, fx->own, 0, &err), 0);
	assert_int_equal(ft_transfer_seeds(db, NULL, "sm_90", "H100", "sp", &sh, &seeds, &err), 0);
	assert_int_equal(seeds.n, FT_TRANSFER_NEIGHBOURS + 1);
	for (int i = 0; i < seeds.n; i++) {
		assert_string_equal(seeds.config[i], want[i]);
		assert_ptr_equal(seeds.ptr[i], seeds.config[i]);
	}
	assert_true(fabs(seeds.distance[4] - (2.0 + FT_TRANSFER_HEADDIM_COST)) < 1e-9);
	/* the nearest seed is a same-D one: the patience is a near seed's */
	assert_true(seeds.distance[0] < FT_TRANSFER_FAR);

	/* D 96: no row of its own; the nearest four of other head dims */
	sh.d = 96;
	assert_int_equal(ft_transfer_seeds(db, NULL, "sm_90", "H100", "sp", &sh, &seeds, &err), 0);
	assert_int_equal(seeds.n, FT_TRANSFER_NEIGHBOURS);
	for (int i = 1; i < seeds.n; i++)
		assert_true(seeds.distance[i - 1] <= seeds.distance[i]);
	ft_db_close(db);
}

/* A file that is no fatune database is refused as input, naming it, and
 * adds nothing. */
static void test_pool_refuses(void **state)
{
	struct fx *fx = *state;
	struct ft_transfer_pool pool = { 0 };
	struct ft_err err = { 0 };
	FILE *f = fopen(fx->other, "w");

	assert_non_null(f);
	fputs("not a database\n", f);
	fclose(f);
	assert_int_equal(ft_transfer_pool_read(&pool, fx->other, &err), -1);
	assert_int_equal(err.status, FT_EINPUT);
	assert_non_null(strstr(err.msg, "seed database"));
	assert_non_null(strstr(err.msg, "other.db"));
	assert_int_equal(pool.n, 0);
	ft_transfer_pool_free(&pool);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_seeds_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_seeds_other_d, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pool_refuses, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
