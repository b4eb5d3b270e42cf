/* nvrtc.h - template source -> CUBIN for a target arch, with its resource usage.
 *
 * The only nvrtc.h user. Compiles with NVRTC (no nvcc at run time), asks ptxas
 * for its resource report (-Xptxas=-v) and parses registers, static shared
 * memory, stack frame and spills per kernel out of the log, so feasibility is
 * decided from the compiled reality without a GPU.
 *
 * Thread safety: ft_compile may run on several threads at once (each call owns
 * its nvrtcProgram).
 */
#ifndef FT_NVRTC_H
#define FT_NVRTC_H

#include <stddef.h>

#include "base/err.h"
#include "base/trial.h"

#define FT_MAX_DEFINES 32

struct ft_compile_req {
	const char *source_path;	/* the template file; its dir and kernel_templates/ (for
				 * fatune_abi.h) are on the include path */
	const char *arch;		/* "sm_89" */
	int ndefines;
	const char *define_names[FT_MAX_DEFINES];	/* -DNAME=VALUE, in this order */
	long long define_values[FT_MAX_DEFINES];
	const char *kernels[2];		/* entry points to report resources for and check; NULL-ended */
	long long param_bytes;		/* what each kernel must take: one struct of this many
					 * bytes (the ABI's params); 0: not checked */
	int noptions;			/* more NVRTC options (the space's compile.options) */
	const char *options[FT_MAX_COMPILE_OPTIONS];
	int nincludes;			/* more -I directories (the space's compile.include) */
	const char *includes[FT_MAX_INCLUDES];
};

struct ft_compile_out {
	int ok;				/* 1: cubin is set; 0: compile failed, see log */
	void *cubin;			/* malloc'd; caller frees with ft_compile_out_release */
	size_t cubin_size;
	char *log;			/* malloc'd NVRTC log (may be ""), never NULL after a call */
	struct ft_resources res[2];	/* per req->kernels[i]; -1 where not reported */
	char problem[512];		/* when !ok and the compiler said nothing useful: why
					 * (an entry point missing or of the wrong ABI, ptxas's
					 * silent failure); "" otherwise */
	double ms;			/* wall time of the compile */
};

/* Compiles req. Returns 0 when NVRTC ran (check out->ok: a template that does not
 * compile is a result, not an error); -1 with err set when it could not run at
 * all (unreadable template, NVRTC missing, out of memory). After a successful
 * compile the CUBIN's entry points are checked (cubin.h): a kernel of req that
 * is missing, or takes other than one param_bytes parameter, makes out->ok 0
 * with out->problem naming what was found. When NVRTC fails with a log that
 * holds no error (NVRTC drops ptxas's own errors), out->res still holds what
 * ptxas reported, the PTX is assembled again through nvJitLink (ptxas.h) to
 * recover ptxas's error, which is appended to out->log, and out->problem is
 * "ptxas error: <its first error>", or says that none could be recovered. */
int ft_compile(const struct ft_compile_req *req, struct ft_compile_out *out, struct ft_err *err);

void ft_compile_out_release(struct ft_compile_out *out);

/* "13.0" */
const char *ft_nvrtc_version(void);

/* The NVRTC options every compile uses besides -arch and -D (for cache keys and
 * the DB): writes them joined by spaces into buf. */
void ft_nvrtc_options(char *buf, size_t size);

/* Parses one ptxas -v log for kernel `name` into *r (exposed for tests). */
void ft_parse_ptxas_log(const char *log, const char *name, struct ft_resources *r);

#endif
