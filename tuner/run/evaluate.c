/* evaluate.c - verifying and timing one candidate inside the worker (see evaluate.h).
 *
 * Inputs Q, K, V come from reference.cu's fill kernel (a pure function of the
 * seed) and the reference output from its fp32 attention; both stay on the GPU
 * for as long as consecutive jobs share (shape, seed). Verification runs on
 * the GPU too: reference.cu's check kernel reduces the candidate's output
 * against the reference to a few sums (fp64), and only those 48 bytes come
 * back, never O. Timing is described in docs/timing.md. Any CUDA error ends
 * the job as `crashed` and makes the worker exit, because a fault (illegal
 * address) loses the context.
 */
#include "base/clock.h"
#include "run/evaluate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compile/cache.h"
#include "fatune_abi.h"
#include "compile/nvrtc.h"
#include "run/modules.h"
#include "run/sampling.h"
#include "run/sweep.h"
#include "run/worker.h"

/* fill kernel launch: 256 threads per block (8 warps, full occupancy on every
 * supported arch) and at most 4096 blocks; the kernel is grid-stride, so the
 * cap only bounds the grid, and 4096 x 256 threads cover every resident slot
 * of a 132-SM GPU (132 x 2048) several times */
#define FILL_THREADS 256
#define FILL_MAX_BLOCKS 4096
/* reference kernel: 128 threads per block, tiles of 16 query rows and
 * chunks of 32 keys are fixed by reference.cu (REF_THREADS, REF_TILE_Q,
 * REF_CHUNK); tiles beyond this many blocks are grid-strided */
#define REF_THREADS 128
#define REF_TILE_Q 16
#define REF_CHUNK 32
#define REF_MAX_BLOCKS (1 << 20)
/* check kernel: 256 threads per block is fixed by reference.cu
 * (CHECK_THREADS); 1024 blocks of 256 fill a 132-SM GPU several times over,
 * and the kernel is grid-stride, so larger outputs only loop more */
#define CHECK_THREADS 256
#define CHECK_MAX_BLOCKS 1024
#define REF_MAX_D 256

/* The reference kernel's dynamic shared memory for head dim d (reference.cu:
 * the tile's Q and a chunk of K or V in rows of ref_ld(d) floats, then the
 * chunk's probabilities); 51,968 bytes at D 256, over the 48 KB that needs no
 * opt-in, so ft_eval_open raises the kernel's limit once (ref_smem_limit). */
static unsigned ref_smem_bytes(int d)
{
	const unsigned ld = (unsigned)(d + 3) / 4 * 4 + 4;

	return ((REF_TILE_Q + REF_CHUNK) * ld + REF_CHUNK * REF_TILE_Q) * 4;
}

/* What the reference kernel's limit is raised to: enough for D 256, or the
 * device's opt-in limit when that is less (none of CUDA 13's archs, sm_75
 * and newer, has less than 64 KB; a launch past it would fail with the
 * driver's error naming the kernel and its bytes). */
static long long ref_smem_limit(const struct ft_device_limits *lim)
{
	long long want = ref_smem_bytes(REF_MAX_D);

	return lim->smem_optin > 0 && lim->smem_optin < want ? lim->smem_optin : want;
}

/* tensor ids of the fill kernel: Q, K, V get independent values */
enum { TENSOR_Q = 1, TENSOR_K = 2, TENSOR_V = 3 };
/* NaN bit patterns used as poison: 0x7fff is a NaN in fp16 and in bf16, and
 * 0x7fffffff in fp32; a kernel that leaves an output unwritten leaves a NaN */
#define POISON16 0x7fffu
#define POISON32 0x7fffffffu
/* the L2 flush writes twice the L2 size, so no line of the previous call can
 * survive; 64 MB when the driver does not report the L2 size */
#define FLUSH_FALLBACK_BYTES (64u << 20)
/* the largest tensor fatune allocates: 2^31 elements (shape.c's bound) */
#define MAX_ELEMS 2147483648LL
/* the largest workspace (feasibility.c refuses larger formulas first) */
#define MAX_WORKSPACE (4LL << 30)
/* a zero_once workspace is read back in pieces of this many bytes */
#define WS_CHECK_CHUNK ((size_t)1 << 20)

struct inputs {
	int valid;
	struct ft_shape shape;
	unsigned long long seed;
	size_t n;		/* elements of Q and O: B*H*S*D */
	size_t nkv;		/* elements of K and V: B*H_kv*S_kv*D */
	long long qs[3], kvs[3];	/* strides (batch, head, row) of Q/O and of K/V */
	ft_devptr q, k, v;	/* 16-bit, laid out as the shape says */
	ft_devptr ref;		/* fp32 reference output, laid out as O */
	ft_devptr o;		/* the candidate's output, 16-bit */
	float *ref_host;	/* the reference on the host: the self-test only */
};

/* reference.cu's struct fatune_check_sums, as the check kernel writes it */
struct check_sums {
	double num, den, onorm;
	unsigned long long nonfinite;
	uint32_t max_abs_bits, pad;
	unsigned long long worst_window;	/* fp32 bits of its squared error << 32 | its index */
};

struct ft_eval {
	struct ft_gpu *gpu;
	struct ft_modules mods;		/* candidate modules kept (legacy: none) */
	double warmup_hot_ms;		/* FT_EVAL_WARMUP_HOT_MS, or the legacy 1 ms */
	int one_by_one;			/* FATUNE_EVAL_SAMPLES=one-by-one: each warm sample
					 * waited for before the next (samples_one_by_one) */
	struct ft_device_limits lim;
	struct ft_gpu_module *ref_mod;
	struct ft_gpu_func *fill, *attn, *check;
	ft_devptr sums;				/* one struct check_sums */
	int keep_ref_host;			/* the self-test compares on the host */
	struct inputs in;
	ft_devptr o_partial, lse_partial;	/* split-KV scratch, grown on demand */
	size_t o_partial_bytes, lse_partial_bytes;
	ft_devptr workspace;			/* the kernel's workspace, grown on demand */
	size_t workspace_bytes;
	ft_devptr flush;			/* L2 flush buffer for cold timing */
	size_t flush_bytes;
	double last_timed_ms;			/* monotonic time the last timing ended, 0: never */
};

/* Whether the GPU has just been busy timing (see evaluate.h). */
static int hot(const struct ft_eval *ev)
{
	return ev->last_timed_ms > 0 && ft_mono_ms() - ev->last_timed_ms < FT_EVAL_HOT_WINDOW_MS;
}

/* Minimum warm-up: short when the GPU is hot, the job's heat at least. */
static double warmup_min_ms(const struct ft_eval *ev, const struct ft_job *job)
{
	double ms = hot(ev) ? ev->warmup_hot_ms : FT_EVAL_WARMUP_MIN_MS;

	return job->heat_ms > ms ? job->heat_ms : ms;
}

/* ---- CPU-side pieces ------------------------------------------------------ */

void ft_eval_plan(double single_us, int launches, int samples, int warmup, int cold,
		  double sample_max_us, struct ft_timing_plan *p)
{
	double k, r_fit, call_ms;

	if (!(single_us > 0))
		single_us = 1; /* an event pair cannot time less than ~1 us */
	if (!(sample_max_us > 0))
		sample_max_us = FT_EVAL_SAMPLE_MAX_US;
	if (launches > 0) {
		k = floor(sample_max_us / single_us);
		k = k < launches ? k : launches;
	} else {
		k = ceil(FT_EVAL_SAMPLE_TARGET_US / single_us);
	}
	if (k > FT_EVAL_MAX_LAUNCHES)
		k = FT_EVAL_MAX_LAUNCHES;
	if (cold || k < 1)
		k = 1;
	p->launches = (int)k;
	call_ms = single_us / 1e3 * p->launches;
	r_fit = floor(FT_EVAL_SAMPLING_BUDGET_MS / call_ms);
	if (r_fit < FT_EVAL_MIN_SAMPLES)
		r_fit = FT_EVAL_MIN_SAMPLES;
	p->samples = samples < r_fit ? samples : (int)r_fit;
	p->sample_ms = call_ms;
	/* warm-up, the samples, and the check after timing (one call's worth) */
	p->expected_ms = (warmup + p->samples) * call_ms + FT_EVAL_WARMUP_MIN_MS + single_us / 1e3;
}

void ft_job_timing_defaults(struct ft_job *job)
{
	job->timing = 1;
	job->warmup = FT_EVAL_WARMUP;
	job->samples = FT_EVAL_SAMPLES;
	job->launches_per_sample = FT_EVAL_LAUNCHES_AUTO;
	job->cold = 0;
	job->sample_max_us = 0;
	job->quick_samples = 0;
	job->cut_above_us = 0;
	job->stable_rel = 0;
}

/* ---- GPU side --------------------------------------------------------------- */

