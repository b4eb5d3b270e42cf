/* nvrtc.c - compiling a template to a CUBIN with NVRTC and reading its resources.
 *
 * The only nvrtc.h user. Resources come from ptxas itself: every compile passes
 * -Xptxas=-v, whose report lands in the program log ("Used 96 registers, ...
 * 16384 bytes smem", "0 bytes stack frame, 0 bytes spill stores, ..."), which
 * ft_parse_ptxas_log reads per entry point. No GPU is needed at any point.
 */
#include "base/clock.h"
#include "compile/nvrtc.h"

#include <dlfcn.h>
#include <errno.h>
#include <libgen.h>
#include <math.h>
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config.h"
#include "compile/cubin.h"
#include "compile/ptxas.h"
#include "base/paths.h"

/* Templates are small; a file over this is not a kernel template. */
#define MAX_SOURCE_BYTES (4 << 20)

/* Options every compile shares (besides -arch, -I and -D). -default-device
 * treats unannotated functions as device code, as templates expect;
 * -Xptxas=-v asks for the resource report. */
static const char *const base_options[] = { "--std=c++17", "-default-device", "-Xptxas=-v" };
#define NBASE ((int)(sizeof(base_options) / sizeof(base_options[0])))

const char *ft_nvrtc_version(void)
{
	static char buf[32];
	int major = 0, minor = 0;

	if (!buf[0]) {
		if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS)
			return "unknown";
		snprintf(buf, sizeof(buf), "%d.%d", major, minor);
	}
	return buf;
}

void ft_nvrtc_options(char *buf, size_t size)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int i = 0; i < NBASE && n < size; i++)
		n += snprintf(buf + n, size - n, "%s%s", i ? " " : "", base_options[i]);
}

static char *read_file(const char *path, struct ft_err *err)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (!f) {
		ft_error(err, FT_EINPUT, "cannot read template '%s': %s", path, strerror(errno));
		return NULL;
	}
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		ft_error(err, FT_EFAIL, "cannot read template '%s': %s", path, strerror(errno));
		goto out;
	}
	if (n > MAX_SOURCE_BYTES) {
		ft_error(err, FT_EINPUT, "template '%s' is %ld bytes, over the %d limit", path, n,
			 MAX_SOURCE_BYTES);
		goto out;
	}
	buf = malloc((size_t)n + 1);
	if (!buf) {
		ft_error(err, FT_EFAIL, "out of memory reading '%s'", path);
		goto out;
	}
	if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
		ft_error(err, FT_EFAIL, "short read of template '%s'", path);
		free(buf);
		buf = NULL;
		goto out;
	}
	buf[n] = '\0';
out:
	fclose(f);
	return buf;
}

/* Reads "N bytes <what>" that ends right before `what` at or after p. */
static int bytes_before(const char *from, const char *to, const char *what)
{
	const char *hit = strstr(from, what);
	const char *q;

	if (!hit || (to && hit > to))
		return -1;
	q = hit;
	while (q > from && q[-1] == ' ')
		q--;
	while (q > from && q[-1] >= '0' && q[-1] <= '9')
		q--;
	return (int)strtol(q, NULL, 10);
}

/* ptxas's note that it serialized a kernel's wgmma.mma_async: a line holding
 * "wgmma", "serialized" and "'name'" ("ptxas info : (C7520) Potential
 * Performance Loss: wgmma.mma_async instructions are serialized due to ... in
 * the function 'fatune_sm90_fwd'"; its siblings differ only after "due to").
 * ptxas writes it before the entry's own lines, so the whole log is read.
 * Returns the note's number (7520), 1 for a note without one, 0 for none. */
static int wgmma_note(const char *log, const char *name)
{
	char quoted[256];
	const char *line = log;

	snprintf(quoted, sizeof(quoted), "'%s'", name);
	while (line && *line) {
		const char *eol = strchr(line, '\n');
		size_t n = eol ? (size_t)(eol - line) : strlen(line);
		char buf[1024];
		const char *code;

		snprintf(buf, sizeof(buf), "%.*s", (int)(n < sizeof(buf) ? n : sizeof(buf) - 1), line);
		if (strstr(buf, "wgmma") && strstr(buf, "serialized") && strstr(buf, quoted)) {
			code = strstr(buf, "(C");
			if (code && code[2] >= '0' && code[2] <= '9')
				return (int)strtol(code + 2, NULL, 10);
			return 1;
		}
		line = eol ? eol + 1 : NULL;
	}
	return 0;
}

