/* test_arch.c - the built-in per-arch limits (arch.c): name lookup in every
 * accepted spelling, refusals that list the known archs, the table against the
 * design facts, and the cross-check against limits a device reports.
 *
 * The expected limits below are the specification, copied from
 * shared/design/FACTS.md (shared memory) and the CUDA programming guide's
 * "Technical Specifications per Compute Capability" table (threads and blocks
 * per SM), not read back from arch.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "base/arch.h"

struct expect {
	const char *name;
	int cc;
	int smem_static;
	int smem_optin;
	int smem_per_sm;
	int threads_per_sm;
	int blocks_per_sm;
};

/* FACTS.md: static 49152 everywhere; opt-in 166912 on sm_80/87, 101376 on
 * sm_86/89/120, 232448 on sm_90/100; per SM 1024 bytes more than the opt-in.
 * Programming guide: 64 warps/SM on 8.0, 9.0, 10.0 and 48 on 8.6, 8.7, 8.9,
 * 12.0; 32 blocks/SM except 16 on 8.6 and 8.7 and 24 on 8.9. */
static const struct expect facts[] = {
	{ "sm_80", 80, 49152, 166912, 167936, 2048, 32 },
	{ "sm_86", 86, 49152, 101376, 102400, 1536, 16 },
	{ "sm_87", 87, 49152, 166912, 167936, 1536, 16 },
	{ "sm_89", 89, 49152, 101376, 102400, 1536, 24 },
	{ "sm_90", 90, 49152, 232448, 233472, 2048, 32 },
	{ "sm_100", 100, 49152, 232448, 233472, 2048, 32 },
	{ "sm_120", 120, 49152, 101376, 102400, 1536, 32 },
};

#define NFACTS ((int)(sizeof(facts) / sizeof(facts[0])))

static const struct ft_arch *find_ok(const char *name)
{
	struct ft_err err;
	const struct ft_arch *a;

	ft_err_clear(&err);
	a = ft_arch_find(name, &err);
	if (!a)
		fail_msg("ft_arch_find('%s') failed: %s", name, err.msg);
	assert_int_equal(err.status, FT_OK);
	return a;
}

static void test_find_spellings(void **state)
{
	const struct ft_arch *a = find_ok("sm_89");

	assert_string_equal(a->name, "sm_89");
	assert_int_equal(a->cc, 89);
	/* every spelling of one arch yields the same entry */
	assert_ptr_equal(find_ok("89"), a);
	assert_ptr_equal(find_ok("compute_89"), a);
	assert_ptr_equal(find_ok("sm_90a"), find_ok("sm_90"));
	assert_string_equal(find_ok("sm_90a")->name, "sm_90");
	assert_string_equal(find_ok("compute_80")->name, "sm_80");
	assert_string_equal(find_ok("100")->name, "sm_100");
	assert_string_equal(find_ok("sm_120")->name, "sm_120");
	assert_ptr_equal(ft_arch_for_cc(89), a);
}

static void test_find_unknown(void **state)
{
	static const char *const bad[] = { "sm_75", "75", "sm_8", "", "sm_", "sm_89x", "sm_89aa",
					   "gfx90a", "sm89", "compute_", "sm_-89", "89 ",
					   "sm_90b", "hopper" };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct ft_err err;
		const struct ft_arch *a;
		char quoted[64];

		ft_err_clear(&err);
		a = ft_arch_find(bad[i], &err);
		if (a)
			fail_msg("'%s' was taken for %s", bad[i], a->name);
		assert_int_equal(err.status, FT_EINPUT);
		snprintf(quoted, sizeof(quoted), "'%s'", bad[i]);
		if (!strstr(err.msg, quoted))
			fail_msg("message '%s' does not quote '%s'", err.msg, bad[i]);
		/* the message lists every known arch */
		for (int k = 0; k < ft_arch_count(); k++)
			if (!strstr(err.msg, ft_arch_at(k)->name))
				fail_msg("message '%s' does not list %s", err.msg, ft_arch_at(k)->name);
		assert_false(err.msg[0] >= 'A' && err.msg[0] <= 'Z');
	}
	/* NULL err is allowed */
	assert_null(ft_arch_find("sm_1", NULL));
	assert_null(ft_arch_for_cc(75));
	assert_null(ft_arch_for_cc(0));
}