/* A CUDA error: the job is crashed and the worker exits (returns 1). */
static int cuda_crash(struct ft_job_result *res, const struct ft_err *err)
{
	res->status = FT_ST_CRASHED;
	snprintf(res->reason, sizeof(res->reason), "%s", err->msg);
	return 1;
}

/* A job fatune should never have sent: crashed, but the worker goes on. */
static int bad_job(struct ft_job_result *res, const char *what)
{
	res->status = FT_ST_CRASHED;
	snprintf(res->reason, sizeof(res->reason), "bad job: %s", what);
	return 2;
}

static void free_inputs(struct ft_eval *ev)
{
	struct inputs *in = &ev->in;

	ft_gpu_free(ev->gpu, in->q);
	ft_gpu_free(ev->gpu, in->k);
	ft_gpu_free(ev->gpu, in->v);
	ft_gpu_free(ev->gpu, in->ref);
	ft_gpu_free(ev->gpu, in->o);
	free(in->ref_host);
	memset(in, 0, sizeof(*in));
}

int ft_eval_open(struct ft_eval **out, struct ft_gpu *gpu, const struct ft_device_limits *lim,
		 const char *reference_path, struct ft_err *err)
{
	struct ft_eval *ev;
	char arch[32];
	int legacy, cached, rc;
	void *image = NULL;
	size_t image_size = 0;

	*out = NULL;
	ev = calloc(1, sizeof(*ev));
	if (!ev)
		return ft_error(err, FT_EFAIL, "out of memory starting the evaluator");
	ev->gpu = gpu;
	ev->lim = *lim;
	/* FATUNE_EVAL_COSTS=legacy: the fixed costs as they were (evaluate.h) */
	legacy = getenv("FATUNE_EVAL_COSTS") && !strcmp(getenv("FATUNE_EVAL_COSTS"), "legacy");
	ev->mods.nslots = legacy ? 0 : FT_MODULE_SLOTS;
	ev->mods.ahead_on = !legacy && !(getenv("FATUNE_LOAD_AHEAD") &&
					 !strcmp(getenv("FATUNE_LOAD_AHEAD"), "0"));
	ev->warmup_hot_ms = legacy ? FT_EVAL_WARMUP_HOT_LEGACY_MS : FT_EVAL_WARMUP_HOT_MS;
	ev->one_by_one = getenv("FATUNE_EVAL_SAMPLES") && !strcmp(getenv("FATUNE_EVAL_SAMPLES"), "one-by-one");
	snprintf(arch, sizeof(arch), "sm_%d", lim->cc);
	if (ft_modules_reference(reference_path, arch, !legacy, &image, &image_size, &cached, err)) {
		free(ev);
		return -1;
	}
	rc = ft_gpu_module_load_data(gpu, image, reference_path, &ev->ref_mod, err);
	free(image);
	if (rc) {
		free(ev);
		return -1;
	}
	if (ft_gpu_function(gpu, ev->ref_mod, "fatune_ref_fill", reference_path, &ev->fill, err) ||
	    ft_gpu_function(gpu, ev->ref_mod, "fatune_ref_attention", reference_path, &ev->attn,
			    err) ||
	    ft_gpu_function(gpu, ev->ref_mod, "fatune_ref_check", reference_path, &ev->check, err) ||
	    ft_gpu_func_dynamic_smem(gpu, ev->attn, "fatune_ref_attention", ref_smem_limit(lim),
				     err) ||
	    ft_gpu_alloc(gpu, sizeof(struct check_sums), "the check's sums", &ev->sums, err)) {
		ft_eval_close(ev);
		return -1;
	}
	*out = ev;
	return 0;
}

void ft_eval_close(struct ft_eval *ev)
{
	if (!ev)
		return;
	free_inputs(ev);
	ft_modules_clear(&ev->mods, ev->gpu);
	ft_gpu_free(ev->gpu, ev->o_partial);
	ft_gpu_free(ev->gpu, ev->lse_partial);
	ft_gpu_free(ev->gpu, ev->workspace);
	ft_gpu_free(ev->gpu, ev->flush);
	ft_gpu_free(ev->gpu, ev->sums);
	ft_gpu_module_unload(ev->gpu, ev->ref_mod);
	free(ev);
}

static int fill(struct ft_eval *ev, ft_devptr x, size_t n, unsigned long long seed,
		unsigned long long tensor, int bf16, struct ft_err *err)
{
	long long nn = (long long)n;
	unsigned grid[3] = { 1, 1, 1 }, block[3] = { FILL_THREADS, 1, 1 };
	void *args[] = { &x, &nn, &seed, &tensor, &bf16 };
	size_t blocks = (n + FILL_THREADS - 1) / FILL_THREADS;

	grid[0] = (unsigned)(blocks < FILL_MAX_BLOCKS ? (blocks ? blocks : 1) : FILL_MAX_BLOCKS);
	return ft_gpu_launch(ev->gpu, ev->fill, "fatune_ref_fill", grid, block, 0, args, err);
}

/* The ABI v2 view of the inputs (tensors, sizes, strides, scale); the caller
 * adds what belongs to one candidate. o is the output to write. */
static void base_params(const struct ft_eval *ev, ft_devptr o, struct fatune_attn_params_v2 *p)
{
	const struct inputs *in = &ev->in;
	const struct ft_shape *sh = &in->shape;

	memset(p, 0, sizeof(*p));
	p->q = (const void *)(uintptr_t)in->q;
	p->k = (const void *)(uintptr_t)in->k;
	p->v = (const void *)(uintptr_t)in->v;
	p->o = (void *)(uintptr_t)o;
	p->q_stride_b = p->o_stride_b = in->qs[0];
	p->q_stride_h = p->o_stride_h = in->qs[1];
	p->q_stride_s = p->o_stride_s = in->qs[2];
	p->k_stride_b = p->v_stride_b = in->kvs[0];
	p->k_stride_h = p->v_stride_h = in->kvs[1];
	p->k_stride_s = p->v_stride_s = in->kvs[2];
	p->b = sh->b;
	p->h = sh->h;
	p->h_kv = sh->h_kv;
	p->s_q = sh->s;
	p->s_kv = sh->s_kv;
	p->d = sh->d;
	p->num_splits = 1;
	p->causal_offset = sh->s_kv - sh->s;
	p->scale = (float)(1.0 / sqrt((double)sh->d));
	p->scale_log2 = (float)(1.4426950408889634 / sqrt((double)sh->d)); /* log2(e)/sqrt(D) */
	p->layout = sh->layout;
	p->abi_version = 2;
}

/* Makes inputs, reference and output buffer for (shape, seed) unless cached. */
static int make_inputs(struct ft_eval *ev, const struct ft_shape *sh, unsigned long long seed,
		       struct ft_err *err)
{
	struct inputs *in = &ev->in;
	size_t n = (size_t)sh->b * sh->h * sh->s * sh->d;
	size_t nkv = (size_t)sh->b * sh->h_kv * sh->s_kv * sh->d;
	long long tiles = (long long)sh->b * sh->h * ((sh->s + REF_TILE_Q - 1) / REF_TILE_Q);
	int causal = sh->causal, bf16 = sh->dtype == FT_BF16;
	unsigned grid[3] = { 1, 1, 1 }, block[3] = { REF_THREADS, 1, 1 };
	struct fatune_attn_params_v2 p;
	void *args[] = { &p, &causal, &bf16 };

	if (in->valid && in->seed == seed && !memcmp(&in->shape, sh, sizeof(*sh)))
		return 0;
	free_inputs(ev);
	if (ev->keep_ref_host && !(in->ref_host = malloc(n * sizeof(float))))
		return ft_error(err, FT_EFAIL, "out of host memory for %zu reference elements", n);
	if (ft_gpu_alloc(ev->gpu, n * 2, "Q", &in->q, err) ||
	    ft_gpu_alloc(ev->gpu, nkv * 2, "K", &in->k, err) ||
	    ft_gpu_alloc(ev->gpu, nkv * 2, "V", &in->v, err) ||
	    ft_gpu_alloc(ev->gpu, n * 4, "reference O", &in->ref, err) ||
	    ft_gpu_alloc(ev->gpu, n * 2, "O", &in->o, err))
		return -1;
	if (fill(ev, in->q, n, seed, TENSOR_Q, bf16, err) ||
	    fill(ev, in->k, nkv, seed, TENSOR_K, bf16, err) ||
	    fill(ev, in->v, nkv, seed, TENSOR_V, bf16, err))
		return -1;
	in->shape = *sh;
	in->n = n;
	in->nkv = nkv;
	ft_shape_strides(sh, 0, in->qs);
	ft_shape_strides(sh, 1, in->kvs);
	base_params(ev, in->ref, &p);
	grid[0] = (unsigned)(tiles < REF_MAX_BLOCKS ? tiles : REF_MAX_BLOCKS);
	if (ft_gpu_launch(ev->gpu, ev->attn, "fatune_ref_attention", grid, block,
			  ref_smem_bytes(sh->d), args, err) ||
	    ft_gpu_sync(ev->gpu, "the reference attention", err) ||
	    (in->ref_host &&
	     ft_gpu_download(ev->gpu, in->ref_host, in->ref, n * 4, "the reference output", err)))
		return -1;
	in->seed = seed;
	in->valid = 1;
	return 0;
}