void ft_parse_ptxas_log(const char *log, const char *name, struct ft_resources *r)
{
	char key[256];
	const char *entry, *next, *props, *used;

	r->regs = r->smem_static = r->stack_bytes = r->spill_stores = r->spill_loads = -1;
	r->wgmma_serialized = -1;
	snprintf(key, sizeof(key), "Compiling entry function '%s'", name);
	entry = strstr(log, key);
	if (!entry)
		return;
	next = strstr(entry + 1, "Compiling entry function '");
	snprintf(key, sizeof(key), "Function properties for %s\n", name);
	props = strstr(entry, key);
	if (props && (!next || props < next)) {
		const char *eol = strchr(props + strlen(key), '\n');
		r->stack_bytes = bytes_before(props, eol, "bytes stack frame");
		r->spill_stores = bytes_before(props, eol, "bytes spill stores");
		r->spill_loads = bytes_before(props, eol, "bytes spill loads");
	}
	used = strstr(entry, "Used ");
	if (used && (!next || used < next)) {
		const char *eol = strchr(used, '\n');
		r->regs = (int)strtol(used + 5, NULL, 10);
		r->smem_static = bytes_before(used, eol, "bytes smem");
		if (r->smem_static < 0)
			r->smem_static = 0; /* ptxas omits smem when there is none */
	}
	/* known only with the entry's report: a log cut short says nothing */
	if (r->regs >= 0 || r->stack_bytes >= 0)
		r->wgmma_serialized = wgmma_note(log, name);
}

/* After a compile: every requested kernel must be an entry point of the
 * CUBIN taking one parameter of req->param_bytes bytes. */
static void check_entries(const struct ft_compile_req *req, struct ft_compile_out *out)
{
	for (int i = 0; i < 2 && req->kernels[i]; i++) {
		int nparams = 0;
		long long bytes = ft_cubin_param_bytes(out->cubin, out->cubin_size, req->kernels[i],
						       &nparams);
		char found[300];

		if (bytes == -2) {
			snprintf(out->problem, sizeof(out->problem),
				 "NVRTC's output for '%s' is not a CUBIN fatune can read", req->arch);
		} else if (bytes == -1) {
			ft_cubin_entries(out->cubin, out->cubin_size, found, sizeof(found));
			snprintf(out->problem, sizeof(out->problem),
				 "entry point '%s' is not in the compiled template; it has %s%s: declare "
				 "the kernel extern \"C\" __global__ (C++ names are mangled) and spell it "
				 "as the space does",
				 req->kernels[i], found[0] ? "" : "no entry point", found);
		} else if (req->param_bytes > 0 && (bytes != req->param_bytes || nparams != 1)) {
			snprintf(out->problem, sizeof(out->problem),
				 "kernel '%s' takes %d parameter%s of %lld bytes, but its ABI passes one "
				 "struct fatune_attn_params of %lld bytes: a template built for another "
				 "ABI version? declare the version it speaks as template.abi "
				 "(fatune_abi.h)",
				 req->kernels[i], nparams, nparams == 1 ? "" : "s", bytes,
				 req->param_bytes);
		} else {
			continue;
		}
		out->ok = 0;
		free(out->cubin);
		out->cubin = NULL;
		out->cubin_size = 0;
		return;
	}
}

/* The directory of the NVRTC library this process uses (nvJitLink lies next
 * to it in every toolkit), into buf; "" when unknown. */
static const char *nvrtc_dir(char *buf, size_t size)
{
	Dl_info info;
	char *slash;

	buf[0] = '\0';
	if (dladdr((void *)nvrtcVersion, &info) && info.dli_fname) {
		snprintf(buf, size, "%s", info.dli_fname);
		slash = strrchr(buf, '/');
		if (slash)
			*slash = '\0';
		else
			buf[0] = '\0';
	}
	return buf;
}