static void test_table_matches_facts(void **state)
{
	/* every fact has an entry, and every entry is in the facts */
	assert_int_equal(ft_arch_count(), NFACTS);
	for (int i = 0; i < NFACTS; i++) {
		const struct expect *e = &facts[i];
		const struct ft_arch *a = find_ok(e->name);

		assert_string_equal(a->name, e->name);
		assert_int_equal(a->cc, e->cc);
		if (a->smem_static != e->smem_static || a->smem_optin != e->smem_optin ||
		    a->smem_per_sm != e->smem_per_sm)
			fail_msg("%s: smem static/opt-in/per-SM %d/%d/%d, FACTS.md says %d/%d/%d", e->name,
				 a->smem_static, a->smem_optin, a->smem_per_sm, e->smem_static,
				 e->smem_optin, e->smem_per_sm);
		assert_int_equal(a->threads_per_sm, e->threads_per_sm);
		assert_int_equal(a->blocks_per_sm, e->blocks_per_sm);
	}
}

static void test_table_invariants(void **state)
{
	assert_null(ft_arch_at(-1));
	assert_null(ft_arch_at(ft_arch_count()));
	for (int i = 0; i < ft_arch_count(); i++) {
		const struct ft_arch *a = ft_arch_at(i);
		char name[16];

		assert_non_null(a);
		snprintf(name, sizeof(name), "sm_%d", a->cc);
		assert_string_equal(a->name, name);
		assert_ptr_equal(ft_arch_for_cc(a->cc), a);
		assert_non_null(a->examples);
		/* the static limit never exceeds what opt-in allows, and one block
		 * at the opt-in limit plus its reservation fills the SM exactly */
		assert_true(a->smem_static <= a->smem_optin);
		assert_int_equal(a->smem_reserved, 1024);
		assert_int_equal(a->smem_optin + a->smem_reserved, a->smem_per_sm);
		/* 64K 32-bit registers per SM and 255 per thread on every arch since 5.0 */
		assert_int_equal(a->regs_per_sm, 65536);
		assert_int_equal(a->regs_per_thread, 255);
		assert_int_equal(a->threads_per_block, 1024);
		assert_int_equal(a->threads_per_sm % 32, 0);
		assert_true(a->threads_per_sm >= a->threads_per_block);
		assert_true(a->blocks_per_sm >= 1);
		/* sorted by compute capability, no duplicates */
		if (i)
			assert_true(ft_arch_at(i - 1)->cc < a->cc);
	}
}

static void limits_of(const struct ft_arch *a, struct ft_device_limits *d)
{
	memset(d, 0, sizeof(*d));
	d->cc = a->cc;
	d->sm_count = 132;
	d->smem_static = a->smem_static;
	d->smem_optin = a->smem_optin;
	d->smem_per_sm = a->smem_per_sm;
	d->smem_reserved = a->smem_reserved;
	d->regs_per_sm = a->regs_per_sm;
	d->threads_per_block = a->threads_per_block;
	d->threads_per_sm = a->threads_per_sm;
	d->l2_bytes = 60 << 20;
	snprintf(d->name, sizeof(d->name), "Test GPU %s", a->name);
}

static void test_check_device_agrees(void **state)
{
	for (int i = 0; i < ft_arch_count(); i++) {
		const struct ft_arch *a = ft_arch_at(i);
		struct ft_device_limits d;
		struct ft_err err;

		limits_of(a, &d);
		ft_err_clear(&err);
		assert_int_equal(ft_arch_check_device(a, &d, &err), 0);
		/* fields the table does not carry never cause a disagreement */
		d.sm_count = 7;
		d.l2_bytes = 1;
		assert_int_equal(ft_arch_check_device(a, &d, &err), 0);
	}
}