/* Checks what the GPU cannot be trusted to reject cleanly. NULL when fine. */
static const char *check_job(const struct ft_eval *ev, const struct ft_job *job, char *buf,
			     size_t size)
{
	const struct ft_shape *sh = &job->shape;
	const long long max_x = 2147483647LL, max_yz = 65535; /* CUDA grid limits */

	if (sh->b < 1 || sh->h < 1 || sh->s < 1 || sh->d < 1 || sh->d > REF_MAX_D ||
	    sh->s_kv < 1 || sh->h_kv < 1 || sh->h % sh->h_kv)
		snprintf(buf, size, "shape %dx%dx%dx%d (kv %d heads x %d): sizes must be >= 1, H a multiple of kv_heads and D <= %d (the reference's limit)",
			 sh->b, sh->h, sh->s, sh->d, sh->h_kv, sh->s_kv, REF_MAX_D);
	else if ((long long)sh->b * sh->h * sh->s * sh->d > MAX_ELEMS ||
		 (long long)sh->b * sh->h_kv * sh->s_kv * sh->d > MAX_ELEMS)
		snprintf(buf, size, "shape %dx%dx%dx%d has more than 2^31 elements", sh->b, sh->h,
			 sh->s, sh->d);
	else if (job->abi != 1 && job->abi != 2)
		snprintf(buf, size, "ABI version %d (fatune knows 1 and 2)", job->abi);
	else if (job->abi == 1 && !ft_shape_is_plain(sh))
		snprintf(buf, size, "an ABI v1 kernel cannot run S_q != S_kv, H != H_kv or layout bshd");
	else if (job->workspace_bytes < 0 || job->workspace_bytes > MAX_WORKSPACE ||
		 (job->workspace_bytes && job->abi < 2) || job->workspace_init < FT_WS_ZERO ||
		 job->workspace_init > FT_WS_ZERO_ONCE)
		snprintf(buf, size, "workspace of %lld bytes, init %d (0..4 GiB, ABI v2 only, init 0..%d)",
			 job->workspace_bytes, job->workspace_init, FT_WS_ZERO_ONCE);
	else if ((sh->causal != 0 && sh->causal != 1) || (sh->dtype != FT_FP16 && sh->dtype != FT_BF16))
		snprintf(buf, size, "causal %d / dtype %d out of range", sh->causal, (int)sh->dtype);
	else if (job->num_splits < 1 ||
		 (job->num_splits > 1 && job->combine_threads && !job->combine_kernel[0]))
		snprintf(buf, size, "num_splits %d with %lld combine threads needs a combine kernel ('%s')",
			 job->num_splits, job->combine_threads, job->combine_kernel);
	else if (job->threads < 1 || job->threads > ev->lim.threads_per_block)
		snprintf(buf, size, "%lld threads per block (the device allows 1 to %d)", job->threads,
			 ev->lim.threads_per_block);
	else if (job->grid[0] < 1 || job->grid[0] > max_x || job->grid[1] < 1 ||
		 job->grid[1] > max_yz || job->grid[2] < 1 || job->grid[2] > max_yz)
		snprintf(buf, size, "grid [%lld, %lld, %lld] outside [1..2^31-1, 1..65535, 1..65535]",
			 job->grid[0], job->grid[1], job->grid[2]);
	else if (job->num_splits > 1 && job->combine_threads &&
		 (job->combine_threads < 1 || job->combine_threads > ev->lim.threads_per_block ||
		  job->combine_grid[0] < 1 || job->combine_grid[0] > max_x ||
		  job->combine_grid[1] < 1 || job->combine_grid[1] > max_yz ||
		  job->combine_grid[2] < 1 || job->combine_grid[2] > max_yz))
		snprintf(buf, size, "combine launch %lld threads, grid [%lld, %lld, %lld] out of range",
			 job->combine_threads, job->combine_grid[0], job->combine_grid[1],
			 job->combine_grid[2]);
	else if (job->combine_pdl && ev->lim.cc < 90)
		snprintf(buf, size, "a programmatic dependent combine launch (launch.combine_pdl) on sm_%d: it needs sm_90 or newer",
			 ev->lim.cc);
	else if (job->dynamic_smem < 0 || job->dynamic_smem > ev->lim.smem_optin)
		snprintf(buf, size, "%lld bytes of dynamic shared memory (the device allows up to %d)",
			 job->dynamic_smem, ev->lim.smem_optin);
	else if (job->timing && (job->samples < 1 || job->samples > FT_EVAL_MAX_SAMPLES ||
				 job->warmup < 0 || job->launches_per_sample < 0 ||
				 job->launches_per_sample > FT_EVAL_MAX_LAUNCHES))
		snprintf(buf, size, "timing counts out of range: samples %d (1..%d), warmup %d, launches_per_sample %d (0..%d)",
			 job->samples, FT_EVAL_MAX_SAMPLES, job->warmup, job->launches_per_sample,
			 FT_EVAL_MAX_LAUNCHES);
	else if (job->quick_samples < 0 || job->quick_samples > job->samples ||
		 !(job->cut_above_us >= 0) || !isfinite(job->cut_above_us) ||
		 !(job->stable_rel >= 0 && job->stable_rel < 1))
		snprintf(buf, size, "early stop out of range: quick_samples %d (0..%d), cut_above_us %g (>= 0), stable_rel %g (0..1)",
			 job->quick_samples, job->samples, job->cut_above_us, job->stable_rel);
	else
		return NULL;
	return buf;
}

int ft_eval_prepare(struct ft_eval *ev, const struct ft_job *job, struct ft_job_result *res)
{
	struct ft_err err = { 0 };
	char buf[400];
	const char *bad = check_job(ev, job, buf, sizeof(buf));

	if (bad)
		return bad_job(res, bad);
	if (make_inputs(ev, &job->shape, job->seed, &err)) {
		ev->in.valid = 0;
		return cuda_crash(res, &err);
	}
	return 0;
}

/* The candidate being evaluated. */
struct run {
	struct ft_eval *ev;
	const struct ft_job *job;
	struct ft_gpu_func *main_fn, *combine_fn;
	struct fatune_attn_params_v1 p1;	/* what the kernels get, by the job's ABI */
	struct fatune_attn_params_v2 p2;
	void *args[1];
	unsigned grid[3], block[3], cgrid[3], cblock[3];
	unsigned smem;
	struct ft_job_result *res;	/* where the phase times go */
	int taken;			/* timed samples taken (sampled()) */
};

/* One call: the workspace zeroed when the space asks (init zero), the main
 * kernel, then the combine kernel when split and the candidate has one
 * (combine_threads > 0), with programmatic dependent launch when the
 * candidate's launch.combine_pdl says so. */
static int call(struct run *r, struct ft_err *err)
{
	if (r->job->workspace_bytes && r->job->workspace_init == FT_WS_ZERO &&
	    ft_gpu_memset8(r->ev->gpu, r->ev->workspace, 0, (size_t)r->job->workspace_bytes,
			   "the workspace", err))
		return -1;
	if (ft_gpu_launch(r->ev->gpu, r->main_fn, r->job->kernel, r->grid, r->block, r->smem,
			  r->args, err))
		return -1;
	if (r->combine_fn && (r->job->combine_pdl ? ft_gpu_launch_dependent : ft_gpu_launch)(
				     r->ev->gpu, r->combine_fn, r->job->combine_kernel, r->cgrid,
				     r->cblock, 0, r->args, err))
		return -1;
	return 0;
}

static int poison(struct run *r, struct ft_err *err)
{
	struct ft_eval *ev = r->ev;
	size_t n = ev->in.n, splits = (size_t)r->job->num_splits;

	if (ft_gpu_memset16(ev->gpu, ev->in.o, POISON16, n, "O", err))
		return -1;
	if (splits > 1 &&
	    (ft_gpu_memset32(ev->gpu, ev->o_partial, POISON32, splits * n, "o_partial", err) ||
	     ft_gpu_memset32(ev->gpu, ev->lse_partial, POISON32, splits * (n / r->job->shape.d),
			     "lse_partial", err)))
		return -1;
	/* 0xff bytes: NaN in fp16, bf16 and fp32 alike */
	if (r->job->workspace_bytes && r->job->workspace_init == FT_WS_POISON &&
	    ft_gpu_memset8(ev->gpu, ev->workspace, 0xff, (size_t)r->job->workspace_bytes,
			   "the workspace", err))
		return -1;
	/* zero_once: zeroed here, before the first call; the kernel keeps it so */
	if (r->job->workspace_bytes && r->job->workspace_init == FT_WS_ZERO_ONCE &&
	    ft_gpu_memset8(ev->gpu, ev->workspace, 0, (size_t)r->job->workspace_bytes,
			   "the workspace", err))
		return -1;
	return 0;
}

