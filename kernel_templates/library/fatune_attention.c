/* fatune_attention.c - the runtime of a library `fatune export --library DIR` made (copied by the exporter).
 *
 * Checks the arguments, finds the compute capability of the current
 * context's device (once per context), picks the config with the generated
 * dispatch tables of the parts that run there (fatune_parts.c: per (arch,
 * space) its table's pick and eval, generated from the search space's own
 * expressions), loads the entry's embedded CUBIN once per CUDA context
 * (fatune_library.h, fatune_cubins.c) and launches it through the driver API, which is opened
 * with dlopen so the library builds and links without CUDA. The kernel
 * parameters are fatune's ABI v2 (fatune_abi.h): the same struct, grid,
 * block, dynamic shared memory, split-KV partials, workspace and combine
 * launch as fatune's worker used when it timed the config.
 */
#include "fatune_attention.h"

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fatune_abi.h"
#include "fatune_library.h"

/* ---- the driver, opened once ------------------------------------------- */

typedef int (*cu_init_t)(unsigned);
typedef int (*cu_ctx_get_current_t)(void **);
typedef int (*cu_ctx_get_device_t)(int *);
typedef int (*cu_device_get_attribute_t)(int *, int, int);
typedef int (*cu_module_load_data_t)(void **, const void *);
typedef int (*cu_module_get_function_t)(void **, void *, const char *);
typedef int (*cu_func_set_attribute_t)(void *, int, int);
typedef int (*cu_launch_kernel_t)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
				  unsigned, void *, void **, void **);
/* cuLaunchKernelEx's CUlaunchConfig and CUlaunchAttribute (cuda.h, CUDA 12) */
struct cu_launch_attribute {
	int id;
	char pad[4];
	union {
		char bytes[64];
		int programmatic_stream_serialization_allowed;
	} value;
};
struct cu_launch_config {
	unsigned grid[3], block[3], smem;
	void *stream;
	struct cu_launch_attribute *attrs;
	unsigned nattrs;
};
typedef int (*cu_launch_kernel_ex_t)(const struct cu_launch_config *, void *, void **, void **);
typedef int (*cu_memset_d8_async_t)(unsigned long long, unsigned char, size_t, void *);
typedef int (*cu_tensor_map_encode_tiled_t)(void *, int, unsigned, void *, const unsigned long long *,
					    const unsigned long long *, const unsigned *, const unsigned *, int, int,
					    int, int);

/* driver enum values (cuda.h), restated so the library needs no CUDA headers */
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR 75
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR 76
#define CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES 8
#define CU_TENSOR_MAP_DATA_TYPE_FLOAT16 6
#define CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 9
#define CU_TENSOR_MAP_L2_PROMOTION_L2_128B 2
#define CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION 6

static struct {
	pthread_once_t once;
	int status;		/* FATUNE_OK once opened */
	cu_init_t init;
	cu_ctx_get_current_t ctx_get_current;
	cu_ctx_get_device_t ctx_get_device;
	cu_device_get_attribute_t device_get_attribute;
	cu_module_load_data_t module_load_data;
	cu_module_get_function_t module_get_function;
	cu_func_set_attribute_t func_set_attribute;
	cu_launch_kernel_t launch_kernel;
	cu_launch_kernel_ex_t launch_kernel_ex;	/* NULL on drivers before CUDA 11.8 */
	cu_memset_d8_async_t memset_d8_async;
	cu_tensor_map_encode_tiled_t tensor_map_encode_tiled;	/* NULL on drivers before CUDA 12 */
} cu = { .once = PTHREAD_ONCE_INIT, .status = FATUNE_E_DRIVER };

static void open_driver(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);

	if (!h)
		return;
	*(void **)&cu.init = dlsym(h, "cuInit");
	*(void **)&cu.ctx_get_current = dlsym(h, "cuCtxGetCurrent");
	*(void **)&cu.ctx_get_device = dlsym(h, "cuCtxGetDevice");
	*(void **)&cu.device_get_attribute = dlsym(h, "cuDeviceGetAttribute");
	*(void **)&cu.module_load_data = dlsym(h, "cuModuleLoadData");
	*(void **)&cu.module_get_function = dlsym(h, "cuModuleGetFunction");
	*(void **)&cu.func_set_attribute = dlsym(h, "cuFuncSetAttribute");
	*(void **)&cu.launch_kernel = dlsym(h, "cuLaunchKernel");
	*(void **)&cu.launch_kernel_ex = dlsym(h, "cuLaunchKernelEx");
	*(void **)&cu.memset_d8_async = dlsym(h, "cuMemsetD8Async");
	*(void **)&cu.tensor_map_encode_tiled = dlsym(h, "cuTensorMapEncodeTiled");
	if (cu.init && cu.ctx_get_current && cu.ctx_get_device && cu.device_get_attribute && cu.module_load_data &&
	    cu.module_get_function && cu.func_set_attribute && cu.launch_kernel && cu.memset_d8_async &&
	    cu.init(0) == 0)
		cu.status = FATUNE_OK;
}

