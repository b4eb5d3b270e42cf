"""ftkernel.py - load a fatune attention CUBIN and launch it over torch tensors.

A tiny ctypes binding to the CUDA driver API (libcuda), used by the bench
scripts: it loads a CUBIN into torch's own (primary) context, raises the
dynamic shared-memory limit, and launches the main kernel (and, with
num_splits > 1, the combine kernel unless the geometry's combine_threads is 0:
then the main kernel merges its splits itself, e.g. COMBINE_IN_KERNEL=1) on
torch's current stream, so that
torch.cuda.CUDAGraph can capture the launches. The parameter block is packed
exactly like struct fatune_attn_params_v2 (kernel_templates/fatune_abi.h, ABI v2):
Q, K, V, O are passed as logical [B, H, S, D] tensors with any strides (D contiguous),
so [B, S, H, D] storage is a transpose(1, 2) view.

Attention launches kernels that read plain pointers (the mma family);
AttentionV2 also encodes the TMA descriptors the wgmma family reads
(encode_tma, cuTensorMapEncodeTiled), binding one set of tensors.

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

import launch_config as lc  # cuLaunchKernelEx's structures (PDL)

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


class TmaDesc(ctypes.Structure):
    """struct fatune_tma_desc: a CUtensorMap, 128 opaque bytes (64-byte aligned in C)."""
    _fields_ = [("opaque", ctypes.c_ulonglong * 16)]


class AttnParams(ctypes.Structure):
    """struct fatune_attn_params_v2, field for field (fatune_abi.h, ABI v2). ctypes
    cannot align a field to 64 bytes, but the four TMA descriptors come first
    (offset 0, a multiple of 64 each) and the C struct's 64-byte alignment only
    pads its end: `_pad` is that padding, so the size is the C size, 768."""
    _fields_ = [
        ("tma_q", TmaDesc),
        ("tma_k", TmaDesc),
        ("tma_v", TmaDesc),
        ("tma_o", TmaDesc),
        ("q", ctypes.c_void_p),
        ("k", ctypes.c_void_p),
        ("v", ctypes.c_void_p),
        ("o", ctypes.c_void_p),
        ("o_partial", ctypes.c_void_p),
        ("lse_partial", ctypes.c_void_p),
        ("workspace", ctypes.c_void_p),
        ("workspace_bytes", ctypes.c_longlong),
        ("q_stride_b", ctypes.c_longlong), ("q_stride_h", ctypes.c_longlong), ("q_stride_s", ctypes.c_longlong),
        ("k_stride_b", ctypes.c_longlong), ("k_stride_h", ctypes.c_longlong), ("k_stride_s", ctypes.c_longlong),
        ("v_stride_b", ctypes.c_longlong), ("v_stride_h", ctypes.c_longlong), ("v_stride_s", ctypes.c_longlong),
        ("o_stride_b", ctypes.c_longlong), ("o_stride_h", ctypes.c_longlong), ("o_stride_s", ctypes.c_longlong),
        ("b", ctypes.c_int),
        ("h", ctypes.c_int),
        ("h_kv", ctypes.c_int),
        ("s_q", ctypes.c_int),
        ("s_kv", ctypes.c_int),
        ("d", ctypes.c_int),
        ("num_splits", ctypes.c_int),
        ("causal_offset", ctypes.c_int),
        ("scale", ctypes.c_float),
        ("scale_log2", ctypes.c_float),
        ("layout", ctypes.c_int),
        ("abi_version", ctypes.c_int),
        ("_pad", ctypes.c_ubyte * 48),
    ]


assert ctypes.sizeof(AttnParams) == 768, "struct fatune_attn_params_v2 is 768 bytes on LP64"
assert AttnParams.workspace_bytes.offset == 568 and AttnParams.b.offset == 672 \
    and AttnParams.abi_version.offset == 716, "fatune_attn_params_v2 field offsets"

LAYOUT_BHSD, LAYOUT_BSHD = 0, 1


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

    def launch(self, fn, grid, threads, smem, params, pdl=False):
        """pdl: programmatic dependent launch (cuLaunchKernelEx with programmatic stream
        serialization, sm_90+), as fatune's worker launches a combine kernel whose
        space's launch.combine_pdl is non-zero."""
        stream = torch.cuda.current_stream().cuda_stream
        args = (ctypes.c_void_p * 1)(ctypes.addressof(params))
        if not pdl:
            _check(_lib.cuLaunchKernel(fn, int(grid[0]), int(grid[1]), int(grid[2]),
                                       int(threads), 1, 1, int(smem), ctypes.c_void_p(stream),
                                       args, None), "cuLaunchKernel")
            return
        cfg, _attr = lc.pdl_config(grid, threads, smem, stream)
        _check(_lib.cuLaunchKernelEx(ctypes.byref(cfg), fn, args, None), "cuLaunchKernelEx")


