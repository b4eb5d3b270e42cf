/* test_nvrtc.c - template to CUBIN with NVRTC (nvrtc.c): the ptxas report
 * parser on real logs, and ft_compile on small templates for several archs,
 * with defines, compile failures, missing files and concurrent compiles.
 *
 * Fixtures are in tests/unit/fixtures (see its README for how the logs were
 * made). NVRTC runs here without a GPU, so nothing is skipped.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <ctype.h>
#include <ftw.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "compile/nvrtc.h"
#include "compile/ptxas.h"
#include "test_files.h"

/* ELF e_machine of CUDA device code (EM_CUDA in the ELF machine registry). */
#define EM_CUDA_MACHINE 190

static char fixture_dir[4096];

static int setup_group(void **state)
{
	const char *src = getenv("FATUNE_SOURCE_DIR");

	if (!src || !*src) {
		fprintf(stderr, "test_nvrtc: set FATUNE_SOURCE_DIR to the repository root\n");
		return -1;
	}
	snprintf(fixture_dir, sizeof(fixture_dir), "%s/tests/unit/fixtures", src);
	return 0;
}

static void fixture(const char *name, char *buf, size_t size)
{
	snprintf(buf, size, "%s/%s", fixture_dir, name);
}

static char *read_fixture(const char *name)
{
	char path[4200];
	size_t n;
	char *buf;

	fixture(name, path, sizeof(path));
	buf = test_read_file(path, &n);
	assert_true(n > 0);
	return buf;
}

static void assert_res(const struct ft_resources *r, int regs, int smem, int stack, int st, int ld)
{
	if (r->regs != regs || r->smem_static != smem || r->stack_bytes != stack ||
	    r->spill_stores != st || r->spill_loads != ld)
		fail_msg("resources regs %d smem %d stack %d spills %d/%d, expected %d %d %d %d/%d",
			 r->regs, r->smem_static, r->stack_bytes, r->spill_stores, r->spill_loads, regs,
			 smem, stack, st, ld);
}

static void assert_unknown(const struct ft_resources *r)
{
	assert_res(r, -1, -1, -1, -1, -1);
	assert_int_equal(r->wgmma_serialized, -1);
}

/* ---- ft_parse_ptxas_log on real logs ------------------------------------ */

static void test_ptxas_spills(void **state)
{
	char *log = read_fixture("ptxas_spills.log");
	struct ft_resources r;

	ft_parse_ptxas_log(log, "spill_kernel", &r);
	assert_res(&r, 24, 0, 576, 636, 636);
	/* the name appears in the "Overriding maximum register limit" line too;
	 * an absent kernel stays unknown */
	ft_parse_ptxas_log(log, "spill", &r);
	assert_unknown(&r);
	free(log);
}

static void test_ptxas_static_smem(void **state)
{
	char *log = read_fixture("ptxas_smem.log");
	struct ft_resources r;

	ft_parse_ptxas_log(log, "smem_kernel", &r);
	/* 3072 floats declared in ptxas_smem.cu */
	assert_res(&r, 10, 3072 * 4, 0, 0, 0);
	free(log);
}

static void check_two_kernels(const char *log)
{
	struct ft_resources r;

	ft_parse_ptxas_log(log, "attn", &r);
	assert_res(&r, 28, 2048 * 4, 64, 0, 0);
	ft_parse_ptxas_log(log, "attn_combine", &r);
	assert_res(&r, 8, 0, 0, 0, 0);
	/* prefixes and extensions of the names are other kernels */
	ft_parse_ptxas_log(log, "att", &r);
	assert_unknown(&r);
	ft_parse_ptxas_log(log, "attn_", &r);
	assert_unknown(&r);
	ft_parse_ptxas_log(log, "attn_combine2", &r);
	assert_unknown(&r);
	/* a device function's report is not an entry point's */
	ft_parse_ptxas_log(log, "_Z6helperPKfi", &r);
	assert_unknown(&r);
}