/* ---- contexts: the compute capability of each, asked once ----------------- */

#define MAX_CONTEXTS 64	/* contexts a process keeps; more are asked again on every new choice */

static pthread_mutex_t loaded_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	void *ctx;
	int cc;
} contexts[MAX_CONTEXTS];
static int ncontexts;

/* The current context (*ctx) and its device's compute capability (*cc,
 * major*10+minor). FATUNE_E_DRIVER without a driver or a current context. */
static int current_cc(void **ctx, int *cc)
{
	int dev, major = 0, minor = 0;

	*ctx = NULL;
	if (cu.status || cu.ctx_get_current(ctx) || !*ctx)
		return FATUNE_E_DRIVER;
	pthread_mutex_lock(&loaded_lock);
	for (int i = 0; i < ncontexts; i++)
		if (contexts[i].ctx == *ctx) {
			*cc = contexts[i].cc;
			pthread_mutex_unlock(&loaded_lock);
			return FATUNE_OK;
		}
	pthread_mutex_unlock(&loaded_lock);
	if (cu.ctx_get_device(&dev) || cu.device_get_attribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev) ||
	    cu.device_get_attribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev))
		return FATUNE_E_CUDA;
	*cc = major * 10 + minor;
	pthread_mutex_lock(&loaded_lock);
	if (ncontexts < MAX_CONTEXTS) {
		contexts[ncontexts].ctx = *ctx;
		contexts[ncontexts++].cc = *cc;
	}
	pthread_mutex_unlock(&loaded_lock);
	return FATUNE_OK;
}

/* 1 when part p's CUBINs run on a device of compute capability cc: the same
 * one, or (not for sm_XXa targets) the same major and a later minor. */
static int part_runs_on(const struct fatune_lib_part *p, int cc)
{
	return p->cc == cc || (!p->exact && p->cc / 10 == cc / 10 && p->cc < cc);
}

/* The compute capability whose parts serve a device of cc: the highest of
 * the library's that runs there; 0 when none does. */
static int serving_cc(int cc)
{
	int best = 0;

	for (int i = 0; i < FATUNE_LIB_NPARTS; i++)
		if (part_runs_on(&fatune_lib_parts[i], cc) && fatune_lib_parts[i].cc > best)
			best = fatune_lib_parts[i].cc;
	return best;
}

/* ---- modules: one per (context, part, CUBIN), loaded once ------------------ */

#define MAX_LOADED 256	/* contexts x CUBINs a process keeps; more is refused, never evicted */

struct loaded {
	void *ctx;
	int part, cubin;
	void *main_fn, *combine_fn;
};

static struct loaded loaded[MAX_LOADED];
static int nloaded;

/* The functions of entry `index` of part `part` in the current context ctx,
 * loading its CUBIN the first time. */