def launches_combine(geometry):
    """Whether a call launches the combine kernel: split, and combine_threads > 0
    (0: the main kernel merges the splits itself, fatune's rule)."""
    return geometry["num_splits"] > 1 and geometry.get("combine_threads", 1) > 0


def workspace_for(geometry, device):
    """The kernel's workspace, geometry["workspace"] bytes (0 or absent: None), zeroed
    once here: the spaces that use one (workspace.init zero_once, e.g. the in-kernel
    combine's counters) leave it zero after every call, so no call clears it."""
    n = int(geometry.get("workspace", 0) or 0)
    return torch.zeros(n, dtype=torch.uint8, device=device) if n > 0 else None


class Attention:
    """One configured call: module + launch geometry + buffers for a shape.

    geometry: dict with threads, grid (3), smem, num_splits, combine_threads,
    combine_grid (3) and optionally workspace (bytes) and pdl (1: the combine launched
    with programmatic dependent launch). Shape: b, h (query heads),
    s (queries), d, h_kv (KV heads, divides h), s_kv (keys). Partial buffers and
    the workspace are allocated here, once, so the call itself allocates nothing
    and can be graph-captured.
    """

    def __init__(self, module, geometry, b, h, s, d, h_kv=None, s_kv=None, device="cuda"):
        self.m = module
        self.g = geometry
        self.h_kv = h if h_kv is None else h_kv
        self.s_kv = s if s_kv is None else s_kv
        self.shape = (b, h, s, d)
        n = geometry["num_splits"]
        self.o_partial = self.lse_partial = None
        if n > 1:
            self.o_partial = torch.empty((n, b, h, s, d), dtype=torch.float32, device=device)
            self.lse_partial = torch.empty((n, b, h, s), dtype=torch.float32, device=device)
        self.workspace = workspace_for(geometry, device)
        module.set_smem(geometry["smem"])
        self._params = None

    def poison_partials(self):
        if self.o_partial is not None:
            self.o_partial.fill_(float("nan"))
            self.lse_partial.fill_(float("nan"))

    def params(self, q, k, v, o):
        """The v2 parameter block for logical [B, H, S, D] views q, o and
        [B, H_kv, S_kv, D] views k, v (any strides with D contiguous, e.g. a
        transpose(1, 2) of a [B, S, H, D] tensor)."""
        b, h, s, d = self.shape
        for t, shape in ((q, self.shape), (o, self.shape), (k, (b, self.h_kv, self.s_kv, d)),
                         (v, (b, self.h_kv, self.s_kv, d))):
            assert t.is_cuda and tuple(t.shape) == shape and t.stride(3) == 1, (tuple(t.shape), shape)
            assert all(x % 8 == 0 for x in t.stride()[:3]), "strides must be multiples of 8 elements"
        scale = 1.0 / math.sqrt(d)
        layout = LAYOUT_BSHD if q.stride(2) > q.stride(1) else LAYOUT_BHSD
        p = AttnParams()
        p.q, p.k, p.v, p.o = q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr()
        if self.o_partial is not None:
            p.o_partial, p.lse_partial = self.o_partial.data_ptr(), self.lse_partial.data_ptr()
        if self.workspace is not None:
            p.workspace, p.workspace_bytes = self.workspace.data_ptr(), self.workspace.numel()
        for name, t in (("q", q), ("k", k), ("v", v), ("o", o)):
            sb, sh, ss, _ = t.stride()
            setattr(p, name + "_stride_b", sb)
            setattr(p, name + "_stride_h", sh)
            setattr(p, name + "_stride_s", ss)
        p.b, p.h, p.h_kv, p.s_q, p.s_kv, p.d = b, h, self.h_kv, s, self.s_kv, d
        p.num_splits = self.g["num_splits"]
        p.causal_offset = self.s_kv - s
        p.scale, p.scale_log2 = scale, scale * math.log2(math.e)
        p.layout, p.abi_version = layout, 2
        return p

    def __call__(self, q, k, v, o):
        # the block is built once per set of tensors: graph capture keeps it
        key = (q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr())
        if self._params is None or self._params[0] != key:
            self._params = (key, self.params(q, k, v, o))
        p = self._params[1]
        self.m.launch(self.m.fwd, self.g["grid"], self.g["threads"], self.g["smem"], p)
        if launches_combine(self.g):
            self.m.launch(self.m.combine, self.g["combine_grid"], self.g["combine_threads"], 0, p,
                          pdl=self.g.get("pdl", 0))


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