/* The driver's figures replace the table's; unreported (0) ones keep the table's. */
static void test_from_device(void **state)
{
	const struct ft_arch *a = ft_arch_find("sm_90", NULL);
	struct ft_device_limits d;
	struct ft_arch out;

	(void)state;
	limits_of(a, &d);
	d.smem_optin = 200 * 1024;	/* a part with less opt-in smem than the table */
	d.threads_per_sm = 0;		/* not reported */
	ft_arch_from_device(a, &d, &out);
	assert_int_equal(out.smem_optin, 200 * 1024);
	assert_int_equal(out.threads_per_sm, a->threads_per_sm);
	assert_int_equal(out.smem_static, a->smem_static);
	assert_string_equal(out.name, "sm_90");
	assert_int_equal(out.cc, 90);
}

/* Offsets of the compared fields in struct ft_device_limits, in the order the
 * struct declares them: that is the order "first differing" refers to. */
struct field {
	const char *name;
	size_t off;
};

static const struct field fields[] = {
	{ "smem_static", offsetof(struct ft_device_limits, smem_static) },
	{ "smem_optin", offsetof(struct ft_device_limits, smem_optin) },
	{ "smem_per_sm", offsetof(struct ft_device_limits, smem_per_sm) },
	{ "smem_reserved", offsetof(struct ft_device_limits, smem_reserved) },
	{ "regs_per_sm", offsetof(struct ft_device_limits, regs_per_sm) },
	{ "threads_per_block", offsetof(struct ft_device_limits, threads_per_block) },
	{ "threads_per_sm", offsetof(struct ft_device_limits, threads_per_sm) },
};

#define NFIELDS ((int)(sizeof(fields) / sizeof(fields[0])))

static void test_check_device_names_first_difference(void **state)
{
	const struct ft_arch *a = find_ok("sm_90");
	struct ft_device_limits d;
	struct ft_err err;

	for (int i = 0; i < NFIELDS; i++) {
		int *p;

		limits_of(a, &d);
		p = (int *)((char *)&d + fields[i].off);
		*p += 1024;
		ft_err_clear(&err);
		assert_int_equal(ft_arch_check_device(a, &d, &err), -1);
		assert_int_not_equal(err.status, FT_OK);
		if (!strstr(err.msg, fields[i].name))
			fail_msg("message '%s' does not name %s", err.msg, fields[i].name);
		assert_non_null(strstr(err.msg, d.name));
		assert_non_null(strstr(err.msg, "sm_90"));

		/* with a later field wrong as well, the first one is named */
		for (int k = i + 1; k < NFIELDS; k++) {
			int *q = (int *)((char *)&d + fields[k].off);
			*q -= 1;
			assert_int_equal(ft_arch_check_device(a, &d, &err), -1);
			if (!strstr(err.msg, fields[i].name))
				fail_msg("message '%s' names a later field than %s", err.msg,
					 fields[i].name);
			*q += 1;
		}
	}

	/* another compute capability: both archs are named */
	limits_of(a, &d);
	d.cc = 89;
	d.smem_optin = 1;
	assert_int_equal(ft_arch_check_device(a, &d, &err), -1);
	assert_non_null(strstr(err.msg, "sm_89"));
	assert_non_null(strstr(err.msg, "sm_90"));
	assert_non_null(strstr(err.msg, d.name));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_find_spellings),
		cmocka_unit_test(test_find_unknown),
		cmocka_unit_test(test_table_matches_facts),
		cmocka_unit_test(test_table_invariants),
		cmocka_unit_test(test_check_device_agrees),
		cmocka_unit_test(test_from_device),
		cmocka_unit_test(test_check_device_names_first_difference),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