static int functions(void *ctx, int part, int index, void **main_fn, void **combine_fn)
{
	const struct fatune_lib_part *p = &fatune_lib_parts[part];
	const int c = p->cubin_of[index];
	void *mod = NULL;
	int rc = FATUNE_OK;

	pthread_mutex_lock(&loaded_lock);
	for (int i = 0; i < nloaded; i++)
		if (loaded[i].ctx == ctx && loaded[i].part == part && loaded[i].cubin == c) {
			*main_fn = loaded[i].main_fn;
			*combine_fn = loaded[i].combine_fn;
			pthread_mutex_unlock(&loaded_lock);
			return FATUNE_OK;
		}
	if (nloaded == MAX_LOADED)
		rc = FATUNE_E_CUDA;
	else if (cu.module_load_data(&mod, fatune_lib_cubins[c].data) ||
		 cu.module_get_function(&loaded[nloaded].main_fn, mod, p->kernel))
		rc = FATUNE_E_CUDA;
	else if (p->combine_kernel[0] && cu.module_get_function(&loaded[nloaded].combine_fn, mod, p->combine_kernel))
		rc = FATUNE_E_CUDA;
	/* the opt-in above the static limit, once per function: every entry of a
	 * CUBIN has the same shared memory (it is compiled in, FATUNE_SMEM_BYTES) */
	else if (p->smem_dynamic && fatune_lib_cubins[c].smem > p->smem_static_limit &&
		 cu.func_set_attribute(loaded[nloaded].main_fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
				       fatune_lib_cubins[c].smem))
		rc = FATUNE_E_CUDA;
	if (rc == FATUNE_OK) {
		loaded[nloaded].ctx = ctx;
		loaded[nloaded].part = part;
		loaded[nloaded].cubin = c;
		*main_fn = loaded[nloaded].main_fn;
		*combine_fn = loaded[nloaded].combine_fn;
		nloaded++;
	}
	pthread_mutex_unlock(&loaded_lock);
	return rc;
}

/* ---- recording untuned shapes ------------------------------------------- */

#define MAX_RECORDED 256

struct recorded {
	int b, h, h_kv, s_q, s_kv, d, bf16, causal, bshd;
	int cc;		/* the compute capability it was called for */
};

static pthread_mutex_t record_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t record_env = PTHREAD_ONCE_INIT;
static char record_path[4096];
static struct recorded recorded[MAX_RECORDED];
static int nrecorded;
static atomic_int record_generation;	/* bumped when recording is switched: cached choices are redone */

static void record_from_env(void)
{
	const char *p = getenv("FATUNE_RECORD_UNTUNED");

	if (p && *p)
		fatune_attention_record_untuned(p);
}

int fatune_attention_record_untuned(const char *path)
{
	pthread_mutex_lock(&record_lock);
	if (path && strlen(path) >= sizeof(record_path)) {
		pthread_mutex_unlock(&record_lock);
		return FATUNE_E_RECORD;
	}
	snprintf(record_path, sizeof(record_path), "%s", path ? path : "");
	nrecorded = 0;
	atomic_fetch_add(&record_generation, 1);
	pthread_mutex_unlock(&record_lock);
	return FATUNE_OK;
}

/* Writes the campaign file through a temporary name (never half a file). */
static int write_campaign(void)
{
	char tmp[4200];
	FILE *f;
	int bad;

	snprintf(tmp, sizeof(tmp), "%s.tmp", record_path);
	if (!(f = fopen(tmp, "w")))
		return FATUNE_E_RECORD;
	fprintf(f, "# shapes called without a tuned entry (fatune_attention_record_untuned): tune them with\n"
		   "# fatune search --campaign THIS_FILE on a GPU of the compute capability each one names\n"
		   "fatune_campaign: 1\nname: untuned\nshapes:\n");
	for (int i = 0; i < nrecorded; i++) {
		const struct recorded *r = &recorded[i];

		fprintf(f, "  # called on a device of compute capability %d.%d (sm_%d)\n", r->cc / 10, r->cc % 10, r->cc);
		fprintf(f, "  - shape: %dx%dx%dx%d\n    kv_heads: %d\n    kv_len: %d\n    layout: %s\n"
			   "    dtype: [%s]\n    causal: [%d]\n",
			r->b, r->h, r->s_q, r->d, r->h_kv, r->s_kv, r->bshd ? "bshd" : "bhsd", r->bf16 ? "bf16" : "fp16",
			r->causal);
	}
	bad = ferror(f);
	if (fclose(f) || bad || rename(tmp, record_path)) {
		remove(tmp);
		return FATUNE_E_RECORD;
	}
	return FATUNE_OK;
}

static int record(const struct fatune_attention_args *a, int bshd, int cc)
{
	struct recorded r = { a->b, a->h, a->h_kv, a->s_q, a->s_kv, a->d, a->dtype == FATUNE_BF16, a->causal != 0, bshd,
			      cc };
	int rc = FATUNE_OK;

	pthread_once(&record_env, record_from_env);
	pthread_mutex_lock(&record_lock);
	if (record_path[0] && nrecorded < MAX_RECORDED) {
		int seen = 0;

		for (int i = 0; i < nrecorded && !seen; i++)
			seen = !memcmp(&recorded[i], &r, sizeof(r));
		if (!seen) {
			recorded[nrecorded++] = r;
			rc = write_campaign();
		}
	}
	pthread_mutex_unlock(&record_lock);
	return rc;
}