def time_graph(fn, calls, samples, warmup=3, warmup_ms=20.0, heat_ms=0.0):
    """fatune's timing method (docs/timing.md): median (and min, p90) microseconds
    per call over `samples` replays of one CUDA graph holding `calls`
    back-to-back calls of fn, after at least `warmup` replays and warmup_ms of
    GPU time (an idle GPU needs a few ms of load to reach its boost clock), or
    heat_ms when longer (a heavy kernel then is timed at the clock the GPU's
    power cap leaves, as the race's heated final ranks it)."""
    warmup_ms = max(warmup_ms, heat_ms)
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
    """fp64 attention of logical [B, H, S_q, D] q over [B, H_kv, S_kv, D] k, v
    (query head h reads KV head h / (H / H_kv)), causal masks aligned
    bottom-right (query i sees keys 0 .. i + S_kv - S_q; a row that sees no key
    is 0), computed a few (batch, head) pairs at a time so that at most
    max_scores fp64 scores (1 GiB) exist at once."""
    b, h, s, d = q.shape
    h_kv, s_kv = k.shape[1], k.shape[2]
    g = h // h_kv
    out = torch.empty((b, h, s, d), dtype=torch.float64, device=q.device)
    scale = 1.0 / math.sqrt(d)
    mask = None
    if causal:
        i = torch.arange(s, device=q.device).view(s, 1)
        j = torch.arange(s_kv, device=q.device).view(1, s_kv)
        mask = j <= i + (s_kv - s)
    step = max(1, max_scores // max(1, s * s_kv))
    for bi in range(b):
        for h0 in range(0, h, step):
            h1 = min(h, h0 + step)
            qf = q[bi, h0:h1].double()
            kf = k[bi, [hh // g for hh in range(h0, h1)]].double()
            vf = v[bi, [hh // g for hh in range(h0, h1)]].double()
            sc = torch.matmul(qf, kf.transpose(-1, -2)) * scale
            if mask is not None:
                sc = sc.masked_fill(~mask, float("-inf"))
            p = torch.softmax(sc, dim=-1)
            p = torch.nan_to_num(p, nan=0.0)  # rows with every key masked
            out[bi, h0:h1] = torch.matmul(p, vf)
    return out


# ---- ABI v2 ------------------------------------------------------------------

# ABI v2 is the one parameter block (AttnParams above); the old name stays for the harnesses
AttnParamsV2 = AttnParams


# offsetof() of every field as gcc computes it for fatune_abi.h on LP64
_V2_OFFSETS = dict(tma_q=0, tma_k=128, tma_v=256, tma_o=384, q=512, k=520, v=528, o=536, o_partial=544,
                   lse_partial=552, workspace=560, workspace_bytes=568, q_stride_b=576, k_stride_b=600,
                   v_stride_b=624, o_stride_b=648, o_stride_s=664, b=672, h=676, h_kv=680, s_q=684,
                   s_kv=688, d=692, num_splits=696, causal_offset=700, scale=704, scale_log2=708,
                   layout=712, abi_version=716)
assert ctypes.sizeof(AttnParamsV2) == 768, "struct fatune_attn_params_v2 is 768 bytes"
for _f, _o in _V2_OFFSETS.items():
    assert getattr(AttnParamsV2, _f).offset == _o, f"AttnParamsV2.{_f} at {getattr(AttnParamsV2, _f).offset}, C has {_o}"

CU_TENSOR_MAP_DATA_TYPE_FLOAT16 = 6
CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 = 9
CU_TENSOR_MAP_INTERLEAVE_NONE = 0
CU_TENSOR_MAP_SWIZZLE_128B = 3
CU_TENSOR_MAP_L2_PROMOTION_L2_128B = 2
CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE = 0


def encode_tma(t, box_rows, box_d=64, swizzle=CU_TENSOR_MAP_SWIZZLE_128B):
    """A TmaDesc over a [B, H, S, D] view (any strides, D contiguous) as fatune's
    worker encodes it for ABI v2: rank 4, dims (D, S, H, B) innermost first, byte
    strides (row, head, batch), box (box_d, box_rows, 1, 1), element strides 1,
    interleave none, the given swizzle (128B), L2 promotion 128B, OOB fill none
    (out-of-bound elements read as zeros)."""
    import torch as _t
    lib = _cuda()
    b, h, s, d = t.shape
    assert t.stride(3) == 1, "D must be contiguous"
    dt = {_t.float16: CU_TENSOR_MAP_DATA_TYPE_FLOAT16, _t.bfloat16: CU_TENSOR_MAP_DATA_TYPE_BFLOAT16}[t.dtype]
    es = t.element_size()
    desc = TmaDesc()
    dims = (ctypes.c_uint64 * 4)(d, s, h, b)
    strides = (ctypes.c_uint64 * 3)(t.stride(2) * es, t.stride(1) * es, t.stride(0) * es)
    box = (ctypes.c_uint32 * 4)(box_d, box_rows, 1, 1)
    estr = (ctypes.c_uint32 * 4)(1, 1, 1, 1)
    lib.cuTensorMapEncodeTiled.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32, ctypes.c_void_p,
                                           ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                                           ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int]
    _check(lib.cuTensorMapEncodeTiled(ctypes.byref(desc), dt, 4, ctypes.c_void_p(t.data_ptr()), dims, strides,
                                      box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                                      CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
           f"cuTensorMapEncodeTiled(dims={tuple(dims)}, strides={tuple(strides)}, box={tuple(box)})")
    return desc


class AttentionV2:
    """One configured ABI v2 call over [B, H, S_q, D] q/o and [B, H_kv, S_kv, D] k/v
    views (any strides with D contiguous, e.g. bshd tensors transposed).

    geometry: threads, grid (3), smem, num_splits, combine_threads, combine_grid (3);
    box: {"q": rows, "k": rows, "v": rows} for the TMA descriptors (the family's
    rule). Descriptors embed the tensors' addresses: they are encoded per call
    set (`bind`), once, so that a bound call allocates nothing and can be
    graph-captured."""

    def __init__(self, module, geometry, box, q, k, v, o, layout=0):
        import torch as _t
        self.m, self.g = module, geometry
        b, h, sq, d = q.shape
        hkv, skv = k.shape[1], k.shape[2]
        n = geometry["num_splits"]
        self.o_partial = self.lse_partial = None
        if n > 1:
            self.o_partial = _t.empty((n, b, h, sq, d), dtype=_t.float32, device=q.device)
            self.lse_partial = _t.empty((n, b, h, sq), dtype=_t.float32, device=q.device)
        module.set_smem(geometry["smem"])
        p = AttnParamsV2()
        p.tma_q = encode_tma(q, box["q"])
        p.tma_k = encode_tma(k, box["k"])
        p.tma_v = encode_tma(v, box["v"])
        if box.get("o"):
            p.tma_o = encode_tma(o, box["o"])
        p.q, p.k, p.v, p.o = q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr()
        p.o_partial = self.o_partial.data_ptr() if n > 1 else None
        p.lse_partial = self.lse_partial.data_ptr() if n > 1 else None
        self.workspace = workspace_for(geometry, q.device)
        p.workspace, p.workspace_bytes = ((self.workspace.data_ptr(), self.workspace.numel())
                                          if self.workspace is not None else (None, 0))
        for name, t in (("q", q), ("k", k), ("v", v), ("o", o)):
            setattr(p, f"{name}_stride_b", t.stride(0))
            setattr(p, f"{name}_stride_h", t.stride(1))
            setattr(p, f"{name}_stride_s", t.stride(2))
        p.b, p.h, p.h_kv, p.s_q, p.s_kv, p.d = b, h, hkv, sq, skv, d
        p.num_splits = n
        p.causal_offset = skv - sq
        p.scale = 1.0 / math.sqrt(d)
        p.scale_log2 = p.scale * math.log2(math.e)
        p.layout, p.abi_version = layout, 2
        self.p = p

    def poison_partials(self):
        if self.o_partial is not None:
            self.o_partial.fill_(float("nan"))
            self.lse_partial.fill_(float("nan"))

    def __call__(self):
        self.m.launch(self.m.fwd, self.g["grid"], self.g["threads"], self.g["smem"], self.p)
        if launches_combine(self.g):
            self.m.launch(self.m.combine, self.g["combine_grid"], self.g["combine_threads"], 0, self.p,
                          pdl=self.g.get("pdl", 0))


def reference_v2(q, k, v, causal, max_scores=1 << 26):
    """fp64 attention over [B, H, S_q, D] q and [B, H_kv, S_kv, D] k/v (GQA: query
    head h reads KV head h // (H // H_kv)), causal mask bottom-right aligned
    (query i sees keys <= i + S_kv - S_q); a row that sees no key is 0. Computed a
    few heads at a time (at most max_scores fp64 scores at once)."""
    import torch as _t
    b, h, sq, d = q.shape
    hkv, skv = k.shape[1], k.shape[2]
    grp = h // hkv
    out = _t.empty((b, h, sq, d), dtype=_t.float64, device=q.device)
    scale = 1.0 / math.sqrt(d)
    mask = None
    if causal:
        i = _t.arange(sq, device=q.device).view(sq, 1)
        j = _t.arange(skv, device=q.device).view(1, skv)
        mask = j > i + (skv - sq)
    step = max(1, max_scores // max(1, sq * skv))
    for bi in range(b):
        for h0 in range(0, h, step):
            h1 = min(h, h0 + step)
            heads = _t.arange(h0, h1, device=q.device)
            qf = q[bi, h0:h1].double()
            kf = k[bi, heads // grp].double()
            vf = v[bi, heads // grp].double()
            sc = _t.matmul(qf, kf.transpose(-1, -2)) * scale
            if mask is not None:
                sc.masked_fill_(mask, float("-inf"))
            pr = _t.softmax(sc, dim=-1)
            pr = _t.nan_to_num(pr, nan=0.0)
            out[bi, h0:h1] = _t.matmul(pr, vf)
    return out