/* zero_once: whether the calls left the workspace zero, as the kernel must
 * (the next call relies on it). Returns 1 when it is (or the init is another),
 * 0 with a wrong_result verdict, -1 on a CUDA error. */
static int workspace_left_zero(struct run *r, struct ft_job_result *res, struct ft_err *err)
{
	size_t total = (size_t)r->job->workspace_bytes, nonzero = 0, first = 0;
	unsigned char *buf;

	if (!total || r->job->workspace_init != FT_WS_ZERO_ONCE)
		return 1;
	buf = malloc(total < WS_CHECK_CHUNK ? total : WS_CHECK_CHUNK);
	if (!buf)
		return ft_error(err, FT_EFAIL, "out of memory reading the workspace back");
	for (size_t at = 0; at < total; at += WS_CHECK_CHUNK) {
		size_t len = total - at < WS_CHECK_CHUNK ? total - at : WS_CHECK_CHUNK;

		if (ft_gpu_download(r->ev->gpu, buf, r->ev->workspace + at, len, "the workspace",
				    err)) {
			free(buf);
			return -1;
		}
		for (size_t i = 0; i < len; i++)
			if (buf[i] && !nonzero++)
				first = at + i;
	}
	free(buf);
	if (!nonzero)
		return 1;
	res->status = FT_ST_WRONG_RESULT;
	snprintf(res->reason, sizeof(res->reason),
		 "workspace.init zero_once: the kernel left %zu of %zu workspace bytes non-zero (the first at byte %zu); it must leave the workspace zero",
		 nonzero, total, first);
	return 0;
}

/* Judges O on the GPU: the check kernel reduces it against the reference
 * and only its sums come back: the whole output's relative error, then its
 * worst window of FT_WINDOW_ROWS rows (run/verify.h). Returns 1 when ok, 0
 * with a wrong_result verdict, -1 on a CUDA error. */
static int verify(struct run *r, const char *when, struct ft_job_result *res, struct ft_err *err)
{
	struct ft_eval *ev = r->ev;
	const size_t n = ev->in.n;
	long long nn = (long long)n;
	int bf16 = r->job->shape.dtype == FT_BF16;
	unsigned grid[3] = { 1, 1, 1 }, block[3] = { CHECK_THREADS, 1, 1 };
	long long window = (long long)FT_WINDOW_ROWS * r->job->shape.d;
	void *args[] = { &ev->in.o, &ev->in.ref, &nn, &bf16, &window, &ev->sums };
	size_t blocks = (n + CHECK_THREADS - 1) / CHECK_THREADS;
	struct check_sums cs;
	double t0 = ft_mono_ms(), rel;
	float max_abs, win_sq;
	uint32_t win_bits;

	grid[0] = (unsigned)(blocks < CHECK_MAX_BLOCKS ? (blocks ? blocks : 1) : CHECK_MAX_BLOCKS);
	if (ft_gpu_memset8(ev->gpu, ev->sums, 0, sizeof(cs), "the check's sums", err) ||
	    ft_gpu_launch(ev->gpu, ev->check, "fatune_ref_check", grid, block, 0, args, err) ||
	    ft_gpu_download(ev->gpu, &cs, ev->sums, sizeof(cs), r->job->kernel, err))
		return -1;
	memcpy(&max_abs, &cs.max_abs_bits, sizeof(max_abs));
	win_bits = (uint32_t)(cs.worst_window >> 32);
	memcpy(&win_sq, &win_bits, sizeof(win_sq));
	rel = ft_rel_l2_sums(cs.num, cs.den, cs.onorm);
	res->max_abs_err = max_abs;
	if (ft_verdict(rel, (long long)cs.nonfinite, r->job->tolerance, res) &&
	    ft_window_verdict(sqrt((double)win_sq), (long long)(cs.worst_window & 0xffffffffu) * FT_WINDOW_ROWS,
			      r->job->tolerance, res)) {
		int zero = workspace_left_zero(r, res, err);

		if (zero) {
			res->verify_ms += ft_mono_ms() - t0;
			return zero;
		}
	}
	res->verify_ms += ft_mono_ms() - t0;
	if (when) {
		char reason[sizeof(res->reason)];
		snprintf(reason, sizeof(reason), "%s: %s", when, res->reason);
		memcpy(res->reason, reason, sizeof(reason));
	}
	return 0;
}

static int grow(struct ft_eval *ev, ft_devptr *p, size_t *have, size_t want, const char *what,
		struct ft_err *err)
{
	if (*have >= want)
		return 0;
	ft_gpu_free(ev->gpu, *p);
	*p = 0;
	*have = 0;
	if (ft_gpu_alloc(ev->gpu, want, what, p, err))
		return -1;
	*have = want;
	return 0;
}

/* After sample n: 1 when the samples end here (run/sampling.h), with why in
 * r->res->stop and r->taken. The race's quick samples are timed as the quick
 * phase, the rest as samples (*t0 moves on past them). */
static int sampled(struct run *r, const double *us, int n, double *t0)
{
	enum ft_samples_stop stop = ft_samples_stop(r->job, us, n);

	r->taken = n;
	if (n == r->job->quick_samples) {
		double now = ft_mono_ms();

		r->res->phase_ms[FT_PH_QUICK] += now - *t0;
		*t0 = now;
	}
	r->res->stop = stop;
	return stop != FT_SAMPLES_ALL;
}

/* Samples of one call each, after an L2 flush that is not timed. */
static int time_cold(struct run *r, const struct ft_timing_plan *plan, double *us,
		     struct ft_err *err)
{
	struct ft_eval *ev = r->ev;
	size_t want = ev->lim.l2_bytes > 0 ? 2 * (size_t)ev->lim.l2_bytes : FLUSH_FALLBACK_BYTES;
	double ms, spent = 0, min_ms = warmup_min_ms(ev, r->job), t0 = ft_mono_ms();

	if (grow(ev, &ev->flush, &ev->flush_bytes, want, "the L2 flush buffer", err))
		return -1;
	/* warm-up times flush and call together: both keep the GPU busy */
	for (int i = 0; i < r->job->warmup || spent < min_ms; i++) {
		if (ft_gpu_timer_start(ev->gpu, err) ||
		    ft_gpu_memset8(ev->gpu, ev->flush, (unsigned char)i, want, "the L2 flush", err) ||
		    call(r, err) || ft_gpu_timer_stop(ev->gpu, &ms, err))
			return -1;
		spent += ms;
		if (i >= FT_EVAL_MAX_SAMPLES) /* bounds a warm-up of ~0 ms calls */
			break;
	}
	r->res->phase_ms[FT_PH_WARMUP] += ft_mono_ms() - t0;
	t0 = ft_mono_ms();
	for (int i = 0; i < plan->samples; i++) {
		if (ft_gpu_memset8(ev->gpu, ev->flush, (unsigned char)i, want, "the L2 flush", err) ||
		    ft_gpu_timer_start(ev->gpu, err) || call(r, err) ||
		    ft_gpu_timer_stop(ev->gpu, &ms, err))
			return -1;
		us[i] = ms * 1e3;
		if (sampled(r, us, i + 1, &t0))
			break;
	}
	ev->last_timed_ms = ft_mono_ms();
	r->res->phase_ms[FT_PH_SAMPLES] += ev->last_timed_ms - t0;
	return 0;
}

/* Samples of one graph launch each, divided by k, each timed by its own
 * event pair and waited for before the next is launched (the method until
 * 2026-11-29; FATUNE_EVAL_SAMPLES=one-by-one): the GPU idles while the loop
 * decides, and a sample's start event runs before the graph has reached the
 * GPU, so every sample also holds the graph launch's submission. */
static int samples_one_by_one(struct run *r, struct ft_gpu_graph *graph, int k, int n, double *us,
			      double *t0, struct ft_err *err)
{
	struct ft_gpu *gpu = r->ev->gpu;
	double ms;

	for (int i = 0; i < n; i++) {
		if (ft_gpu_timer_start(gpu, err) || ft_gpu_graph_launch(gpu, graph, err) ||
		    ft_gpu_timer_stop(gpu, &ms, err))
			return -1;
		us[i] = ms * 1e3 / k;
		if (sampled(r, us, i + 1, t0))
			break;
	}
	return 0;
}

/* Samples queued back to back: mark i starts sample i and ends sample i - 1,
 * so while the loop waits for one sample the next is already on the GPU
 * (ft_samples_queue says how far ahead, never past a point where the job may
 * end), the GPU does not idle between them and no sample but the first of a
 * run of them holds a launch's submission. When the samples end early, the
 * ones still queued are taken too (they ran). */