/* ---- choosing ------------------------------------------------------------ */

struct choice {
	int part, index, tuned, bshd;
	long long g[10];	/* the entry's launch for the shape (its part's eval) */
	size_t partial_o, partial_lse, scratch, total;	/* workspace offsets and size */
};

/* 1 when the strides are those of a contiguous [B,H,S,D] (bshd 0) or
 * [B,S,H,D] (bshd 1) tensor of heads x rows x d. */
static int contiguous(const long long *st, int heads, int rows, int d, int bshd)
{
	if (bshd)
		return st[1] == d && st[2] == (long long)heads * d && st[0] == (long long)rows * heads * d;
	return st[2] == d && st[1] == (long long)rows * d && st[0] == (long long)heads * rows * d;
}

static size_t align256(size_t x)
{
	return (x + 255) & ~(size_t)255;
}

/* What a choice depends on: the arguments but for pointers and workspace,
 * and the compute capability chosen for. */
struct choice_key {
	long long strides[12];
	int sizes[6], dtype, causal, cc;
	unsigned flags;
};

static void key_of(const struct fatune_attention_args *a, int cc, struct choice_key *k)
{
	memset(k, 0, sizeof(*k));
	memcpy(k->strides, a->q_stride, sizeof(a->q_stride));
	memcpy(k->strides + 3, a->k_stride, sizeof(a->k_stride));
	memcpy(k->strides + 6, a->v_stride, sizeof(a->v_stride));
	memcpy(k->strides + 9, a->o_stride, sizeof(a->o_stride));
	k->sizes[0] = a->b;
	k->sizes[1] = a->h;
	k->sizes[2] = a->h_kv;
	k->sizes[3] = a->s_q;
	k->sizes[4] = a->s_kv;
	k->sizes[5] = a->d;
	k->dtype = a->dtype;
	k->causal = a->causal;
	k->cc = cc;
	k->flags = a->flags & FATUNE_STRICT;	/* the only flag the choice depends on */
}

/* The checks that need no device: dtype, sizes, layout (*bshd). */
static int check_args(const struct fatune_attention_args *a, int *bshd)
{
	if (a->dtype != FATUNE_FP16 && a->dtype != FATUNE_BF16)
		return FATUNE_E_DTYPE;
	if (a->b < 1 || a->h < 1 || a->h_kv < 1 || a->s_q < 1 || a->s_kv < 1 || a->d < 1 || a->h % a->h_kv ||
	    (a->causal != 0 && a->causal != 1) || a->cc < 0)
		return FATUNE_E_ARGS;
	for (*bshd = 0; *bshd < 2; (*bshd)++)
		if (contiguous(a->q_stride, a->h, a->s_q, a->d, *bshd) && contiguous(a->o_stride, a->h, a->s_q, a->d, *bshd) &&
		    contiguous(a->k_stride, a->h_kv, a->s_kv, a->d, *bshd) &&
		    contiguous(a->v_stride, a->h_kv, a->s_kv, a->d, *bshd))
			return FATUNE_OK;
	return FATUNE_E_LAYOUT;
}

/* The compute capability a plan or size query chooses for: a->cc, else the
 * current context's device, else (no driver or context) the library's only
 * one; FATUNE_E_DRIVER when it holds several. */
static int plan_cc(const struct fatune_attention_args *a, int *cc)
{
	void *ctx;

	if (a->cc) {
		*cc = a->cc;
		return FATUNE_OK;
	}
	pthread_once(&cu.once, open_driver);
	if (current_cc(&ctx, cc) == FATUNE_OK)
		return FATUNE_OK;
	*cc = fatune_lib_parts[0].cc;
	for (int i = 1; i < FATUNE_LIB_NPARTS; i++)
		if (fatune_lib_parts[i].cc != *cc)
			return FATUNE_E_DRIVER;
	return FATUNE_OK;
}

/* Whether pick x beats y across parts: the parts' own rule (nearest S and KV
 * length, then nearest B*H times GQA group: ds and dbh, computed by the
 * tables' own code), then the faster tuned time (untimed last); equal: the
 * earlier part, which the caller keeps. */
