"""ftkernel.py - load a fatune attention CUBIN and launch it over torch tensors.

A tiny ctypes binding to the CUDA driver API (libcuda), used by the bench
scripts: it loads a CUBIN into torch's own (primary) context, raises the
dynamic shared-memory limit, and launches the main kernel (and, with
num_splits > 1, the combine kernel) on torch's current stream, so that
torch.cuda.CUDAGraph can capture the launches. The parameter block is packed
exactly like struct fatune_attn_params (kernel_templates/fatune_abi.h).

Every CUresult is checked; a failure raises CudaError naming the call.
Also holds the timing method the bench scripts share with fatune (docs/timing.md):
the median over R = 30 samples, each one CUDA-event pair around a single replay
of a CUDA graph of K back-to-back calls (K such that a sample lasts ~1 ms),
divided by K, after >= 20 ms of warm-up replays.
"""

import ctypes
import math
import statistics

import torch

CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
CU_FUNC_ATTRIBUTE_NUM_REGS = 4
CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3

_lib = None


class CudaError(RuntimeError):
    pass


def _cuda():
    global _lib
    if _lib is None:
        try:
            _lib = ctypes.CDLL("libcuda.so.1")
        except OSError as e:
            raise CudaError(f"cannot load the NVIDIA driver library 'libcuda.so.1': {e}") from e
        _check(_lib.cuInit(0), "cuInit")
    return _lib


def _check(res, what):
    if res != 0:
        name = ctypes.c_char_p()
        msg = ctypes.c_char_p()
        if _lib is not None:
            _lib.cuGetErrorName(res, ctypes.byref(name))
            _lib.cuGetErrorString(res, ctypes.byref(msg))
        raise CudaError(f"{what} failed: CUresult {res} "
                        f"({(name.value or b'?').decode()}: {(msg.value or b'?').decode()})")


class AttnParams(ctypes.Structure):
    """struct fatune_attn_params, field for field (fatune_abi.h, FATUNE_ABI_VERSION 1)."""
    _fields_ = [
        ("q", ctypes.c_void_p),
        ("k", ctypes.c_void_p),
        ("v", ctypes.c_void_p),
        ("o", ctypes.c_void_p),
        ("o_partial", ctypes.c_void_p),
        ("lse_partial", ctypes.c_void_p),
        ("b", ctypes.c_int),
        ("h", ctypes.c_int),
        ("s", ctypes.c_int),
        ("num_splits", ctypes.c_int),
        ("scale", ctypes.c_float),
        ("scale_log2", ctypes.c_float),
    ]


assert ctypes.sizeof(AttnParams) == 72, "struct fatune_attn_params is 72 bytes on LP64"


