/* arch.c - the built-in table of per-architecture limits.
 *
 * Shared-memory figures are from ../shared/design/FACTS.md (read off devices and
 * the CUDA programming guide, "Technical Specifications per Compute Capability");
 * warps and blocks per SM from the same guide. The static limit is 48 KB on every
 * arch: a kernel with static __shared__ arrays can never use more, whatever the
 * opt-in limit; only dynamic shared memory raised with
 * CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES goes beyond it.
 */
#include "base/arch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KB 1024

static const struct ft_arch arch_table[] = {
	/* name     cc  examples              static   optin     per_sm    rsv   regs/SM regs/thr thr/blk thr/SM blk/SM */
	{ "sm_80",  80, "A100",                48 * KB, 163 * KB, 164 * KB, 1024, 65536, 255, 1024, 2048, 32 },
	{ "sm_86",  86, "RTX 3090, A10",       48 * KB,  99 * KB, 100 * KB, 1024, 65536, 255, 1024, 1536, 16 },
	{ "sm_87",  87, "Jetson Orin",         48 * KB, 163 * KB, 164 * KB, 1024, 65536, 255, 1024, 1536, 16 },
	{ "sm_89",  89, "L4, RTX 4090",        48 * KB,  99 * KB, 100 * KB, 1024, 65536, 255, 1024, 1536, 24 },
	{ "sm_90",  90, "H100, H200",          48 * KB, 227 * KB, 228 * KB, 1024, 65536, 255, 1024, 2048, 32 },
	{ "sm_100", 100, "B200",               48 * KB, 227 * KB, 228 * KB, 1024, 65536, 255, 1024, 2048, 32 },
	{ "sm_120", 120, "RTX 5090",           48 * KB,  99 * KB, 100 * KB, 1024, 65536, 255, 1024, 1536, 32 },
};

#define ARCH_COUNT ((int)(sizeof(arch_table) / sizeof(arch_table[0])))

int ft_arch_count(void)
{
	return ARCH_COUNT;
}

const struct ft_arch *ft_arch_at(int i)
{
	return i >= 0 && i < ARCH_COUNT ? &arch_table[i] : NULL;
}

const struct ft_arch *ft_arch_for_cc(int cc)
{
	for (int i = 0; i < ARCH_COUNT; i++)
		if (arch_table[i].cc == cc)
			return &arch_table[i];
	return NULL;
}

const struct ft_arch *ft_arch_find(const char *name, struct ft_err *err)
{
	const char *digits = name;
	char *end;
	long cc;

	if (!strncmp(name, "sm_", 3))
		digits = name + 3;
	else if (!strncmp(name, "compute_", 8))
		digits = name + 8;
	cc = strtol(digits, &end, 10);
	/* plain digits without a leading zero; "sm_90a" names the same limits as sm_90 */
	if (digits[0] >= '1' && digits[0] <= '9' && end != digits &&
	    (*end == '\0' || (end[0] == 'a' && end[1] == '\0'))) {
		const struct ft_arch *a = ft_arch_for_cc((int)cc);
		if (a)
			return a;
	}
	{
		char known[256] = "";
		for (int i = 0; i < ARCH_COUNT; i++) {
			strcat(known, i ? ", " : "");
			strcat(known, arch_table[i].name);
		}
		ft_error(err, FT_EINPUT, "unknown arch '%s': use one of %s", name, known);
	}
	return NULL;
}

int ft_arch_check_device(const struct ft_arch *a, const struct ft_device_limits *d,
			 struct ft_err *err)
{
#define CHECK(field)                                                                       \
	if (a->field != d->field)                                                          \
		return ft_error(err, FT_EFAIL,                                             \
				"built-in limit " #field " of %s is %d but '%s' reports %d", \
				a->name, a->field, d->name, d->field)
	if (a->cc != d->cc)
		return ft_error(err, FT_EFAIL, "'%s' is sm_%d, not %s", d->name, d->cc,
				a->name);
	CHECK(smem_static);
	CHECK(smem_optin);
	CHECK(smem_per_sm);
	CHECK(smem_reserved);
	CHECK(regs_per_sm);
	CHECK(threads_per_block);
	CHECK(threads_per_sm);
#undef CHECK
	return 0;
}

void ft_arch_from_device(const struct ft_arch *a, const struct ft_device_limits *d,
			 struct ft_arch *out)
{
	*out = *a;
#define TAKE(field)            \
	if (d->field > 0)      \
		out->field = d->field
	TAKE(smem_static);
	TAKE(smem_optin);
	TAKE(smem_per_sm);
	TAKE(smem_reserved);
	TAKE(regs_per_sm);
	TAKE(threads_per_block);
	TAKE(threads_per_sm);
#undef TAKE
}