static int better(const struct fatune_lib_pick *x, const struct fatune_lib_pick *y)
{
	if (x->ds != y->ds)
		return x->ds < y->ds;
	if (x->dbh != y->dbh)
		return x->dbh < y->dbh;
	if ((x->t_median_us < 0) != (y->t_median_us < 0))
		return y->t_median_us < 0;
	return x->t_median_us < y->t_median_us;
}

static int choose_uncached(const struct fatune_attention_args *a, int cc, struct choice *c);

/* The choice for a's shape on cc: the last successful one of this thread
 * when the shape is the same (a serving loop calls with few shapes; the pick
 * evaluates every candidate entry's constraints), else computed. */
static int choose(const struct fatune_attention_args *a, int cc, struct choice *c)
{
	static __thread struct choice_key last_key;
	static __thread struct choice last;
	static __thread int have_last, last_generation;
	int generation = atomic_load(&record_generation);
	struct choice_key k;
	int rc;

	key_of(a, cc, &k);
	if (have_last && last_generation == generation && !memcmp(&k, &last_key, sizeof(k))) {
		*c = last;
		return FATUNE_OK;
	}
	if ((rc = choose_uncached(a, cc, c)) == FATUNE_OK) {
		last_key = k;
		last = *c;
		last_generation = generation;
		have_last = 1;
	}
	return rc;
}

static int choose_uncached(const struct fatune_attention_args *a, int cc, struct choice *c)
{
	const int serving = serving_cc(cc);
	struct fatune_lib_pick best, pick;
	int any_d = 0, rc, splits;

	memset(c, 0, sizeof(*c));
	if ((rc = check_args(a, &c->bshd)) && rc != FATUNE_E_LAYOUT)
		return rc;
	if (!serving)
		return FATUNE_E_ARCH;
	for (int i = 0; i < FATUNE_LIB_NPARTS; i++)
		any_d |= fatune_lib_parts[i].cc == serving && part_runs_on(&fatune_lib_parts[i], cc) &&
			 fatune_lib_parts[i].any(a->d, a->dtype, a->causal);
	if (!any_d)
		return FATUNE_E_HEAD_DIM;
	if (rc)
		return rc;	/* the layout, once the head dim is known to be served */
	c->part = -1;
	for (int i = 0; i < FATUNE_LIB_NPARTS; i++) {
		const struct fatune_lib_part *p = &fatune_lib_parts[i];

		if (p->cc != serving || !part_runs_on(p, cc) || !p->any(a->d, a->dtype, a->causal))
			continue;
		memset(&pick, 0, sizeof(pick));
		if (p->pick(a->d, a->dtype, a->causal, a->b, a->h, a->s_q, a->s_kv, a->h_kv, c->bshd, &pick) &&
		    (c->part < 0 || better(&pick, &best))) {
			best = pick;
			c->part = i;
		}
	}
	c->tuned = c->part >= 0 && best.batch == a->b && best.heads == a->h && best.kv_heads == a->h_kv &&
		   best.seq_len == a->s_q && best.kv_len == a->s_kv;
	if (!c->tuned && record(a, c->bshd, cc))
		return FATUNE_E_RECORD;
	if (c->part < 0)
		return FATUNE_E_NO_CONFIG;
	if (!c->tuned && (a->flags & FATUNE_STRICT))
		return FATUNE_E_UNTUNED;
	c->index = best.index;
	memcpy(c->g, best.g, sizeof(c->g));
	splits = fatune_lib_parts[c->part].num_splits[c->index];
	if (splits > 1) {
		size_t rows = (size_t)splits * a->b * a->h * a->s_q;

		c->partial_lse = align256(rows * a->d * 4);
		c->scratch = c->partial_lse + align256(rows * 4);
	}
	c->total = c->scratch + (size_t)c->g[9];
	return FATUNE_OK;
}

int fatune_attention_workspace_size(const struct fatune_attention_args *a, size_t *bytes)
{
	struct choice c;
	int rc, cc;

	if (!a || !bytes)
		return FATUNE_E_ARGS;
	*bytes = 0;
	if ((rc = plan_cc(a, &cc)) || (rc = choose(a, cc, &c)))
		return rc;
	*bytes = c.total;
	return FATUNE_OK;
}