static int samples_queued(struct run *r, struct ft_gpu_graph *graph, int k, int n, double *us,
			  double *t0, struct ft_err *err)
{
	struct ft_gpu *gpu = r->ev->gpu;
	int done = 0, queued = 0, stop = 0;
	double ms;

	while (done < n) {
		int upto = stop ? queued : ft_samples_queue(r->job, done, n, FT_GPU_MARKS - 2);

		for (; queued < upto; queued++) {
			/* nothing in flight: this sample starts a new run of marks */
			if (queued == done && ft_gpu_mark(gpu, queued, err))
				return -1;
			if (ft_gpu_graph_launch(gpu, graph, err) || ft_gpu_mark(gpu, queued + 1, err))
				return -1;
		}
		if (done == queued)
			break; /* stopped, nothing left in flight */
		if (ft_gpu_mark_ms(gpu, done, done + 1, &ms, err))
			return -1;
		us[done++] = ms * 1e3 / k;
		if (stop) {
			r->taken = done;
			continue;
		}
		stop = sampled(r, us, done, t0);
	}
	return 0;
}

/* Samples of one graph launch of K calls each, divided by K. */
static int time_warm(struct run *r, const struct ft_timing_plan *plan, double *us,
		     struct ft_err *err)
{
	struct ft_gpu *gpu = r->ev->gpu;
	struct ft_gpu_graph *graph = NULL;
	int k = plan->launches, ret = -1;
	double ms, spent = 0, min_ms = warmup_min_ms(r->ev, r->job), t0 = ft_mono_ms();
	double *ph = r->res->phase_ms;

	if (ft_gpu_capture_begin(gpu, err))
		return -1;
	for (int i = 0; i < k; i++)
		if (call(r, err)) {
			ft_gpu_capture_abort(gpu);
			return -1;
		}
	if (ft_gpu_capture_end(gpu, &graph, err))
		return -1;
	ph[FT_PH_GRAPH] += ft_mono_ms() - t0;
	/* the next job's module loads while this one's warm-up and samples run
	 * (modules.h): not from the job's start, as a module load and the
	 * graph's capture and instantiation take turns in the driver (graph
	 * 0.13 -> 0.35 ms a candidate when it was started there, 2026-12-01) */
	ft_modules_ahead(&r->ev->mods, gpu, r->job->next_cubin_key, r->job->kernel);
	t0 = ft_mono_ms();
	if (!r->ev->one_by_one && hot(r->ev)) {
		/* a hot GPU: the warm-up launches are queued ahead of the first
		 * sample, as many as the sizing call says cover min_ms (a heat's
		 * too), so the samples follow them with no gap (their GPU time is
		 * waited for with the first sample's) */
		double n = ceil(min_ms / (plan->sample_ms > 0 ? plan->sample_ms : min_ms));

		n = n > r->job->warmup ? n : r->job->warmup;
		for (int i = 0; i < n && i <= FT_EVAL_MAX_SAMPLES; i++)
			if (ft_gpu_graph_launch(gpu, graph, err))
				goto out;
		/* a heat is waited for here, so that the warm-up phase holds it */
		if (r->job->heat_ms > 0 && ft_gpu_sync(gpu, "the heat before sampling", err))
			goto out;
	} else {
		/* an idle GPU: launches timed until min_ms of them ran (its clock
		 * rises under load, so the sizing call says too little) */
		for (int i = 0; i < r->job->warmup || spent < min_ms; i++) {
			if (ft_gpu_timer_start(gpu, err) || ft_gpu_graph_launch(gpu, graph, err) ||
			    ft_gpu_timer_stop(gpu, &ms, err))
				goto out;
			spent += ms;
			if (i >= FT_EVAL_MAX_SAMPLES)
				break;
		}
	}
	ph[FT_PH_WARMUP] += ft_mono_ms() - t0;
	t0 = ft_mono_ms();
	if ((r->ev->one_by_one ? samples_one_by_one(r, graph, k, plan->samples, us, &t0, err)
			       : samples_queued(r, graph, k, plan->samples, us, &t0, err)))
		goto out;
	r->ev->last_timed_ms = ft_mono_ms();
	ph[FT_PH_SAMPLES] += r->ev->last_timed_ms - t0;
	ret = 0;
out:
	t0 = ft_mono_ms();
	ft_gpu_graph_destroy(gpu, graph);
	ph[FT_PH_GRAPH] += ft_mono_ms() - t0;
	return ret;
}

/* check_job has bounded every dimension, so the casts are exact */
static void to_dims(unsigned out[3], const long long in[3])
{
	for (int i = 0; i < 3; i++)
		out[i] = (unsigned)in[i];
}

/* The TMA descriptors the job's plan asks for, into r->p2 (fatune_abi.h:
 * rank 4 over (D, S, H, B), byte strides, box (cols, rows, 1, 1)). */
static int encode_tma(struct run *r, struct ft_err *err)
{
	const struct inputs *in = &r->ev->in;
	const struct ft_shape *sh = &in->shape;
	struct fatune_tma_desc *out[FT_TENSOR_COUNT] = { &r->p2.tma_q, &r->p2.tma_k, &r->p2.tma_v,
							  &r->p2.tma_o };
	const ft_devptr base[FT_TENSOR_COUNT] = { in->q, in->k, in->v, in->o };
	static const char *const names[FT_TENSOR_COUNT] = { "Q", "K", "V", "O" };

	for (int t = 0; t < FT_TENSOR_COUNT; t++) {
		const struct ft_tma_box *bx = &r->job->plan.tma[t];
		const int kv = t == FT_TENSOR_K || t == FT_TENSOR_V;
		const long long *st = kv ? in->kvs : in->qs;
		unsigned long long dims[4], strides[3];
		unsigned box[4];

		if (!bx->rows)
			continue;
		dims[0] = (unsigned long long)sh->d;
		dims[1] = (unsigned long long)(kv ? sh->s_kv : sh->s);
		dims[2] = (unsigned long long)(kv ? sh->h_kv : sh->h);
		dims[3] = (unsigned long long)sh->b;
		strides[0] = (unsigned long long)st[2] * 2;
		strides[1] = (unsigned long long)st[1] * 2;
		strides[2] = (unsigned long long)st[0] * 2;
		box[0] = (unsigned)bx->cols;
		box[1] = (unsigned)bx->rows;
		box[2] = box[3] = 1;
		if (ft_gpu_tensor_map(r->ev->gpu, out[t], base[t], sh->dtype == FT_BF16, dims, strides,
				      box, bx->swizzle, names[t], err))
			return -1;
	}
	return 0;
}

/* The launch of the loaded candidate: its shared memory, its buffers, its
 * params and dimensions into r. 0; 1 means a CUDA error (in err), 2 a
 * refusal that leaves the context usable (in err). */
static int launch_setup(struct run *r, struct ft_err *err)
{
	struct ft_eval *ev = r->ev;
	const struct ft_job *job = r->job;
	const struct ft_shape *sh = &job->shape;

	if (job->dynamic_smem > ev->lim.smem_static &&
	    ft_gpu_func_dynamic_smem(ev->gpu, r->main_fn, job->kernel, job->dynamic_smem, err))
		return 1;
	if (job->num_splits > 1 &&
	    (grow(ev, &ev->o_partial, &ev->o_partial_bytes, (size_t)job->num_splits * ev->in.n * 4,
		  "o_partial", err) ||
	     grow(ev, &ev->lse_partial, &ev->lse_partial_bytes,
		  (size_t)job->num_splits * (ev->in.n / sh->d) * 4, "lse_partial", err)))
		return 1;
	if (job->workspace_bytes &&
	    grow(ev, &ev->workspace, &ev->workspace_bytes, (size_t)job->workspace_bytes,
		 "the workspace", err))
		return 1;
	base_params(ev, ev->in.o, &r->p2);
	r->p2.num_splits = job->num_splits;
	if (job->num_splits > 1) {
		r->p2.o_partial = (float *)(uintptr_t)ev->o_partial;
		r->p2.lse_partial = (float *)(uintptr_t)ev->lse_partial;
	}
	if (job->workspace_bytes) {
		r->p2.workspace = (void *)(uintptr_t)ev->workspace;
		r->p2.workspace_bytes = job->workspace_bytes;
	}
	if (job->abi == 2) {
		if (encode_tma(r, err))
			return 2;
		r->args[0] = &r->p2;
	} else {
		r->p1 = (struct fatune_attn_params_v1){
			.q = r->p2.q, .k = r->p2.k, .v = r->p2.v, .o = r->p2.o,
			.o_partial = r->p2.o_partial, .lse_partial = r->p2.lse_partial,
			.b = sh->b, .h = sh->h, .s = sh->s, .num_splits = job->num_splits,
			.scale = r->p2.scale, .scale_log2 = r->p2.scale_log2,
		};
		r->args[0] = &r->p1;
	}
	to_dims(r->grid, job->grid);
	to_dims(r->cgrid, job->combine_grid);
	r->block[0] = (unsigned)job->threads;
	r->block[1] = r->block[2] = 1;
	r->cblock[0] = (unsigned)job->combine_threads;
	r->cblock[1] = r->cblock[2] = 1;
	r->smem = (unsigned)job->dynamic_smem;
	return 0;
}