static void test_ptxas_two_kernels(void **state)
{
	char *log = read_fixture("ptxas_two_kernels.log");
	const char *cut = "ptxas info    : Compiling entry function 'attn' for";
	char *second, *swapped;
	size_t n1, n2;

	check_two_kernels(log);

	/* the same reports in the other order: the kernel with shared memory
	 * first, the one without after it */
	second = strstr(log, cut);
	assert_non_null(second);
	n1 = (size_t)(second - log);
	n2 = strlen(second);
	swapped = malloc(n1 + n2 + 1);
	assert_non_null(swapped);
	memcpy(swapped, second, n2);
	memcpy(swapped + n2, log, n1);
	swapped[n1 + n2] = '\0';
	check_two_kernels(swapped);
	free(swapped);

	/* a report cut short after the first entry's heading: the next entry's
	 * figures are not the first one's */
	{
		const char *head = strstr(log, "ptxas info    : Compiling entry function 'attn_combine'");
		const char *eol;
		char *cut_log;
		struct ft_resources r;

		assert_non_null(head);
		eol = strchr(head, '\n');
		assert_non_null(eol);
		cut_log = malloc((size_t)(eol + 1 - head) + n2 + 1);
		assert_non_null(cut_log);
		memcpy(cut_log, head, (size_t)(eol + 1 - head));
		memcpy(cut_log + (eol + 1 - head), second, n2 + 1);
		ft_parse_ptxas_log(cut_log, "attn_combine", &r);
		assert_unknown(&r);
		ft_parse_ptxas_log(cut_log, "attn", &r);
		assert_res(&r, 28, 2048 * 4, 64, 0, 0);
		free(cut_log);
	}
	free(log);
}

/* ptxas's wgmma serialization note (a real NVRTC log of a Hopper template,
 * fixtures/README) names its kernel; it comes before the entries' reports */
static void test_ptxas_wgmma_serialized(void **state)
{
	char *log = read_fixture("ptxas_wgmma_serialized.log");
	struct ft_resources r;

	(void)state;
	ft_parse_ptxas_log(log, "fatune_sm90_fwd", &r);
	assert_int_equal(r.regs, 168);
	assert_int_equal(r.wgmma_serialized, 7520);
	ft_parse_ptxas_log(log, "fatune_sm90_combine", &r);
	assert_int_equal(r.regs, 34);
	assert_int_equal(r.wgmma_serialized, 0);
	free(log);

	/* a sibling wording without a number, and one naming another kernel */
	ft_parse_ptxas_log("ptxas info    : Potential Performance Loss: wgmma.mma_async instructions "
			   "are serialized due to the presence of Extern calls in the function 'k2'\n"
			   "ptxas info    : Compiling entry function 'k' for 'sm_90a'\n"
			   "ptxas info    : Used 8 registers\n",
			   "k", &r);
	assert_int_equal(r.regs, 8);
	assert_int_equal(r.wgmma_serialized, 0);
	ft_parse_ptxas_log("ptxas info    : Compiling entry function 'k' for 'sm_90a'\n"
			   "ptxas info    : Used 8 registers\n"
			   "ptxas info    : Potential Performance Loss: wgmma.mma_async instructions "
			   "are serialized due to the presence of Extern calls in the function 'k'\n",
			   "k", &r);
	assert_int_equal(r.wgmma_serialized, 1);
}

static void test_ptxas_empty_and_unrelated(void **state)
{
	struct ft_resources r = { 1, 2, 3, 4, 5, 6 };

	ft_parse_ptxas_log("", "attn", &r);
	assert_unknown(&r);
	r = (struct ft_resources){ 1, 2, 3, 4, 5, 6 };
	ft_parse_ptxas_log("tiny_kernel.cu(3): error: expected a \";\"\n", "attn", &r);
	assert_unknown(&r);
}

/* ---- ft_compile -------------------------------------------------------- */

static void tiny_req(struct ft_compile_req *req, char *path, size_t size, const char *arch,
		     long long tile)
{
	memset(req, 0, sizeof(*req));
	fixture("tiny_kernel.cu", path, size);
	req->source_path = path;
	req->arch = arch;
	req->ndefines = 1;
	req->define_names[0] = "TINY_TILE";
	req->define_values[0] = tile;
	req->kernels[0] = "tiny";
	req->kernels[1] = "tiny_combine";
}

