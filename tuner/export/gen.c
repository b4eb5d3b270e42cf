/* gen.c - the gate for text that reaches generated code (see gen.h). */
#include "export/gen.h"

#include <stdio.h>
#include <string.h>

#include "base/ident.h"

int ft_gen_ident(const char *name, const char *what, struct ft_err *err)
{
	const char *why = ft_ident_problem(name);
	char shown[FT_GEN_SIZE(64)];

	if (!why)
		return 0;
	return ft_error(err, FT_EFAIL,
			"cannot export: %s '%.64s' cannot be a name in generated code: %s; the database "
			"holds a name no space allows (damaged or hostile): export from a trusted database",
			what, ft_gen_comment(name, shown, sizeof(shown)), why);
}

/* A character next to which fixed text could complete a comment delimiter,
 * a trigraph or a line splice. */
static int edgy(char c)
{
	return c == '/' || c == '*' || c == '?' || c == '\\';
}

const char *ft_gen_comment(const char *s, char *buf, size_t size)
{
	size_t o = 0, len = strlen(s);

	if (!size)
		return buf;
	/* the worst case per input byte is 2 output bytes, plus 2 edge spaces */
	if (len && edgy(s[0]) && o + 2 < size)
		buf[o++] = ' ';
	for (size_t i = 0; i < len && o + 3 < size; i++) {
		unsigned char c = (unsigned char)s[i], next = (unsigned char)s[i + 1];

		buf[o++] = c < 0x20 || c > 0x7e ? '_' : (char)c;
		if ((c == '*' && next == '/') || (c == '/' && next == '*') || (c == '?' && next == '?'))
			buf[o++] = ' ';
	}
	if (o && edgy(buf[o - 1]) && o + 1 < size)
		buf[o++] = ' ';
	else if (o && edgy(buf[o - 1]))
		buf[o - 1] = '_';
	buf[o] = '\0';
	return buf;
}

const char *ft_gen_shell_arg(const char *s, char *buf, size_t size)
{
	char tmp[1024];
	size_t o = 0;

	tmp[o++] = '\'';
	for (; *s && o + 6 < sizeof(tmp); s++) {
		if (*s == '\'') {
			memcpy(tmp + o, "'\\''", 4);
			o += 4;
		} else {
			tmp[o++] = *s;
		}
	}
	tmp[o++] = '\'';
	tmp[o] = '\0';
	return ft_gen_comment(tmp, buf, size);
}

const char *ft_gen_c_string(const char *s, char *buf, size_t size)
{
	size_t o = 0;

	if (!size)
		return buf;
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		char esc[8];
		size_t n;

		if (c == '\\' || c == '"' || c == '?')
			n = (size_t)snprintf(esc, sizeof(esc), "\\%c", c);
		else if (c < 0x20 || c > 0x7e)
			n = (size_t)snprintf(esc, sizeof(esc), "\\%03o", c);
		else
			n = (size_t)snprintf(esc, sizeof(esc), "%c", c);
		if (o + n >= size)
			break;
		memcpy(buf + o, esc, n);
		o += n;
	}
	buf[o] = '\0';
	return buf;
}