/* A call on poisoned outputs, then verify(r, when): 1 when ok, 0 with a
 * wrong_result verdict in *res, -1 on a CUDA error (in err). */
static int verified_call(struct run *r, const char *when, struct ft_job_result *res,
			 struct ft_err *err)
{
	double t0 = ft_mono_ms();

	if (poison(r, err) || call(r, err) || ft_gpu_sync(r->ev->gpu, r->job->kernel, err))
		return -1;
	res->verify_ms += ft_mono_ms() - t0;
	return verify(r, when, res, err);
}

/* Everything after the module is loaded; 1 means a CUDA error (in err), 2 a
 * refusal that leaves the context usable (in err). */
static int run_loaded(struct run *r, struct ft_job_result *res, struct ft_err *err)
{
	struct ft_eval *ev = r->ev;
	const struct ft_job *job = r->job;
	struct ft_stats st;
	struct ft_timing_plan plan;
	double single_ms = 0, *us, t0;
	int rc = launch_setup(r, err);

	if (rc)
		return rc;
	/* the verified call, on poisoned outputs */
	switch (verified_call(r, NULL, res, err)) {
	case -1:
		return 1;
	case 0:
		return 0; /* wrong result: never timed */
	}
	if (!job->timing)
		return 0;
	/* one more call, warm now (module loaded, caches filled), sizes K */
	t0 = ft_mono_ms();
	if (ft_gpu_timer_start(ev->gpu, err) || call(r, err) ||
	    ft_gpu_timer_stop(ev->gpu, &single_ms, err))
		return 1;
	res->phase_ms[FT_PH_SIZE] += ft_mono_ms() - t0;
	/* K and R follow the call's duration; the parent's watchdog follows them */
	ft_eval_plan(single_ms * 1e3, job->launches_per_sample, job->samples, job->warmup,
		     job->cold, job->sample_max_us, &plan);
	ft_worker_expect(plan.expected_ms);
	us = calloc((size_t)plan.samples, sizeof(*us));
	if (!us) {
		ft_error(err, FT_EFAIL, "out of memory for %d timing samples", plan.samples);
		return 1;
	}
	r->taken = 0;
	if (job->cold ? time_cold(r, &plan, us, err) : time_warm(r, &plan, us, err)) {
		free(us);
		return 1;
	}
	res->time_ms = ft_mono_ms() - t0;
	if (r->taken <= FT_RAW_SAMPLES_MAX) {
		res->nraw = r->taken;
		for (int i = 0; i < r->taken; i++)
			res->raw_us[i] = (float)us[i];
	}
	if (ft_stats_compute(us, r->taken, &st)) {
		free(us);
		res->status = FT_ST_CRASHED;
		snprintf(res->reason, sizeof(res->reason),
			 "the CUDA events gave a non-finite time: is the GPU in a bad state?");
		return 0;
	}
	free(us);
	/* the timed calls must still produce the right answer */
	switch (verify(r, "after timing", res, err)) {
	case -1:
		return 1;
	case 0:
		return 0;
	}
	res->t_median_us = st.median;
	res->t_min_us = st.min;
	res->t_p90_us = st.p90;
	res->t_spread = st.spread;
	res->samples = r->taken;
	res->launches_per_sample = plan.launches;
	return 0;
}

/* The module of r->job (its key resolved through this host's CUBIN cache)
 * and its kernels into r; *own as ft_modules_get says. -1 with err. */
static int load(struct run *r, struct ft_gpu_module **mod, char *path, size_t size, int *own,
		struct ft_err *err)
{
	struct ft_eval *ev = r->ev;
	const struct ft_job *job = r->job;

	return ft_modules_get(&ev->mods, ev->gpu, job->cubin_key, mod, path, size, own, err) ||
			       ft_gpu_function(ev->gpu, *mod, job->kernel, path, &r->main_fn, err) ||
			       (job->num_splits > 1 && job->combine_threads &&
				ft_gpu_function(ev->gpu, *mod, job->combine_kernel, path, &r->combine_fn,
						err))
		       ? -1
		       : 0;
}

int ft_eval_run(struct ft_eval *ev, const struct ft_job *job, struct ft_job_result *res)
{
	struct ft_gpu_module *mod = NULL;
	struct ft_err err = { 0 };
	struct run r;
	char path[FT_PATH_MAX];
	int rc, own = 0, taken;
	double t_job = ft_mono_ms(), t0, inputs_ms = 0, load_ms;

	ft_job_result_init(res);
	if (!ev->in.valid || ev->in.seed != job->seed ||
	    memcmp(&ev->in.shape, &job->shape, sizeof(job->shape))) {
		rc = ft_eval_prepare(ev, job, res);
		inputs_ms = ft_mono_ms() - t_job;
		res->phase_ms[FT_PH_INPUTS] = inputs_ms;
		if (rc)
			return rc == 2 ? 0 : rc;
	} else {
		char buf[400];
		const char *bad = check_job(ev, job, buf, sizeof(buf));
		if (bad) {
			bad_job(res, bad);
			return 0;
		}
	}
	memset(&r, 0, sizeof(r));
	r.ev = ev;
	r.job = job;
	r.res = res;
	t0 = ft_mono_ms();
	taken = ev->mods.ahead_taken;
	if (load(&r, &mod, path, sizeof(path), &own, &err)) {
		rc = 1;
		load_ms = ft_mono_ms() - t0;
	} else {
		load_ms = ft_mono_ms() - t0;
		rc = run_loaded(&r, res, &err);
	}
	if (rc) {
		ft_job_result_init(res);
		cuda_crash(res, &err);
		/* a file that cannot be read is not a lost context */
		if (!ft_gpu_failed(ev->gpu))
			rc = 0;
	}
	t0 = ft_mono_ms();
	if (own)
		ft_gpu_module_unload(ev->gpu, mod);
	res->phase_ms[FT_PH_UNLOAD] = ft_mono_ms() - t0;
	res->phase_ms[FT_PH_INPUTS] = inputs_ms;
	res->phase_ms[FT_PH_LOAD] = load_ms;
	res->loaded_ahead = ev->mods.ahead_taken > taken;
	res->phase_ms[FT_PH_VERIFY] = res->verify_ms;
	res->phase_ms[FT_PH_JOB] = ft_mono_ms() - t_job;
	return rc;
}

/* ---- a sweep: several candidates, one sample of each in turn ----------------- */

/* One candidate of a sweep, loaded and captured. */
struct swept {
	struct run r;
	struct ft_gpu_module *mod;
	int own;			/* unload mod at the end */
	struct ft_gpu_graph *graph;	/* K calls (plan.launches) */
	struct ft_timing_plan plan;
};

/* The buffers of every candidate still in, grown to the largest first, so
 * that no graph captured later holds a pointer that a grow frees. */
static int sweep_reserve(struct ft_eval *ev, const struct ft_sweep *g, const int *in,
			 struct ft_err *err)
{
	size_t part = 0, lse = 0, ws = 0;

	for (int i = 0; i < g->n; i++) {
		const struct ft_job *j = &g->jobs[i];

		if (!in[i])
			continue;
		if (j->num_splits > 1) {
			size_t p = (size_t)j->num_splits * ev->in.n * 4,
			       l = (size_t)j->num_splits * (ev->in.n / j->shape.d) * 4;
			part = p > part ? p : part;
			lse = l > lse ? l : lse;
		}
		if ((size_t)j->workspace_bytes > ws)
			ws = (size_t)j->workspace_bytes;
	}
	return (part && grow(ev, &ev->o_partial, &ev->o_partial_bytes, part, "o_partial", err)) ||
			       (lse && grow(ev, &ev->lse_partial, &ev->lse_partial_bytes, lse,
					    "lse_partial", err)) ||
			       (ws && grow(ev, &ev->workspace, &ev->workspace_bytes, ws, "the workspace",
					   err))
		       ? -1
		       : 0;
}

/* Candidate c's setup: loaded, its launch set up, a verified call, a call
 * that sizes K, its graph captured. 0 when ready; 1 when it is out with its
 * verdict in *v (wrong result, a CUBIN that cannot be read, a refusal);
 * -1 with err on a CUDA error. */