static void assert_cubin(const struct ft_compile_out *out)
{
	const unsigned char *b = out->cubin;

	assert_int_equal(out->ok, 1);
	assert_non_null(out->cubin);
	/* an ELF header is 64 bytes; a real CUBIN is far larger */
	assert_true(out->cubin_size > 64);
	assert_memory_equal(b, "\x7f" "ELF", 4);
	/* e_machine, little endian, at offset 18 */
	assert_int_equal(b[18] | b[19] << 8, EM_CUDA_MACHINE);
}

static void test_compile_tiny_per_arch(void **state)
{
	static const char *const archs[] = { "sm_80", "sm_89", "sm_90" };

	for (size_t i = 0; i < sizeof(archs) / sizeof(archs[0]); i++) {
		struct ft_compile_req req;
		struct ft_compile_out out;
		struct ft_err err;
		char path[4200];

		tiny_req(&req, path, sizeof(path), archs[i], 1024);
		ft_err_clear(&err);
		if (ft_compile(&req, &out, &err))
			fail_msg("ft_compile for %s failed: %s", archs[i], err.msg);
		if (!out.ok)
			fail_msg("tiny_kernel.cu did not compile for %s:\n%s", archs[i], out.log);
		assert_cubin(&out);
		assert_non_null(out.log);
		assert_true(out.ms > 0);
		/* the main kernel: its 1024 floats of static smem, no spills */
		assert_true(out.res[0].regs > 0 && out.res[0].regs <= 255);
		assert_int_equal(out.res[0].smem_static, 1024 * 4);
		assert_int_equal(out.res[0].stack_bytes, 0);
		assert_int_equal(out.res[0].spill_stores, 0);
		assert_int_equal(out.res[0].spill_loads, 0);
		/* the second entry point is reported separately */
		assert_true(out.res[1].regs > 0);
		assert_int_equal(out.res[1].smem_static, 0);
		assert_int_equal(out.res[1].spill_stores, 0);
		ft_compile_out_release(&out);
		assert_null(out.cubin);
		assert_null(out.log);
	}
}

static void test_compile_define_reaches_code(void **state)
{
	struct ft_compile_req req;
	struct ft_compile_out out;
	struct ft_err err;
	char path[4200];

	/* TINY_TILE sizes the shared array: the report follows the define */
	tiny_req(&req, path, sizeof(path), "sm_89", 3000);
	assert_int_equal(ft_compile(&req, &out, &err), 0);
	assert_int_equal(out.ok, 1);
	assert_int_equal(out.res[0].smem_static, 3000 * 4);
	ft_compile_out_release(&out);

	/* a static_assert on a define: 42 passes */
	tiny_req(&req, path, sizeof(path), "sm_89", 256);
	req.define_names[1] = "TINY_EXPECT";
	req.define_values[1] = 42;
	req.ndefines = 2;
	assert_int_equal(ft_compile(&req, &out, &err), 0);
	if (!out.ok)
		fail_msg("TINY_EXPECT=42 did not compile:\n%s", out.log);
	assert_int_equal(out.res[0].smem_static, 256 * 4);
	ft_compile_out_release(&out);

	/* ... and 41 is a compile failure that names the assertion */
	req.define_values[1] = 41;
	assert_int_equal(ft_compile(&req, &out, &err), 0);
	assert_int_equal(out.ok, 0);
	assert_null(out.cubin);
	assert_non_null(out.log);
	assert_non_null(strstr(out.log, "TINY_EXPECT must be 42"));
	ft_compile_out_release(&out);

	/* no TINY_TILE at all hits the template's #error */
	tiny_req(&req, path, sizeof(path), "sm_89", 0);
	req.ndefines = 0;
	assert_int_equal(ft_compile(&req, &out, &err), 0);
	assert_int_equal(out.ok, 0);
	assert_non_null(strstr(out.log, "TINY_TILE"));
	ft_compile_out_release(&out);

	/* a negative define value is passed as written */
	tiny_req(&req, path, sizeof(path), "sm_89", 512);
	req.define_names[1] = "TINY_EXPECT";
	req.define_values[1] = -42;
	req.ndefines = 2;
	assert_int_equal(ft_compile(&req, &out, &err), 0);
	assert_int_equal(out.ok, 0);
	ft_compile_out_release(&out);
}

