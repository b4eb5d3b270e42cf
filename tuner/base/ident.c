/* ident.c - the identifier half of the generated-code gate (see ident.h). */
#include "base/ident.h"

#include <ctype.h>
#include <string.h>

const char *const ft_fatune_macro_names[FT_FATUNE_MACRO_COUNT] = {
	"HEAD_DIM", "IS_CAUSAL", "FATUNE_BF16", "FATUNE_SMEM_BYTES", "FATUNE_ABI",
};

/* C23 and C++23 keywords, the C++ alternative tokens, and the preprocessor's
 * `defined`: a macro of any of these names changes what the code around it
 * means, or is not allowed at all. Names of the form _X and __x are
 * reserved as a whole (ident_problem), so _Bool, _Atomic, __restrict, ...
 * need no line here. */
static const char *const keywords[] = {
	"alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break",
	"case", "catch", "char", "char8_t", "char16_t", "char32_t", "class", "co_await",
	"co_return", "co_yield", "compl", "concept", "const", "const_cast", "consteval",
	"constexpr", "constinit", "continue", "decltype", "default", "defined", "delete", "do",
	"double", "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "float",
	"for", "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new",
	"noexcept", "not", "not_eq", "nullptr", "operator", "or", "or_eq", "private", "protected",
	"public", "register", "reinterpret_cast", "requires", "restrict", "return", "short",
	"signed", "sizeof", "static", "static_assert", "static_cast", "struct", "switch",
	"template", "this", "thread_local", "throw", "true", "try", "typedef", "typeid",
	"typename", "typeof", "typeof_unqual", "union", "unsigned", "using", "virtual", "void",
	"volatile", "wchar_t", "while", "xor", "xor_eq",
};

int ft_is_fatune_macro(const char *name)
{
	for (int i = 0; i < FT_FATUNE_MACRO_COUNT; i++)
		if (!strcmp(name, ft_fatune_macro_names[i]))
			return 1;
	return 0;
}

int ft_is_ident(const char *s)
{
	if (!(isalpha((unsigned char)*s) || *s == '_'))
		return 0;
	for (s++; *s; s++)
		if (!(isalnum((unsigned char)*s) || *s == '_'))
			return 0;
	return 1;
}

const char *ft_ident_problem(const char *name)
{
	size_t len = strlen(name);

	if (!len)
		return "the name is empty";
	if (len > 63)
		return "it is longer than 63 characters";
	if (!ft_is_ident(name))
		return "it is not a C identifier (letters, digits and _, not starting with a digit)";
	if ((name[0] == '_' && isupper((unsigned char)name[1])) || strstr(name, "__"))
		return "C and C++ reserve names that start with _ and a capital letter, or hold __, for the compiler";
	for (size_t i = 0; i < sizeof(keywords) / sizeof(keywords[0]); i++)
		if (!strcmp(name, keywords[i]))
			return "it is a C or C++ keyword: a macro of that name would rewrite the code";
	return NULL;
}