int fatune_attention_plan(const struct fatune_attention_args *a, struct fatune_attention_plan *out)
{
	struct choice c;
	const struct fatune_lib_part *p;
	int rc, cc;

	if (!out || !a)
		return FATUNE_E_ARGS;
	memset(out, 0, sizeof(*out));
	if ((rc = plan_cc(a, &cc)) || (rc = choose(a, cc, &c)))
		return rc;
	p = &fatune_lib_parts[c.part];
	out->entry = c.index;
	out->tuned = c.tuned;
	out->num_splits = p->num_splits[c.index];
	out->smem_bytes = (unsigned)c.g[0];
	out->threads = (unsigned)c.g[1];
	out->combine_threads = out->num_splits > 1 ? (unsigned)c.g[5] : 0;
	for (int i = 0; i < 3; i++) {
		out->grid[i] = (unsigned)c.g[2 + i];
		out->combine_grid[i] = out->combine_threads ? (unsigned)c.g[6 + i] : 0;
	}
	out->workspace_bytes = c.total;
	snprintf(out->config, sizeof(out->config), "%s", p->configs[c.index]);
	out->part = c.part;
	out->cc = cc;
	snprintf(out->arch, sizeof(out->arch), "%s", p->target);
	snprintf(out->space, sizeof(out->space), "%s", p->space);
	return FATUNE_OK;
}

/* ---- launching ----------------------------------------------------------- */

/* The TMA descriptors the entry's family asks for (its part's tma: rows,
 * cols, swizzle per tensor Q, K, V, O), rank 4 over (D, S, H, B). */
static int encode_tma(const struct fatune_attention_args *a, const struct choice *c, struct fatune_attn_params_v2 *p)
{
	struct fatune_tma_desc *out[4] = { &p->tma_q, &p->tma_k, &p->tma_v, &p->tma_o };
	const void *base[4] = { a->q, a->k, a->v, a->o };
	const long long *st[4] = { a->q_stride, a->k_stride, a->v_stride, a->o_stride };

	for (int t = 0; t < 4; t++) {
		const int *bx = fatune_lib_parts[c->part].tma[c->index][t];
		const int kv = t == 1 || t == 2;
		unsigned long long dims[4] = { (unsigned long long)a->d, (unsigned long long)(kv ? a->s_kv : a->s_q),
					       (unsigned long long)(kv ? a->h_kv : a->h), (unsigned long long)a->b };
		unsigned long long strides[3] = { (unsigned long long)st[t][2] * 2, (unsigned long long)st[t][1] * 2,
						  (unsigned long long)st[t][0] * 2 };
		unsigned box[4] = { (unsigned)bx[1], (unsigned)bx[0], 1, 1 }, elem[4] = { 1, 1, 1, 1 };
		int swizzle = bx[2] == 128 ? 3 : bx[2] == 64 ? 2 : bx[2] == 32 ? 1 : 0;

		if (!bx[0])
			continue;
		if (!cu.tensor_map_encode_tiled ||
		    cu.tensor_map_encode_tiled(out[t], a->dtype == FATUNE_BF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
									: CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
					       4, (void *)base[t], dims, strides, box, elem, 0, swizzle,
					       CU_TENSOR_MAP_L2_PROMOTION_L2_128B, 0))
			return FATUNE_E_CUDA;
	}
	return FATUNE_OK;
}

/* The parameter block of a call (fatune_abi.h v2), TMA descriptors included. */
static int build_params(const struct fatune_attention_args *a, const struct choice *c, struct fatune_attn_params_v2 *p)
{
	unsigned char *ws = (unsigned char *)a->workspace;
	const int splits = fatune_lib_parts[c->part].num_splits[c->index];

	memset(p, 0, sizeof(*p));
	p->q = a->q;
	p->k = a->k;
	p->v = a->v;
	p->o = a->o;
	if (splits > 1) {
		p->o_partial = (float *)(void *)(ws + c->partial_o);
		p->lse_partial = (float *)(void *)(ws + c->partial_lse);
	}
	if (c->g[9]) {
		p->workspace = ws + c->scratch;
		p->workspace_bytes = c->g[9];
	}
	p->q_stride_b = a->q_stride[0];
	p->q_stride_h = a->q_stride[1];
	p->q_stride_s = a->q_stride[2];
	p->k_stride_b = a->k_stride[0];
	p->k_stride_h = a->k_stride[1];
	p->k_stride_s = a->k_stride[2];
	p->v_stride_b = a->v_stride[0];
	p->v_stride_h = a->v_stride[1];
	p->v_stride_s = a->v_stride[2];
	p->o_stride_b = a->o_stride[0];
	p->o_stride_h = a->o_stride[1];
	p->o_stride_s = a->o_stride[2];
	p->b = a->b;
	p->h = a->h;
	p->h_kv = a->h_kv;
	p->s_q = a->s_q;
	p->s_kv = a->s_kv;
	p->d = a->d;
	p->num_splits = splits;
	p->causal_offset = a->s_kv - a->s_q;
	p->scale = (float)(1.0 / sqrt((double)a->d));
	p->scale_log2 = (float)(1.4426950408889634 / sqrt((double)a->d));	/* log2(e)/sqrt(D) */
	p->layout = c->bshd ? FATUNE_LAYOUT_BSHD : FATUNE_LAYOUT_BHSD;
	p->abi_version = 2;
	return encode_tma(a, c, p);
}