static int sweep_setup(struct swept *c, int samples, struct ft_job_result *v, struct ft_err *err)
{
	struct ft_eval *ev = c->r.ev;
	const struct ft_job *job = c->r.job;
	double *ph = v->phase_ms, t0 = ft_mono_ms(), single_ms = 0;
	char path[FT_PATH_MAX];
	int rc;

	rc = load(&c->r, &c->mod, path, sizeof(path), &c->own, err);
	ph[FT_PH_LOAD] += ft_mono_ms() - t0;
	if (!rc)
		rc = launch_setup(&c->r, err);
	if (rc)
		goto refused;
	switch (verified_call(&c->r, NULL, v, err)) {
	case -1:
		return -1;
	case 0:
		return 1;
	}
	t0 = ft_mono_ms();
	if (ft_gpu_timer_start(ev->gpu, err) || call(&c->r, err) ||
	    ft_gpu_timer_stop(ev->gpu, &single_ms, err))
		return -1;
	ph[FT_PH_SIZE] += ft_mono_ms() - t0;
	ft_eval_plan(single_ms * 1e3, job->launches_per_sample, samples, 0, 0, job->sample_max_us,
		     &c->plan);
	t0 = ft_mono_ms();
	if (ft_gpu_capture_begin(ev->gpu, err))
		return -1;
	for (int i = 0; i < c->plan.launches; i++)
		if (call(&c->r, err)) {
			ft_gpu_capture_abort(ev->gpu);
			return -1;
		}
	if (ft_gpu_capture_end(ev->gpu, &c->graph, err))
		return -1;
	ph[FT_PH_GRAPH] += ft_mono_ms() - t0;
	return 0;
refused:
	if (ft_gpu_failed(ev->gpu))
		return -1;
	cuda_crash(v, err);
	return 1;
}

/* The samples of seq[0..t), queued back to back as samples_queued does
 * (marks), into the sweep's state. -1 with err. */
static int sweep_samples(struct ft_eval *ev, struct swept *c, const int *seq, int t,
			 struct ft_sweep_state *s, struct ft_err *err)
{
	int done = 0, queued = 0;
	double ms;

	while (done < t) {
		int upto = done + FT_GPU_MARKS - 2 < t ? done + FT_GPU_MARKS - 2 : t;

		for (; queued < upto; queued++) {
			if (queued == done && ft_gpu_mark(ev->gpu, queued, err))
				return -1;
			if (ft_gpu_graph_launch(ev->gpu, c[seq[queued]].graph, err) ||
			    ft_gpu_mark(ev->gpu, queued + 1, err))
				return -1;
		}
		if (ft_gpu_mark_ms(ev->gpu, done, done + 1, &ms, err))
			return -1;
		ft_sweep_take(s, seq[done], ms * 1e3 / c[seq[done]].plan.launches);
		done++;
	}
	return 0;
}

/* Every graph of those in, in turn, until the warm-up (or the sweep's heat)
 * has run: each at least once (its first launch uploads it). */
static int sweep_warm(struct ft_eval *ev, struct swept *c, const struct ft_sweep_state *s,
		      double warm_ms, struct ft_err *err)
{
	double spent = 0, ms;

	for (int k = 0; k == 0 || (spent < warm_ms && k < FT_EVAL_MAX_SAMPLES); k++) {
		if (ft_gpu_timer_start(ev->gpu, err))
			return -1;
		for (int i = 0; i < s->g->n; i++)
			if (s->in[i] && ft_gpu_graph_launch(ev->gpu, c[i].graph, err))
				return -1;
		if (ft_gpu_timer_stop(ev->gpu, &ms, err))
			return -1;
		spent += ms;
	}
	return 0;
}

/* The timed part: warm-up, rounds of sweeps, and each candidate verified
 * again after them (a poisoned call: the outputs are shared). */
static int sweep_time(struct ft_eval *ev, struct swept *c, struct ft_sweep_state *s,
		      struct ft_err *err)
{
	const struct ft_sweep *g = s->g;
	int seq[FT_SWEEP_MAX * FT_RAW_SAMPLES_MAX], m = 0;
	double warm_ms = hot(ev) ? ev->warmup_hot_ms : FT_EVAL_WARMUP_MIN_MS, expected = 0, t0, ms;

	if (g->heat_ms > warm_ms)
		warm_ms = g->heat_ms;
	for (int i = 0; i < g->n; i++)
		if (s->in[i]) {
			m++;
			expected += c[i].plan.sample_ms * g->rounds * g->per_round;
		}
	if (!m)
		return 0;
	ft_worker_expect(expected + warm_ms);
	t0 = ft_mono_ms();
	if (sweep_warm(ev, c, s, warm_ms, err))
		return -1;
	ms = ft_mono_ms() - t0;
	for (int i = 0; i < g->n; i++)
		if (s->in[i])
			s->out->res[i].phase_ms[FT_PH_WARMUP] += ms / m;
	for (int r = 0; r < g->rounds; r++) {
		int t = ft_sweep_round(s, r, seq), ran = s->out->ran[r];

		t0 = ft_mono_ms();
		if (sweep_samples(ev, c, seq, t, s, err))
			return -1;
		ms = ft_mono_ms() - t0;
		for (int j = 0; j < ran && j < t; j++)	/* the round's first sweep names them */
			s->out->res[seq[j]].phase_ms[FT_PH_SAMPLES] += ms / ran;
		ft_sweep_round_end(s, r);
	}
	ev->last_timed_ms = ft_mono_ms();
	for (int i = 0; i < g->n; i++) {
		struct ft_job_result *v = &s->out->res[i];

		if (!s->out->rounds[i] || v->status != FT_ST_OK)
			continue;
		switch (verified_call(&c[i].r, "after timing", v, err)) {
		case -1:
			return -1;
		case 0:
			s->in[i] = 0;
			s->out->rounds[i] = 0;	/* its verdict stands, no times */
		}
	}
	return 0;
}

int ft_eval_sweep(struct ft_eval *ev, const struct ft_sweep *g, struct ft_sweep_result *out)
{
	struct ft_sweep_state s;
	struct ft_err err = { 0 };
	struct swept *c;
	int rc = 0, fail = 0;
	double t_job = ft_mono_ms(), total = 0;

	if (!ft_sweep_open(&s, g, out))
		return 0;
	if (!ev->in.valid || ev->in.seed != g->jobs[0].seed ||
	    memcmp(&ev->in.shape, &g->jobs[0].shape, sizeof(g->jobs[0].shape))) {
		struct ft_job_result v;

		ft_job_result_init(&v);
		rc = ft_eval_prepare(ev, &g->jobs[0], &v);
		if (rc) {
			ft_sweep_fail(out, v.reason);
			return rc == 1;
		}
	}
	c = calloc((size_t)g->n, sizeof(*c));
	if (!c) {
		char why[64];

		snprintf(why, sizeof(why), "out of memory for a sweep of %d", g->n);
		ft_sweep_fail(out, why);
		return 0;
	}
	for (int i = 0; i < g->n; i++) {
		char buf[400];
		const char *bad = check_job(ev, &g->jobs[i], buf, sizeof(buf));

		c[i].r.ev = ev;
		c[i].r.job = &g->jobs[i];
		c[i].r.res = &out->res[i];
		if (bad) {
			struct ft_job_result v;

			ft_job_result_init(&v);
			bad_job(&v, bad);
			ft_sweep_drop(&s, i, &v);
		}
	}
	if (sweep_reserve(ev, g, s.in, &err))
		fail = 1;
	for (int i = 0; i < g->n && !fail; i++) {
		struct ft_job_result v;

		if (!s.in[i])
			continue;
		ft_job_result_init(&v);
		switch (sweep_setup(&c[i], g->rounds * g->per_round, &v, &err)) {
		case -1:
			fail = 1;
			break;
		case 1:
			ft_sweep_drop(&s, i, &v);
			break;
		default:	/* its setup's phases and checks so far */
			/* the watchdog: the rest, as if the others took as long as it */
			ft_worker_expect((double)(g->n - i) * c[i].plan.expected_ms);
			out->res[i].verify_ms = v.verify_ms;
			out->res[i].rel_err = v.rel_err;
			out->res[i].max_abs_err = v.max_abs_err;
			ft_phases_add(&out->res[i], &v, 0);
			out->res[i].launches_per_sample = c[i].plan.launches;
		}
	}
	if (!fail && sweep_time(ev, c, &s, &err))
		fail = 1;
	for (int i = 0; i < g->n; i++) {
		double t0 = ft_mono_ms();

		ft_gpu_graph_destroy(ev->gpu, c[i].graph);
		if (c[i].own)
			ft_gpu_module_unload(ev->gpu, c[i].mod);
		out->res[i].phase_ms[FT_PH_UNLOAD] += ft_mono_ms() - t0;
	}
	free(c);
	if (fail) {
		ft_sweep_fail(out, err.msg[0] ? err.msg : "a CUDA error");
		return ft_gpu_failed(ev->gpu) ? 1 : 0;
	}
	ft_sweep_finish(&s);
	/* each one's job phase is its phases' sum; the sweep's own bookkeeping
	 * goes to the first */
	for (int i = 0; i < g->n; i++) {
		double *ph = out->res[i].phase_ms;

		ph[FT_PH_VERIFY] = out->res[i].verify_ms;
		ph[FT_PH_JOB] = 0;
		for (int p = FT_PH_LOAD; p < FT_PH_JOB; p++)
			ph[FT_PH_JOB] += ph[p];
		out->res[i].time_ms = ph[FT_PH_SIZE] + ph[FT_PH_GRAPH] + ph[FT_PH_WARMUP] +
				      ph[FT_PH_SAMPLES];
		total += ph[FT_PH_JOB];
	}
	out->res[0].phase_ms[FT_PH_JOB] += ft_mono_ms() - t_job - total;
	return 0;
}