def _use_torch_context():
    """Makes torch's primary context current on this thread (torch creates it)."""
    torch.cuda.init()
    torch.empty(1, device="cuda")  # forces the context into existence
    lib = _cuda()
    dev = ctypes.c_int()
    _check(lib.cuDeviceGet(ctypes.byref(dev), torch.cuda.current_device()), "cuDeviceGet")
    ctx = ctypes.c_void_p()
    _check(lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
    _check(lib.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    return lib


class Module:
    """A loaded CUBIN with fatune's two entry points."""

    def __init__(self, cubin, kernel="fatune_attention_fwd", combine="fatune_attention_combine"):
        lib = _use_torch_context()
        if isinstance(cubin, str):
            with open(cubin, "rb") as f:
                cubin = f.read()
        self._image = ctypes.create_string_buffer(cubin, len(cubin))
        self.handle = ctypes.c_void_p()
        _check(lib.cuModuleLoadData(ctypes.byref(self.handle), self._image), "cuModuleLoadData")
        self.fwd = self._function(kernel)
        self.combine = self._function(combine) if combine else None
        self._smem_set = 0

    def _function(self, name):
        f = ctypes.c_void_p()
        _check(_lib.cuModuleGetFunction(ctypes.byref(f), self.handle, name.encode()),
               f"cuModuleGetFunction('{name}')")
        return f

    def attribute(self, attr, fn=None):
        v = ctypes.c_int()
        _check(_lib.cuFuncGetAttribute(ctypes.byref(v), attr, fn or self.fwd), "cuFuncGetAttribute")
        return v.value

    def set_smem(self, nbytes):
        """Raises the main kernel's dynamic shared-memory limit (needed above 48 KB)."""
        if nbytes > self._smem_set:
            _check(_lib.cuFuncSetAttribute(self.fwd, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                           int(nbytes)),
                   f"cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES={nbytes})")
            self._smem_set = nbytes

    def unload(self):
        if self.handle:
            _check(_lib.cuModuleUnload(self.handle), "cuModuleUnload")
            self.handle = None

    def launch(self, fn, grid, threads, smem, params):
        stream = torch.cuda.current_stream().cuda_stream
        args = (ctypes.c_void_p * 1)(ctypes.addressof(params))
        _check(_lib.cuLaunchKernel(fn, int(grid[0]), int(grid[1]), int(grid[2]),
                                   int(threads), 1, 1, int(smem), ctypes.c_void_p(stream),
                                   args, None), "cuLaunchKernel")


class Attention:
    """One configured call: module + launch geometry + buffers for a shape.

    geometry: dict with threads, grid (3), smem, num_splits, combine_threads,
    combine_grid (3). Partial buffers are allocated here, once, so the call
    itself allocates nothing and can be graph-captured.
    """

    def __init__(self, module, geometry, b, h, s, d, device="cuda"):
        self.m = module
        self.g = geometry
        self.shape = (b, h, s, d)
        n = geometry["num_splits"]
        self.o_partial = self.lse_partial = None
        if n > 1:
            self.o_partial = torch.empty((n, b, h, s, d), dtype=torch.float32, device=device)
            self.lse_partial = torch.empty((n, b, h, s), dtype=torch.float32, device=device)
        module.set_smem(geometry["smem"])

    def poison_partials(self):
        if self.o_partial is not None:
            self.o_partial.fill_(float("nan"))
            self.lse_partial.fill_(float("nan"))

    def __call__(self, q, k, v, o):
        b, h, s, d = self.shape
        for t in (q, k, v, o):
            assert t.is_cuda and t.is_contiguous() and tuple(t.shape) == self.shape
        scale = 1.0 / math.sqrt(d)
        p = AttnParams(q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr(),
                       self.o_partial.data_ptr() if self.o_partial is not None else None,
                       self.lse_partial.data_ptr() if self.lse_partial is not None else None,
                       b, h, s, self.g["num_splits"], scale, scale * math.log2(math.e))
        self.m.launch(self.m.fwd, self.g["grid"], self.g["threads"], self.g["smem"], p)
        if self.g["num_splits"] > 1:
            self.m.launch(self.m.combine, self.g["combine_grid"], self.g["combine_threads"], 0, p)


def quick_time(fn, n=3):
    """A rough time of one call in us (after one untimed call): sizes K for time_graph."""
    fn()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    for _ in range(n):
        fn()
    b.record()
    b.synchronize()
    return a.elapsed_time(b) * 1000.0 / n


def time_graph(fn, calls, samples, warmup=3, warmup_ms=20.0):
    """fatune's timing method (docs/timing.md): median (and min, p90) microseconds
    per call over `samples` replays of one CUDA graph holding `calls`
    back-to-back calls of fn, after at least `warmup` replays and warmup_ms of
    GPU time (an idle GPU needs a few ms of load to reach its boost clock)."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(2):  # first calls outside the graph: lazy init, workspace allocation
            fn()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(calls):
            fn()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    done, spent = 0, 0.0
    while done < warmup or spent < warmup_ms:
        start.record()
        graph.replay()
        stop.record()
        stop.synchronize()
        spent += start.elapsed_time(stop)
        done += 1
    ts = []
    for _ in range(samples):
        start.record()
        graph.replay()
        stop.record()
        stop.synchronize()
        ts.append(start.elapsed_time(stop) * 1000.0 / calls)
    del graph
    ts.sort()
    p90 = ts[min(len(ts) - 1, -(-9 * len(ts) // 10) - 1)]  # nearest rank: ceil(0.9 R)-th smallest
    return {"median": statistics.median(ts), "min": ts[0], "p90": p90}


def plan_timing(one_call_us, sample_us=1000.0, samples=30):
    """K and R as fatune picks them: K calls per graph so that one sample lasts
    about sample_us (1 ms: the events' ~0.5 us resolution spread over K calls),
    1 <= K <= 1000; R = 30 samples."""
    k = max(1, min(1000, int(round(sample_us / max(one_call_us, 0.5)))))
    return k, samples


def rel_l2(out, ref):
    """||out - ref|| / ||ref|| in fp64 and the count of non-finite outputs."""
    o = out.double()
    nonfinite = int((~torch.isfinite(o)).sum().item())
    err = float(torch.linalg.vector_norm(o - ref) / torch.linalg.vector_norm(ref))
    return err, nonfinite


def reference(q, k, v, causal, max_scores=1 << 27):
    """fp64 attention with top-left causal masking, computed a few (batch, head)
    pairs at a time so that at most max_scores fp64 scores (1 GiB) exist at once."""
    b, h, s, d = q.shape
    out = torch.empty((b, h, s, d), dtype=torch.float64, device=q.device)
    qf, kf, vf = (t.reshape(b * h, s, d) for t in (q, k, v))
    of = out.view(b * h, s, d)
    step = max(1, max_scores // max(1, s * s))
    for i in range(0, b * h, step):
        j = min(b * h, i + step)
        of[i:j] = torch.nn.functional.scaled_dot_product_attention(
            qf[i:j].double(), kf[i:j].double(), vf[i:j].double(), is_causal=bool(causal))
    return out