/* The last launch of this thread: a serving loop calls again and again with
 * the same tensors, so the parameter block (and its TMA descriptors) and the
 * functions are reused when the context, the choice and every pointer are the
 * same; the per-call path is then a compare and the launches, as in the
 * worker's timed loop. */
struct last_launch {
	int valid, generation;
	void *ctx;
	int cc;			/* ctx's device */
	struct choice_key key;
	const void *ptr[5];	/* q, k, v, o, workspace */
	struct choice c;
	void *main_fn, *combine_fn;
	struct fatune_attn_params_v2 p;
};

static __thread struct last_launch last_launch;

/* The combine kernel, as the worker launched it when it timed the entry:
 * with programmatic dependent launch where launch.combine_pdl said so (it
 * starts while the main kernel's last blocks run and waits for their
 * partials in griddepcontrol.wait), else plainly. A driver without
 * cuLaunchKernelEx gets the plain launch, which is as correct (the wait
 * returns at once) but serialised. */
static int launch_combine(const struct last_launch *l, void *stream, void **args)
{
	struct cu_launch_attribute attr;
	struct cu_launch_config cfg;

	if (!l->combine_fn)
		return FATUNE_E_CUDA;
	if (!fatune_lib_parts[l->c.part].combine_pdl[l->c.index] || !cu.launch_kernel_ex)
		return cu.launch_kernel(l->combine_fn, (unsigned)l->c.g[6], (unsigned)l->c.g[7], (unsigned)l->c.g[8],
					(unsigned)l->c.g[5], 1, 1, 0, stream, args, NULL)
			       ? FATUNE_E_CUDA
			       : FATUNE_OK;
	memset(&attr, 0, sizeof(attr));
	attr.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
	attr.value.programmatic_stream_serialization_allowed = 1;
	memset(&cfg, 0, sizeof(cfg));
	for (int i = 0; i < 3; i++)
		cfg.grid[i] = (unsigned)l->c.g[6 + i];
	cfg.block[0] = (unsigned)l->c.g[5];
	cfg.block[1] = cfg.block[2] = 1;
	cfg.stream = stream;
	cfg.attrs = &attr;
	cfg.nattrs = 1;
	return cu.launch_kernel_ex(&cfg, l->combine_fn, args, NULL) ? FATUNE_E_CUDA : FATUNE_OK;
}