/* NVRTC's log prefixes the continuation line of the report ("ptxas . 608
 * bytes stack frame, ..."), unlike nvcc's: spills must still be read. */
static void test_compile_spills_reported(void **state)
{
	struct ft_compile_req req = { 0 };
	struct ft_compile_out out;
	struct ft_err err;
	char path[4200];

	fixture("spill_template.cu", path, sizeof(path));
	req.source_path = path;
	req.arch = "sm_89";
	req.kernels[0] = "spilly";
	ft_err_clear(&err);
	assert_int_equal(ft_compile(&req, &out, &err), 0);
	if (!out.ok)
		fail_msg("spill_template.cu did not compile:\n%s", out.log);
	assert_cubin(&out);
	/* __maxnreg__(24) in the template */
	assert_true(out.res[0].regs > 0 && out.res[0].regs <= 24);
	assert_true(out.res[0].spill_stores > 0);
	assert_true(out.res[0].spill_loads > 0);
	assert_true(out.res[0].stack_bytes > 0);
	assert_int_equal(out.res[0].smem_static, 0);
	/* no second kernel asked for: unknown */
	assert_unknown(&out.res[1]);
	ft_compile_out_release(&out);
}

static void test_compile_syntax_error(void **state)
{
	struct ft_compile_req req = { 0 };
	struct ft_compile_out out;
	struct ft_err err;
	char path[4200];

	fixture("syntax_error.cu", path, sizeof(path));
	req.source_path = path;
	req.arch = "sm_89";
	req.kernels[0] = "broken";
	ft_err_clear(&err);
	/* a template that does not compile is a result, not an error */
	assert_int_equal(ft_compile(&req, &out, &err), 0);
	assert_int_equal(out.ok, 0);
	assert_null(out.cubin);
	assert_int_equal(out.cubin_size, 0);
	assert_non_null(out.log);
	/* the log names the file and the line where the missing ';' shows
	 * (line 6 lacks it, so the error is reported at line 7) */
	assert_non_null(strstr(out.log, "syntax_error.cu(7): error"));
	assert_non_null(strstr(out.log, "expected a \";\""));
	assert_unknown(&out.res[0]);
	ft_compile_out_release(&out);
}

/* ptxas refuses 64 KB of static shared memory; NVRTC's log has no error, so
 * the PTX goes through nvJitLink again and its error is the problem. */
static void test_compile_ptxas_error_recovered(void **state)
{
	struct ft_compile_req req = { 0 };
	struct ft_compile_out out;
	struct ft_err err;
	char path[4200];

	fixture("too_much_static_smem.cu", path, sizeof(path));
	req.source_path = path;
	req.arch = "sm_89";
	req.kernels[0] = "big";
	ft_err_clear(&err);
	assert_int_equal(ft_compile(&req, &out, &err), 0);
	assert_int_equal(out.ok, 0);
	assert_null(out.cubin);
	/* ptxas's own report is still read */
	assert_int_equal(out.res[0].smem_static, 65536);
	assert_string_equal(out.problem,
			    "ptxas error: Entry function 'big' uses too much shared data (0x10000 "
			    "bytes, 0xc000 max) (static __shared__ is capped at 48 KB on every arch: "
			    "use dynamic shared memory, or a config that fits)");
	assert_non_null(strstr(out.log, "ptxas, run again through nvJitLink"));
	assert_non_null(strstr(out.log, "uses too much shared data (0x10000 bytes, 0xc000 max)"));
	ft_compile_out_release(&out);
}