/* NVRTC failed and its log holds no error: ptxas refused the PTX, and NVRTC
 * dropped what it said. The PTX is assembled again through nvJitLink
 * (ptxas.h), whose error log is appended to out->log; out->problem gets its
 * first error, or says what an empty log means. */
static void ptxas_problem(nvrtcProgram prog, const struct ft_compile_req *req,
			  struct ft_compile_out *out)
{
	char dir[FT_PATH_MAX], first[400];
	char *ptx = NULL, *errors = NULL, *log;
	size_t size = 0;

	if (nvrtcGetPTXSize(prog, &size) == NVRTC_SUCCESS && size > 1 && (ptx = malloc(size)) &&
	    nvrtcGetPTX(prog, ptx) == NVRTC_SUCCESS)
		errors = ft_ptxas_errors(ptx, size, req->arch, nvrtc_dir(dir, sizeof(dir)));
	free(ptx);
	if (errors && ft_ptxas_first_error(errors, first, sizeof(first))[0]) {
		size_t n = strlen(out->log), m = strlen(errors);
		static const char head[] = "\nptxas, run again through nvJitLink (NVRTC drops its errors):\n";
		if ((log = realloc(out->log, n + sizeof(head) + m + 1))) {
			memcpy(log + n, head, sizeof(head) - 1);
			memcpy(log + n + sizeof(head) - 1, errors, m + 1);
			out->log = log;
		}
		snprintf(out->problem, sizeof(out->problem), "ptxas error: %s%s", first,
			 strstr(first, "too much shared data")
				 ? " (static __shared__ is capped at 48 KB on every arch: use dynamic "
				   "shared memory, or a config that fits)"
				 : "");
	} else {
		snprintf(out->problem, sizeof(out->problem),
			 "NVRTC failed and its log holds no error: ptxas refused the code without a "
			 "message fatune could recover (NVRTC drops ptxas's own errors%s); compile "
			 "the template with nvcc -arch=%s -Xptxas -v to see it",
			 errors ? ", and nvJitLink accepted the PTX"
				: "; nvJitLink, which would repeat them, is not installed",
			 req->arch);
	}
	free(errors);
}