int fatune_attention_forward(const struct fatune_attention_args *a, void *stream)
{
	struct last_launch *l = &last_launch;
	const struct fatune_lib_part *part;
	struct choice_key key;
	void *ctx = NULL, *args[1];
	int rc, cc, init;

	if (!a)
		return FATUNE_E_ARGS;
	pthread_once(&cu.once, open_driver);
	if (cu.status || cu.ctx_get_current(&ctx) || !ctx) {	/* what can be said without a device first */
		int bshd;

		if ((rc = check_args(a, &bshd)))
			return rc;
		return !a->q || !a->k || !a->v || !a->o ? FATUNE_E_ARGS : FATUNE_E_DRIVER;
	}
	key_of(a, l->valid ? l->cc : 0, &key);
	if (!l->valid || ctx != l->ctx || (a->cc && a->cc != l->cc) || l->generation != atomic_load(&record_generation) ||
	    memcmp(&key, &l->key, sizeof(key)) || l->ptr[0] != a->q || l->ptr[1] != a->k || l->ptr[2] != a->v ||
	    l->ptr[3] != a->o || l->ptr[4] != a->workspace) {
		l->valid = 0;
		if ((rc = current_cc(&ctx, &cc)))
			return rc;
		if (a->cc && a->cc != cc) {
			int bshd;

			return (rc = check_args(a, &bshd)) ? rc : FATUNE_E_ARCH;
		}
		if ((rc = choose(a, cc, &l->c)))
			return rc;
		if (!a->q || !a->k || !a->v || !a->o)
			return FATUNE_E_ARGS;
		if (l->c.total && (!a->workspace || a->workspace_bytes < l->c.total))
			return FATUNE_E_WORKSPACE;
		if ((rc = functions(ctx, l->c.part, l->c.index, &l->main_fn, &l->combine_fn)))
			return rc;
		if ((rc = build_params(a, &l->c, &l->p)))
			return rc;
		key_of(a, cc, &l->key);
		l->ctx = ctx;
		l->cc = cc;
		l->ptr[0] = a->q;
		l->ptr[1] = a->k;
		l->ptr[2] = a->v;
		l->ptr[3] = a->o;
		l->ptr[4] = a->workspace;
		l->generation = atomic_load(&record_generation);
		l->valid = 1;
	} else if (l->c.total && a->workspace_bytes < l->c.total) {
		return FATUNE_E_WORKSPACE;
	}
	part = &fatune_lib_parts[l->c.part];
	init = part->workspace_init;
	args[0] = &l->p;
	/* the kernel's scratch, as the worker treats it: init zero before every
	 * call; zero_once before the first call on a workspace only (the kernels
	 * leave it zero), which the caller vouches for with FATUNE_WORKSPACE_KEPT */
	if (l->c.g[9] &&
	    (init == FATUNE_WORKSPACE_ZERO || (init == FATUNE_WORKSPACE_ZERO_ONCE && !(a->flags & FATUNE_WORKSPACE_KEPT))) &&
	    cu.memset_d8_async((unsigned long long)(uintptr_t)l->p.workspace, 0, (size_t)l->c.g[9], stream))
		return FATUNE_E_CUDA;
	if (cu.launch_kernel(l->main_fn, (unsigned)l->c.g[2], (unsigned)l->c.g[3], (unsigned)l->c.g[4],
			     (unsigned)l->c.g[1], 1, 1, part->smem_dynamic ? (unsigned)l->c.g[0] : 0, stream, args, NULL))
		return FATUNE_E_CUDA;
	if (part->num_splits[l->c.index] > 1 && l->c.g[5] > 0 && launch_combine(l, stream, args))
		return FATUNE_E_CUDA;
	return FATUNE_OK;
}

const char *fatune_strerror(int status)
{
	switch (status) {
	case FATUNE_OK: return "ok";
	case FATUNE_E_ARGS: return "bad arguments: a NULL pointer, a size below 1, H not a multiple of H_kv, causal not 0/1, or cc below 0";
	case FATUNE_E_DTYPE: return "dtype is neither FATUNE_FP16 nor FATUNE_BF16";
	case FATUNE_E_HEAD_DIM: return "no config was tuned for this head dim, dtype and causal flag: tune it with fatune search";
	case FATUNE_E_LAYOUT: return "strides are not those of contiguous [B,H,S,D] or [B,S,H,D] tensors (make them contiguous)";
	case FATUNE_E_UNTUNED: return "this shape was not tuned and FATUNE_STRICT is set (record it with fatune_attention_record_untuned)";
	case FATUNE_E_NO_CONFIG: return "no tuned config is valid for this shape (grouped-query, decode and layout need configs of their kind)";
	case FATUNE_E_WORKSPACE: return "the workspace is NULL or smaller than fatune_attention_workspace_size says";
	case FATUNE_E_DRIVER: return "the CUDA driver (libcuda.so.1) cannot be opened or initialised, or there is no current CUDA context (plan without a GPU: set args.cc)";
	case FATUNE_E_ARCH: return "this library holds no CUBIN for the device's compute capability (or args.cc differs from the device's): it holds " FATUNE_LIB_ARCHS;
	case FATUNE_E_CUDA: return "a CUDA driver call failed (module load, shared-memory attribute, TMA descriptor or launch)";
	case FATUNE_E_RECORD: return "the untuned-shape campaign file cannot be written";
	default: return "unknown fatune status";
	}
}