static void test_ptxas_first_error(void **state)
{
	char buf[128];

	assert_string_equal(ft_ptxas_first_error("info    : x\nerror   : Entry function 'k' uses "
						 "too much shared data (0xd000 bytes, 0xc000 max)\n"
						 "ERROR 9: finish\n",
						 buf, sizeof(buf)),
			    "Entry function 'k' uses too much shared data (0xd000 bytes, 0xc000 max)");
	assert_string_equal(ft_ptxas_first_error("ptxas fatal   : error in x", buf, sizeof(buf)),
			    "ptxas fatal   : error in x");
	assert_string_equal(ft_ptxas_first_error("all fine\n", buf, sizeof(buf)), "");
	assert_string_equal(ft_ptxas_first_error(NULL, buf, sizeof(buf)), "");
	/* the PTX of a kernel that fits: no error */
	{
		static const char ptx[] = ".version 8.0\n.target sm_89\n.address_size 64\n"
					  ".visible .entry ok()\n{\n\tret;\n}\n";
		char *log = ft_ptxas_errors(ptx, sizeof(ptx), "sm_89", NULL);
		if (log) /* NULL only where nvJitLink is not installed */
			assert_string_equal(log, "");
		free(log);
	}
}

static void test_compile_missing_file(void **state)
{
	struct ft_compile_req req = { 0 };
	struct ft_compile_out out;
	struct ft_err err;
	char path[4200];

	fixture("no_such_template.cu", path, sizeof(path));
	req.source_path = path;
	req.arch = "sm_89";
	req.kernels[0] = "tiny";
	ft_err_clear(&err);
	memset(&out, 0xa5, sizeof(out)); /* garbage the call must overwrite */
	assert_int_equal(ft_compile(&req, &out, &err), -1);
	assert_int_equal(err.status, FT_EINPUT);
	assert_non_null(strstr(err.msg, "no_such_template.cu"));
	assert_int_equal(out.ok, 0);
	assert_null(out.cubin);
	/* nvrtc.h: the log is "never NULL after a call" */
	if (!out.log)
		fail_msg("ft_compile left out->log NULL after a missing template (nvrtc.h promises a "
			 "log, possibly \"\", after every call)");
	ft_compile_out_release(&out);
}

static void test_compile_too_many_defines(void **state)
{
	struct ft_compile_req req;
	struct ft_compile_out out;
	struct ft_err err;
	char path[4200];

	tiny_req(&req, path, sizeof(path), "sm_89", 64);
	req.ndefines = FT_MAX_DEFINES + 1;
	ft_err_clear(&err);
	memset(&out, 0xa5, sizeof(out));
	assert_int_equal(ft_compile(&req, &out, &err), -1);
	assert_int_equal(err.status, FT_EINPUT);
	assert_int_equal(out.ok, 0);
	assert_null(out.cubin);
	if (!out.log)
		fail_msg("ft_compile left out->log NULL after refusing the defines (nvrtc.h promises a "
			 "log after every call)");
	ft_compile_out_release(&out);
}

static void test_compile_virtual_arch_gives_no_cubin(void **state)
{
	struct ft_compile_req req;
	struct ft_compile_out out;
	struct ft_err err;
	char path[4200];
	int rc;

	/* compute_XX makes PTX, not a CUBIN: never ok, never a CUBIN */
	tiny_req(&req, path, sizeof(path), "compute_89", 64);
	ft_err_clear(&err);
	rc = ft_compile(&req, &out, &err);
	assert_int_equal(out.ok, 0);
	assert_null(out.cubin);
	assert_non_null(out.log);
	if (rc == -1)
		assert_true(err.msg[0] != '\0');
	ft_compile_out_release(&out);
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		fail_msg("cannot write '%s'", path);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	return remove(path);
}

/* Compiles dir/name for sm_89 with no defines; returns out.ok (log in *log). */
static int compile_ok(const char *dir, const char *name, char **log)
{
	struct ft_compile_req req = { 0 };
	struct ft_compile_out out;
	struct ft_err err;
	char path[512];
	int ok;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	req.source_path = path;
	req.arch = "sm_89";
	req.kernels[0] = "abi_k";
	ft_err_clear(&err);
	if (ft_compile(&req, &out, &err))
		fail_msg("ft_compile('%s'): %s", path, err.msg);
	ok = out.ok;
	*log = strdup(out.log);
	ft_compile_out_release(&out);
	return ok;
}

