/* launch_check.c - runs the README's launch example (docs/examples/launch.c) on the GPU against a
 * CPU reference: the proof that an exported build_config.h, the template built from it with nvcc
 * alone, and the FATUNE_LAUNCH_* macros compute attention (tests/gpu/013-export-launch.sh).
 *
 *   launch_check KERNEL.cubin B H S    (the shape the header was exported for; bhsd, S_q = S_kv)
 *
 * Inputs are uniform in [-1, 1] from a fixed LCG; the output is compared with a double-precision
 * softmax(QK^T / sqrt(D)) V (top-left causal mask when IS_CAUSAL) by relative L2 error, which must
 * be finite and under 1e-2 (fp16 lands near 3e-4, bf16 near 2e-3: docs FACTS). Exit 0 when it is.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../docs/examples/launch.c"

/* float to fp16 / bf16 bits (round to nearest even; inputs are small and normal) and back */
static uint16_t to16(float f)
{
	uint32_t x;

	memcpy(&x, &f, 4);
	if (FATUNE_BF16)
		return (uint16_t)((x + 0x7fff + ((x >> 16) & 1)) >> 16);
	{
		uint32_t sign = (x >> 16) & 0x8000, mant = x & 0x7fffff;
		int e = (int)((x >> 23) & 0xff) - 127 + 15;
		uint32_t h;

		if (e <= 0)
			return (uint16_t)sign; /* |f| < 2^-14: zero is close enough for a check */
		h = sign | ((uint32_t)e << 10) | (mant >> 13);
		if ((mant & 0x1fff) > 0x1000 || ((mant & 0x1fff) == 0x1000 && (h & 1)))
			h++;
		return (uint16_t)h;
	}
}

static float from16(uint16_t h)
{
	uint32_t x;
	float f;

	if (FATUNE_BF16) {
		x = (uint32_t)h << 16;
	} else {
		uint32_t sign = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff;
		if (!e)
			return sign ? -0.0f : 0.0f;
		x = e == 31 ? sign | 0x7f800000 | (m << 13) : sign | ((e - 15 + 127) << 23) | (m << 13);
	}
	memcpy(&f, &x, 4);
	return f;
}

#define DIE(...)                                                                                   \
	do {                                                                                       \
		fprintf(stderr, "launch_check: " __VA_ARGS__);                                     \
		fputc('\n', stderr);                                                               \
		return 1;                                                                          \
	} while (0)

int main(int argc, char **argv)
{
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CUdeviceptr dq, dk, dv, dout;
	int b, h, s;
	size_t n, bytes;
	uint16_t *q, *k, *v, *o;
	uint32_t seed = 12345;
	double num = 0, den = 0;

	if (argc != 5)
		DIE("usage: launch_check KERNEL.cubin B H S");
	b = atoi(argv[2]);
	h = atoi(argv[3]);
	s = atoi(argv[4]);
	n = (size_t)b * h * s * HEAD_DIM;
	bytes = n * 2;
	q = malloc(bytes);
	k = malloc(bytes);
	v = malloc(bytes);
	o = malloc(bytes);
	if (!q || !k || !v || !o)
		DIE("out of memory");
	for (size_t i = 0; i < n; i++) {
		uint16_t *t[3] = { q, k, v };
		for (int j = 0; j < 3; j++) {
			seed = seed * 1664525u + 1013904223u;
			t[j][i] = to16((float)(seed >> 8) / 8388608.0f - 1.0f);
		}
	}
	if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx))
		DIE("no CUDA device");
	if (cuModuleLoad(&mod, argv[1]))
		DIE("cannot load %s", argv[1]);
	if (cuMemAlloc(&dq, bytes) || cuMemAlloc(&dk, bytes) || cuMemAlloc(&dv, bytes) || cuMemAlloc(&dout, bytes) ||
	    cuMemcpyHtoD(dq, q, bytes) || cuMemcpyHtoD(dk, k, bytes) || cuMemcpyHtoD(dv, v, bytes) ||
	    cuMemsetD8(dout, 0xff, bytes))
		DIE("cannot set up device memory");
	if (fatune_attention(mod, 0, dq, dk, dv, dout, b, h, s))
		DIE("the launch failed");
	if (cuCtxSynchronize() || cuMemcpyDtoH(o, dout, bytes))
		DIE("the kernel failed");
	/* the reference, row by row */
	for (int bh = 0; bh < b * h; bh++)
		for (int i = 0; i < s; i++) {
			const size_t base = (size_t)bh * s * HEAD_DIM;
			double w[8192], mx = -INFINITY, sum = 0;
			int last = IS_CAUSAL ? i : s - 1;

			if (s > 8192)
				DIE("S over 8192");
			for (int j = 0; j <= last; j++) {
				double dot = 0;
				for (int d = 0; d < HEAD_DIM; d++)
					dot += (double)from16(q[base + (size_t)i * HEAD_DIM + d]) *
					       from16(k[base + (size_t)j * HEAD_DIM + d]);
				w[j] = dot / sqrt((double)HEAD_DIM);
				mx = fmax(mx, w[j]);
			}
			for (int j = 0; j <= last; j++)
				sum += (w[j] = exp(w[j] - mx));
			for (int d = 0; d < HEAD_DIM; d++) {
				double ref = 0, got = from16(o[base + (size_t)i * HEAD_DIM + d]);
				for (int j = 0; j <= last; j++)
					ref += w[j] / sum * from16(v[base + (size_t)j * HEAD_DIM + d]);
				if (!isfinite(got))
					DIE("output [%d, %d, %d] is not finite", bh, i, d);
				num += (got - ref) * (got - ref);
				den += ref * ref;
			}
		}
	printf("launch_check: %dx%dx%dx%d %s%s: relative L2 error %.3e\n", b, h, s, HEAD_DIM,
	       FATUNE_BF16 ? "bf16" : "fp16", IS_CAUSAL ? " causal" : "", sqrt(num / den));
	return sqrt(num / den) < 1e-2 ? 0 : 1;
}
