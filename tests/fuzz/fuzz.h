/* fuzz.h - the glue every libFuzzer target in tests/fuzz/ shares.
 *
 * A target is one file, tests/fuzz/fuzz_<name>.c, defining
 * LLVMFuzzerTestOneInput; CMake builds each (with -DFATUNE_FUZZ=ON, clang:
 * libFuzzer, ASan, UBSan) and, in every build, a replay of its committed
 * corpus tests/fuzz/corpus/<name>/ run by ctest (label fuzz), so a crash once
 * found stays a regression test. Adding a target (e.g. fuzz_db_merge.c for
 * `fatune db merge`) is adding that one file and its corpus directory.
 *
 * fatune's readers take file paths, so the input is written to a file first:
 * fz_file puts it in a private temporary tree whose siblings link to the
 * source tree's kernel_templates/, search_spaces/, tests/spaces/,
 * tests/kernels/ and tests/campaigns/, so the relative paths the shipped and
 * test files use ("../kernel_templates/...", "../spaces/fault.yaml") resolve
 * as they do in the source tree. The tree is removed at exit. Nothing here
 * calls NVRTC or the GPU.
 */
#ifndef FT_FUZZ_H
#define FT_FUZZ_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Writes data to <tree>/in/<name> and returns that path (static storage,
 * valid until the next call). Aborts if the file cannot be written: a broken
 * harness must not pass as a quiet fuzzer. */
const char *fz_file(const uint8_t *data, size_t size, const char *name);

/* data as a NUL-terminated string (malloc'd; the caller frees it). */
char *fz_string(const uint8_t *data, size_t size);

/* path of a source-tree file ("search_spaces/attention.yaml") into static storage. */
const char *fz_src(const char *rel);

/* Prints "fuzz: FILE:LINE: property broken (MESSAGE)" on stderr and aborts
 * (err may be NULL); FZ_FAIL names the line it is called from. */
void fz_fail(const char *file, int line, const struct ft_err *err) __attribute__((noreturn));
#define FZ_FAIL(err) fz_fail(__FILE__, __LINE__, (err))

/* 1 when the file at path holds exactly data (aborts if it cannot be read). */
int fz_unchanged(const char *path, const uint8_t *data, size_t size);

/* An ft_db_query row callback that counts the rows into *(long long *)ctx. */
int fz_count_row(void *ctx, int ncols, const char *const *names, const char *const *values,
		 const int *types);

struct ft_db;

/* Writes one finished run holding one compiled trial "A=1" into db (search key
 * "k"): the begin, the trial and the finish are each tried; -1 with err when
 * any of them failed. */
int fz_write_run(struct ft_db *db, struct ft_err *err);

/* Removes path and the -wal, -shm and -journal files SQLite may put beside it. */
void fz_remove_db(const char *path);

#endif