/* kernel_templates/reference.cu as the worker builds it (evaluate.c: the
 * device's sm_XX, no defines): every helper, the device-side check among
 * them, compiles for an A100 and a Hopper, without spills. */
static void test_compile_reference_kernels(void **state)
{
	static const char *const archs[] = { "sm_80", "sm_90" };
	static const char *const kernels[] = { "fatune_ref_check", "fatune_ref_attention",
					       "fatune_ref_fill" };
	const char *src = getenv("FATUNE_SOURCE_DIR");
	char path[4200];

	(void)state;
	snprintf(path, sizeof(path), "%s/kernel_templates/reference.cu", src);
	for (size_t a = 0; a < sizeof(archs) / sizeof(archs[0]); a++)
		for (size_t k = 0; k < sizeof(kernels) / sizeof(kernels[0]); k++) {
			struct ft_compile_req req = { 0 };
			struct ft_compile_out out;
			struct ft_err err;

			req.source_path = path;
			req.arch = archs[a];
			req.kernels[0] = kernels[k];
			ft_err_clear(&err);
			if (ft_compile(&req, &out, &err))
				fail_msg("ft_compile(reference.cu, %s): %s", archs[a], err.msg);
			if (!out.ok)
				fail_msg("reference.cu does not compile for %s (%s): %s %s", archs[a],
					 kernels[k], out.problem, out.log);
			assert_non_null(out.cubin);
			assert_true(out.res[0].regs > 0);
			assert_int_equal(out.res[0].spill_stores, 0);
			ft_compile_out_release(&out);
		}
}

/* The Hopper template through NVRTC with fatune's own options: MASK_PEEL=1
 * (a causal config of tests/unit/fixtures/README) gets ptxas's C7520 note,
 * which lands in the resources; its MASK_PEEL=0 twin gets none. */
static void test_compile_wgmma_serialized(void **state)
{
	static const char *const names[] = { "NUM_CONSUMER_WG", "BLOCK_M", "BLOCK_N", "KV_STAGES",
					     "PINGPONG", "PERSISTENT", "Q_IN_REGS",
					     "INTRA_WG_OVERLAP", "TILE_ORDER", "PDL", "HEAD_DIM",
					     "IS_CAUSAL", "FATUNE_BF16", "FATUNE_SMEM_BYTES",
					     "FATUNE_ABI", "MASK_PEEL" };
	static const long long values[] = { 2, 128, 128, 2, 1, 0, 0, 1, 0, 0, 64, 1, 1, 82000, 2 };
	const char *src = getenv("FATUNE_SOURCE_DIR");
	char path[4200];

	(void)state;
	snprintf(path, sizeof(path), "%s/kernel_templates/attention_sm90.cu", src);
	for (int peel = 1; peel >= 0; peel--) {
		struct ft_compile_req req = { 0 };
		struct ft_compile_out out;
		struct ft_err err;

		req.source_path = path;
		req.arch = "sm_90a";
		req.kernels[0] = "fatune_sm90_fwd";
		req.kernels[1] = "fatune_sm90_combine";
		req.ndefines = (int)(sizeof(names) / sizeof(names[0]));
		for (int i = 0; i < req.ndefines; i++) {
			req.define_names[i] = names[i];
			req.define_values[i] = i < req.ndefines - 1 ? values[i] : peel;
		}
		ft_err_clear(&err);
		if (ft_compile(&req, &out, &err))
			fail_msg("ft_compile(attention_sm90.cu): %s", err.msg);
		if (!out.ok)
			fail_msg("attention_sm90.cu (MASK_PEEL=%d) does not compile: %s %s", peel,
				 out.problem, out.log);
		assert_true(out.res[0].regs > 0);
		assert_int_equal(out.res[0].wgmma_serialized, peel ? 7520 : 0);
		assert_int_equal(out.res[1].wgmma_serialized, 0);
		ft_compile_out_release(&out);
	}
}

