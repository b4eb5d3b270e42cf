/* test_files.h - reading a whole file in a unit test (include after cmocka.h).
 *
 * test_read_file returns the bytes of path, NUL-terminated, and their count
 * in *n; a file that cannot be opened or read fails the test, naming it. The
 * caller frees the buffer.
 */
#ifndef TEST_FILES_H
#define TEST_FILES_H

#include <stdio.h>
#include <stdlib.h>

static inline char *test_read_file(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long len;

	if (!f)
		fail_msg("cannot read '%s'", path);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	len = ftell(f);
	assert_true(len >= 0);
	rewind(f);
	buf = calloc(1, (size_t)len + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	*n = (size_t)len;
	return buf;
}

#endif