/* ---- self-test ------------------------------------------------------------------ */

/* The GPU reference computes in fp32 (unit roundoff 2^-24 = 6e-8): dot products
 * of D <= 256 terms, sums over S <= 200 keys and expf (within 2 ulp) give errors
 * of a few eps * sqrt(n), about 1e-6. 1e-5 leaves a 10x margin and is still 30x
 * below the error of an fp16 attention (3e-4, FACTS.md), so a reference that
 * passes is exact enough to judge candidates. */
#define SELFTEST_TOL 1e-5

/* b, h, s, d, causal, bf16, then s_kv, h_kv (0: self-attention) and layout:
 * six cover grouped-query heads, decode and chunked prefill (S_q < S_kv,
 * bottom-right causal), S_q > S_kv (rows with no key) and bshd; the last a
 * head dim that is no multiple of 32 and rows that end inside the
 * reference's 16-row tiles and 32-key chunks. */
static const struct {
	int b, h, s, d, causal, bf16, s_kv, h_kv, bshd;
} selftest_cases[] = {
	{ 1, 1, 1, 32, 0, 0, 0, 0, 0 },	     { 1, 1, 17, 64, 1, 0, 0, 0, 0 },	 { 2, 3, 17, 128, 0, 1, 0, 0, 0 },
	{ 1, 2, 200, 64, 1, 1, 0, 0, 0 },     { 2, 2, 200, 128, 1, 0, 0, 0, 0 },	 { 1, 1, 200, 32, 0, 1, 0, 0, 0 },
	{ 3, 1, 1, 128, 1, 1, 0, 0, 0 },	     { 1, 4, 17, 32, 0, 0, 0, 0, 0 },	 { 1, 2, 33, 256, 1, 0, 0, 0, 0 },
	{ 2, 1, 50, 96, 0, 1, 0, 0, 0 },	     { 1, 1, 200, 128, 0, 1, 0, 0, 0 },	 { 2, 2, 200, 32, 1, 0, 0, 0, 0 },
	{ 2, 8, 1, 128, 0, 0, 300, 2, 0 }, { 1, 4, 3, 64, 1, 1, 150, 1, 1 },
	{ 1, 4, 40, 64, 1, 0, 200, 2, 0 }, { 2, 6, 50, 32, 1, 1, 20, 3, 1 },
	{ 1, 2, 33, 128, 0, 0, 33, 2, 1 }, { 2, 4, 64, 64, 1, 0, 64, 4, 1 },
	{ 1, 2, 37, 40, 1, 0, 0, 0, 0 },
};

/* Runs one case; prints its line. Returns 1 if it passed, 0 if not, -1 on a CUDA error. */
static int selftest_case(struct ft_eval *ev, int idx, FILE *out, struct ft_err *err)
{
	struct ft_shape sh = {
		.b = selftest_cases[idx].b,
		.h = selftest_cases[idx].h,
		.s = selftest_cases[idx].s,
		.d = selftest_cases[idx].d,
		.causal = selftest_cases[idx].causal,
		.dtype = selftest_cases[idx].bf16 ? FT_BF16 : FT_FP16,
		.s_kv = selftest_cases[idx].s_kv,
		.h_kv = selftest_cases[idx].h_kv,
		.layout = selftest_cases[idx].bshd ? FT_LAYOUT_BSHD : FT_LAYOUT_BHSD,
	};
	const int bf16 = selftest_cases[idx].bf16;
	const unsigned long long seed = 0x5eed0000ull + (unsigned long long)idx;
	size_t n, nkv, all;
	uint16_t *raw;
	double *x, num = 0, den = 0, rel;
	long long zeros = 0, outside = 0, ref_bad = 0;
	int same_again, ok = 0;
	char name[96], shape[FT_SHAPE_TEXT_MAX];

	ft_shape_norm(&sh);
	n = (size_t)sh.b * sh.h * sh.s * sh.d;
	nkv = (size_t)sh.b * sh.h_kv * sh.s_kv * sh.d;
	all = 2 * n + 2 * nkv;	/* Q, K, V and Q again (raw) or the output (x) */
	raw = malloc(all * 2);
	x = malloc(all * sizeof(double));
	if (!raw || !x) {
		free(raw);
		free(x);
		return ft_error(err, FT_EFAIL, "out of memory for self-test case %d", idx);
	}
	ev->in.valid = 0; /* a fresh (shape, seed) every case */
	if (make_inputs(ev, &sh, seed, err) ||
	    ft_gpu_download(ev->gpu, raw, ev->in.q, n * 2, "Q", err) ||
	    ft_gpu_download(ev->gpu, raw + n, ev->in.k, nkv * 2, "K", err) ||
	    ft_gpu_download(ev->gpu, raw + n + nkv, ev->in.v, nkv * 2, "V", err) ||
	    /* the same seed must give the same Q */
	    fill(ev, ev->in.o, n, seed, TENSOR_Q, bf16, err) ||
	    ft_gpu_download(ev->gpu, raw + n + 2 * nkv, ev->in.o, n * 2, "Q again", err)) {
		free(raw);
		free(x);
		return -1;
	}
	same_again = !memcmp(raw, raw + n + 2 * nkv, n * 2);
	for (size_t i = 0; i < n + 2 * nkv; i++) {
		x[i] = bf16 ? ft_bf16_to_double(raw[i]) : ft_fp16_to_double(raw[i]);
		zeros += x[i] == 0;
		outside += !(x[i] >= -1.0 && x[i] <= 1.0);
	}
	ft_attention_cpu(x, x + n, x + n + nkv, &sh, x + n + 2 * nkv);
	for (size_t i = 0; i < n; i++) {
		double r = ev->in.ref_host[i], c = x[n + 2 * nkv + i];
		ref_bad += !isfinite(r);
		num += (r - c) * (r - c);
		den += c * c;
	}
	rel = den > 0 ? sqrt(num / den) : NAN;
	ok = same_again && !zeros && !outside && !ref_bad && rel <= SELFTEST_TOL;
	snprintf(name, sizeof(name), "%s %s %s", ft_shape_format(&sh, shape, sizeof(shape)),
		 bf16 ? "bf16" : "fp16", sh.causal ? "causal" : "non-causal");
	fprintf(out, "selftest %-48s rel_err %.2e (limit %.0e)%s%s%s%s  %s\n", name, rel,
		SELFTEST_TOL, same_again ? "" : ", inputs not deterministic",
		zeros ? ", zero inputs" : "", outside ? ", inputs outside [-1, 1]" : "",
		ref_bad ? ", non-finite reference" : "", ok ? "ok" : "FAILED");
	free(raw);
	free(x);
	return ok;
}

int ft_eval_selftest(FILE *out, const char *reference_path)
{
	const int ncases = (int)(sizeof(selftest_cases) / sizeof(selftest_cases[0]));
	struct ft_device_limits lim;
	struct ft_gpu *gpu = NULL;
	struct ft_eval *ev = NULL;
	struct ft_err err = { 0 };
	int driver = 0, failed = 0;

	if (ft_gpu_open(&gpu, -1, &lim, &driver, &err)) {
		fprintf(out, "selftest skipped: %s\n", err.msg);
		return 77;
	}
	fprintf(out, "selftest on '%s' (sm_%d, %d SMs, driver %d.%d), reference '%s'\n", lim.name,
		lim.cc, lim.sm_count, driver / 1000, driver % 1000 / 10, reference_path);
	if (ft_eval_open(&ev, gpu, &lim, reference_path, &err)) {
		fprintf(out, "selftest FAILED: %s\n", err.msg);
		ft_gpu_close(gpu);
		return 1;
	}
	ev->keep_ref_host = 1;
	for (int i = 0; i < ncases; i++) {
		int r = selftest_case(ev, i, out, &err);
		if (r < 0) {
			fprintf(out, "selftest FAILED: %s\n", err.msg);
			failed = ncases;
			break;
		}
		failed += !r;
	}
	fprintf(out, "selftest %s: %d of %d cases within %.0e of the fp64 reference\n",
		failed ? "FAILED" : "passed", failed >= ncases ? 0 : ncases - failed, ncases,
		SELFTEST_TOL);
	ft_eval_close(ev);
	ft_gpu_close(gpu);
	return failed ? 1 : 0;
}