/* nvrtc.h: kernel_templates/ of the data dir ($FATUNE_SOURCE_DIR) is on the
 * include path, so a template anywhere can include fatune_abi.h; a header
 * next to the template comes first. */
static void test_compile_abi_header_on_include_path(void **state)
{
	const char *src = getenv("FATUNE_SOURCE_DIR");
	char *saved = strdup(src);
	char root[64] = "/tmp/fatune-test-nvrtc.XXXXXX";
	char tpl[128], kt[128], path[256], *log;

	assert_non_null(saved);
	assert_non_null(mkdtemp(root));
	snprintf(tpl, sizeof(tpl), "%s/tpl", root);
	snprintf(kt, sizeof(kt), "%s/kernel_templates", root);
	assert_int_equal(mkdir(tpl, 0755), 0);
	assert_int_equal(mkdir(kt, 0755), 0);

	/* the real ABI header, from a template outside the source tree */
	snprintf(path, sizeof(path), "%s/abi_user.cu", tpl);
	write_text(path, "#include \"fatune_abi.h\"\n"
			 "static_assert(FATUNE_ABI_VERSION >= 1, \"the ABI header was found\");\n"
			 "extern \"C\" __global__ void abi_k(struct fatune_attn_params p)\n"
			 "{ ((float *)p.o)[threadIdx.x] = p.scale * p.num_splits; }\n");
	if (!compile_ok(tpl, "abi_user.cu", &log))
		fail_msg("a template outside the tree cannot include fatune_abi.h:\n%s", log);
	free(log);

	/* another data dir: its kernel_templates/ is the one searched */
	snprintf(path, sizeof(path), "%s/fatune_abi.h", kt);
	write_text(path, "#define FATUNE_ABI_VERSION 77\n");
	snprintf(path, sizeof(path), "%s/abi_version.cu", tpl);
	write_text(path, "#define WANT 77\n#include \"fatune_abi.h\"\n"
			 "static_assert(FATUNE_ABI_VERSION == WANT, \"which fatune_abi.h\");\n"
			 "extern \"C\" __global__ void abi_k(int *o) { o[0] = FATUNE_ABI_VERSION; }\n");
	assert_int_equal(setenv("FATUNE_SOURCE_DIR", root, 1), 0);
	if (!compile_ok(tpl, "abi_version.cu", &log))
		fail_msg("$FATUNE_SOURCE_DIR/kernel_templates was not searched:\n%s", log);
	free(log);
	/* the check has teeth: another version is refused */
	write_text(path, "#define WANT 78\n#include \"fatune_abi.h\"\n"
			 "static_assert(FATUNE_ABI_VERSION == WANT, \"which fatune_abi.h\");\n"
			 "extern \"C\" __global__ void abi_k(int *o) { o[0] = FATUNE_ABI_VERSION; }\n");
	assert_int_equal(compile_ok(tpl, "abi_version.cu", &log), 0);
	assert_non_null(strstr(log, "which fatune_abi.h"));
	free(log);

	/* a header of the same name next to the template wins */
	snprintf(path, sizeof(path), "%s/fatune_abi.h", tpl);
	write_text(path, "#define FATUNE_ABI_VERSION 5\n");
	snprintf(path, sizeof(path), "%s/abi_version.cu", tpl);
	write_text(path, "#define WANT 5\n#include \"fatune_abi.h\"\n"
			 "static_assert(FATUNE_ABI_VERSION == WANT, \"which fatune_abi.h\");\n"
			 "extern \"C\" __global__ void abi_k(int *o) { o[0] = FATUNE_ABI_VERSION; }\n");
	if (!compile_ok(tpl, "abi_version.cu", &log))
		fail_msg("the header next to the template was not the one included:\n%s", log);
	free(log);

	assert_int_equal(setenv("FATUNE_SOURCE_DIR", saved, 1), 0);
	free(saved);
	assert_int_equal(nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS), 0);
}

struct job {
	long long tile;
	int rc, ok, smem;
	char msg[512];
};

