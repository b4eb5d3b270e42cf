/* fuzz_space.c - the space loader: YAML (yaml_doc.c, space_yaml.c) and then its
 * expressions, compiled and evaluated by the enumeration (enumerate.c, expr.c)
 * for the first candidates of a fixed shape on sm_90.
 *
 * Properties: a refusal is FT_EINPUT with one line (FT_EFAIL only for out of
 * memory); enumeration stops within the space's size. The input is placed
 * where the shipped spaces live, so "../kernel_templates/attention.cu" and
 * the test spaces' "../kernels/fault.cu" resolve (fuzz.h). */
#include "fuzz.h"

#include <stdlib.h>
#include <string.h>

#include "base/arch.h"
#include "space/space.h"

/* Candidates enumerated per input: enough to evaluate every expression on
 * several parameter combinations, few enough for thousands of inputs/s. */
#define MAX_CANDIDATES 64

static void refusal(const struct ft_err *err)
{
	if ((err->status != FT_EINPUT && !strstr(err->msg, "out of memory")) || !err->msg[0] ||
	    strchr(err->msg, '\n'))
		FZ_FAIL(err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ft_space sp;
	static struct ft_candidate c;
	const struct ft_arch *arch;
	struct ft_shape shape = { 0 };
	struct ft_enum *e = NULL;
	struct ft_err err = { 0 };
	int rc = 0;

	if (ft_space_load(&sp, fz_file(data, size, "space.yaml"), &err)) {
		refusal(&err);
		return 0;
	}
	if (!(arch = ft_arch_find("sm_90", &err)) || ft_shape_parse("2x8x256x64", &shape, &err))
		FZ_FAIL(&err);
	if (ft_enum_open(&e, &sp, &shape, arch, NULL, &err)) {
		refusal(&err);
		return 0;
	}
	for (int i = 0; i < MAX_CANDIDATES && (rc = ft_enum_next(e, &c, &err)) == 1; i++)
		if (c.index < 0 || c.index >= ft_enum_total(e))
			FZ_FAIL(&err);
	if (rc < 0)
		refusal(&err);
	ft_enum_close(e);
	return 0;
}
