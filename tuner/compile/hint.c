/* hint.c - hints for the compile errors of kernels new to NVRTC (see hint.h). */
#include "compile/hint.h"

#include <stdio.h>
#include <string.h>

/* What the log says, and what to do about it, first match wins. */
static const struct {
	const char *needle;
	const char *hint;
} hints[] = {
	{ "\"INFINITY\" is undefined",
	  "NVRTC has no <math.h>: write -INFINITY as __int_as_float(0xff800000) or use a large finite "
	  "value such as -1e30f (docs/kernel_author.md)" },
	{ "\"NAN\" is undefined",
	  "NVRTC has no <math.h>: write NAN as __int_as_float(0x7fffffff) (docs/kernel_author.md)" },
	{ "int32_t\" is undefined",
	  "NVRTC has no <cstdint>: use int / unsigned int (32 bits) and long long / unsigned long long "
	  "(64 bits), or typedef them in the template (docs/kernel_author.md)" },
	{ "int64_t\" is undefined",
	  "NVRTC has no <cstdint>: use long long / unsigned long long (64 bits) (docs/kernel_author.md)" },
	{ "int16_t\" is undefined",
	  "NVRTC has no <cstdint>: use short / unsigned short (docs/kernel_author.md)" },
	{ "int8_t\" is undefined",
	  "NVRTC has no <cstdint>: use signed char / unsigned char (docs/kernel_author.md)" },
	{ "size_t\" is undefined",
	  "NVRTC defines no size_t without headers: use unsigned long long (docs/kernel_author.md)" },
	{ "cannot open source file",
	  "NVRTC ships no C and C++ standard headers (<cstdint>, <cmath>, <cfloat>, ...): drop the "
	  "include, or add the toolkit's headers with compile.include: ['{cuda}/cccl'] "
	  "(docs/kernel_author.md)" },
};

char *ft_compile_hint(const char *log, int abi, char *buf, size_t size)
{
	static const char v1[] = "fatune_attn_params_v1\" has no member \"";
	const char *m, *first = NULL, *hint = NULL;

	if (!log || !size)
		return NULL;
	if (abi < 2 && (m = strstr(log, v1))) {
		m += sizeof(v1) - 1;
		snprintf(buf, size,
			 "the template reads '%.*s', a field of ABI v2, but the space declares no 'abi: 2' "
			 "(v1 is the default): add 'abi: 2' under template (kernel_templates/fatune_abi.h)",
			 (int)strcspn(m, "\"\n"), m);
		return buf;
	}
	/* the hint for the error that comes first in the log */
	for (size_t i = 0; i < sizeof(hints) / sizeof(hints[0]); i++) {
		const char *at = strstr(log, hints[i].needle);
		if (at && (!first || at < first)) {
			first = at;
			hint = hints[i].hint;
		}
	}
	if (!hint)
		return NULL;
	snprintf(buf, size, "%s", hint);
	return buf;
}

void ft_compile_hint_append(const char *log, int abi, char *reason, size_t size)
{
	char hint[400];
	size_t n = strlen(reason);

	if (ft_compile_hint(log, abi, hint, sizeof(hint)) && n < size)
		snprintf(reason + n, size - n, "; hint: %s", hint);
}