static void *compile_thread(void *arg)
{
	struct job *j = arg;
	struct ft_compile_req req;
	struct ft_compile_out out;
	struct ft_err err;
	char path[4200];

	tiny_req(&req, path, sizeof(path), "sm_89", j->tile);
	ft_err_clear(&err);
	j->rc = ft_compile(&req, &out, &err);
	j->ok = out.ok;
	j->smem = out.res[0].smem_static;
	snprintf(j->msg, sizeof(j->msg), "%s", err.msg);
	ft_compile_out_release(&out);
	return NULL;
}

/* nvrtc.h: ft_compile may run on several threads at once. Each thread's
 * result must be its own (distinct tile sizes tell them apart). */
static void test_compile_concurrent(void **state)
{
	enum { N = 4 };
	pthread_t th[N];
	struct job jobs[N];

	for (int i = 0; i < N; i++) {
		memset(&jobs[i], 0, sizeof(jobs[i]));
		jobs[i].tile = 256 * (i + 1);
		assert_int_equal(pthread_create(&th[i], NULL, compile_thread, &jobs[i]), 0);
	}
	for (int i = 0; i < N; i++)
		assert_int_equal(pthread_join(th[i], NULL), 0);
	for (int i = 0; i < N; i++) {
		if (jobs[i].rc)
			fail_msg("thread %d: %s", i, jobs[i].msg);
		assert_int_equal(jobs[i].ok, 1);
		assert_int_equal(jobs[i].smem, (int)jobs[i].tile * 4);
	}
}

static void test_version_and_options(void **state)
{
	const char *v = ft_nvrtc_version();
	const char *p = v;
	char opts[512];
	int major;

	/* "MAJOR.MINOR", e.g. "13.0" */
	assert_true(isdigit((unsigned char)*p));
	major = atoi(p);
	while (isdigit((unsigned char)*p))
		p++;
	assert_int_equal(*p, '.');
	p++;
	assert_true(isdigit((unsigned char)*p));
	while (isdigit((unsigned char)*p))
		p++;
	assert_int_equal(*p, '\0');
	/* CUBIN output from NVRTC exists since 11.1 */
	assert_true(major >= 11);
	/* the same pointer-stable text every time */
	assert_string_equal(ft_nvrtc_version(), v);

	ft_nvrtc_options(opts, sizeof(opts));
	assert_true(opts[0] != '\0');
	/* the resource report depends on ptxas -v; arch and defines are not shared */
	assert_non_null(strstr(opts, "-v"));
	assert_null(strstr(opts, "-arch"));
	assert_null(strstr(opts, "-D"));
	{
		char small[4];

		memset(small, '#', sizeof(small));
		ft_nvrtc_options(small, sizeof(small));
		assert_true(memchr(small, '\0', sizeof(small)) != NULL);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ptxas_spills),
		cmocka_unit_test(test_ptxas_static_smem),
		cmocka_unit_test(test_ptxas_two_kernels),
		cmocka_unit_test(test_ptxas_empty_and_unrelated),
		cmocka_unit_test(test_ptxas_wgmma_serialized),
		cmocka_unit_test(test_compile_tiny_per_arch),
		cmocka_unit_test(test_compile_define_reaches_code),
		cmocka_unit_test(test_compile_spills_reported),
		cmocka_unit_test(test_compile_syntax_error),
		cmocka_unit_test(test_compile_ptxas_error_recovered),
		cmocka_unit_test(test_ptxas_first_error),
		cmocka_unit_test(test_compile_missing_file),
		cmocka_unit_test(test_compile_too_many_defines),
		cmocka_unit_test(test_compile_virtual_arch_gives_no_cubin),
		cmocka_unit_test(test_compile_abi_header_on_include_path),
		cmocka_unit_test(test_compile_reference_kernels),
		cmocka_unit_test(test_compile_wgmma_serialized),
		cmocka_unit_test(test_compile_concurrent),
		cmocka_unit_test(test_version_and_options),
	};

	return cmocka_run_group_tests(tests, setup_group, NULL);
}