int ft_compile(const struct ft_compile_req *req, struct ft_compile_out *out, struct ft_err *err)
{
	const char *opts[NBASE + 5 + FT_MAX_DEFINES + FT_MAX_COMPILE_OPTIONS + FT_MAX_INCLUDES];
	char incbuf[FT_MAX_INCLUDES][FT_PATH_MAX + 4];
	char optbuf[FT_MAX_DEFINES][FT_NAME_MAX + 32];
	char arch_opt[64], inc_tpl[FT_PATH_MAX + 4], inc_abi[FT_PATH_MAX + 32], inc_cuda[FT_PATH_MAX + 4],
	     cudainc[FT_PATH_MAX];
	char dir[FT_PATH_MAX], base[FT_PATH_MAX];
	nvrtcProgram prog = NULL;
	nvrtcResult rc;
	size_t size;
	char *src;
	int nopt = 0, ret = -1;
	double t0 = ft_mono_ms();

	memset(out, 0, sizeof(*out));
	for (int i = 0; i < 2; i++)
		out->res[i] = (struct ft_resources){ -1, -1, -1, -1, -1, -1 };
	/* the log is never NULL after a call, whatever happens */
	if (!(out->log = calloc(1, 1)))
		return ft_error(err, FT_EFAIL, "out of memory compiling '%s'", req->source_path);
	if (req->ndefines > FT_MAX_DEFINES)
		return ft_error(err, FT_EINPUT, "too many -D defines (%d > %d)", req->ndefines,
				FT_MAX_DEFINES);
	src = read_file(req->source_path, err);
	if (!src)
		return -1;

	snprintf(dir, sizeof(dir), "%s", req->source_path);
	snprintf(base, sizeof(base), "%s", req->source_path);
	snprintf(arch_opt, sizeof(arch_opt), "-arch=%s", req->arch);
	snprintf(inc_tpl, sizeof(inc_tpl), "-I%s", dirname(dir));
	snprintf(inc_cuda, sizeof(inc_cuda), "-I%s", ft_cuda_include(cudainc, sizeof(cudainc)));
	opts[nopt++] = arch_opt;
	for (int i = 0; i < NBASE; i++)
		opts[nopt++] = base_options[i];
	/* fatune_abi.h (the kernel ABI) is always on the include path */
	snprintf(inc_abi, sizeof(inc_abi), "-I%s/kernel_templates", ft_data_dir());
	opts[nopt++] = inc_tpl;
	opts[nopt++] = inc_abi;
	opts[nopt++] = inc_cuda;
	for (int i = 0; i < req->nincludes && i < FT_MAX_INCLUDES; i++) {
		snprintf(incbuf[i], sizeof(incbuf[i]), "-I%s", req->includes[i]);
		opts[nopt++] = incbuf[i];
	}
	for (int i = 0; i < req->ndefines; i++) {
		snprintf(optbuf[i], sizeof(optbuf[i]), "-D%s=%lld", req->define_names[i],
			 req->define_values[i]);
		opts[nopt++] = optbuf[i];
	}
	for (int i = 0; i < req->noptions && i < FT_MAX_COMPILE_OPTIONS; i++)
		opts[nopt++] = req->options[i];

	rc = nvrtcCreateProgram(&prog, src, basename(base), 0, NULL, NULL);
	if (rc != NVRTC_SUCCESS) {
		ft_error(err, FT_EFAIL, "nvrtcCreateProgram failed for '%s': %s", req->source_path,
			 nvrtcGetErrorString(rc));
		goto out;
	}
	rc = nvrtcCompileProgram(prog, nopt, opts);
	if (rc != NVRTC_SUCCESS && rc != NVRTC_ERROR_COMPILATION) {
		ft_error(err, FT_EFAIL, "nvrtcCompileProgram failed for '%s': %s (is the CUDA toolkit complete?)",
			 req->source_path, nvrtcGetErrorString(rc));
		goto out;
	}
	free(out->log);
	out->log = NULL;
	if (nvrtcGetProgramLogSize(prog, &size) != NVRTC_SUCCESS || !(out->log = malloc(size + 1)) ||
	    nvrtcGetProgramLog(prog, out->log) != NVRTC_SUCCESS) {
		free(out->log);
		out->log = NULL; /* the cleanup below gives back an empty log */
		ft_error(err, FT_EFAIL, "cannot read the NVRTC log of '%s'", req->source_path);
		goto out;
	}
	out->log[size] = '\0';
	if (rc == NVRTC_SUCCESS) {
		nvrtcResult r2 = nvrtcGetCUBINSize(prog, &size);
		if (r2 != NVRTC_SUCCESS || size == 0 || !(out->cubin = malloc(size)) ||
		    nvrtcGetCUBIN(prog, out->cubin) != NVRTC_SUCCESS) {
			ft_error(err, FT_EFAIL, "nvrtcGetCUBIN failed for '%s' (%s): use a real arch such as sm_89, not compute_XX",
				 req->source_path, nvrtcGetErrorString(r2));
			goto out;
		}
		out->cubin_size = size;
		out->ok = 1;
		for (int i = 0; i < 2 && req->kernels[i]; i++)
			ft_parse_ptxas_log(out->log, req->kernels[i], &out->res[i]);
		check_entries(req, out);
	} else {
		for (int i = 0; i < 2 && req->kernels[i]; i++)
			ft_parse_ptxas_log(out->log, req->kernels[i], &out->res[i]);
		if (!strstr(out->log, "error"))
			ptxas_problem(prog, req, out);
	}
	ret = 0;
out:
	if (prog)
		nvrtcDestroyProgram(&prog);
	free(src);
	out->ms = ft_mono_ms() - t0;
	if (ret && !out->log)
		out->log = calloc(1, 1);
	if (ret) {
		free(out->cubin);
		out->cubin = NULL;
		out->ok = 0;
	}
	return ret;
}

void ft_compile_out_release(struct ft_compile_out *out)
{
	free(out->cubin);
	free(out->log);
	out->cubin = NULL;
	out->log = NULL;
}
