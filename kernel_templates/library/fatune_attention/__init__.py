"""fatune_attention - attention forward kernels tuned by fatune (a library `fatune export --library` wrote).

ctypes over the C API of fatune_attention.h, built into fatune_attention/_lib by `pip install DIR`:

    import torch, fatune_attention
    o = fatune_attention.attention(q, k, v, causal=True)   # q [B,H,S_q,D], k/v [B,H_kv,S_kv,D], CUDA fp16/bf16

Inputs that the library cannot run raise ValueError with the library's own message (wrong dtype, device,
rank or head dim, a shape no tuned config is valid for, or an untuned one with strict=True).
"""
import ctypes
import glob
import os

__all__ = ["attention", "plan", "record_untuned", "FatuneError"]


class FatuneError(ValueError):
    """A call the library refused or that failed; .status is the fatune_status code."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


def _load():
    here = os.path.dirname(os.path.abspath(__file__))
    found = sorted(glob.glob(os.path.join(here, "_lib*.so")))
    if not found:
        raise ImportError(f"fatune_attention: no _lib*.so in {here}: install the package with 'pip install DIR'")
    return ctypes.CDLL(found[0])


_lib = _load()


class _Args(ctypes.Structure):
    _fields_ = [
        ("q", ctypes.c_void_p), ("k", ctypes.c_void_p), ("v", ctypes.c_void_p), ("o", ctypes.c_void_p),
        ("q_stride", ctypes.c_longlong * 3), ("k_stride", ctypes.c_longlong * 3),
        ("v_stride", ctypes.c_longlong * 3), ("o_stride", ctypes.c_longlong * 3),
        ("b", ctypes.c_int), ("h", ctypes.c_int), ("h_kv", ctypes.c_int), ("s_q", ctypes.c_int),
        ("s_kv", ctypes.c_int), ("d", ctypes.c_int), ("dtype", ctypes.c_int), ("causal", ctypes.c_int),
        ("flags", ctypes.c_uint), ("workspace", ctypes.c_void_p), ("workspace_bytes", ctypes.c_size_t),
        ("cc", ctypes.c_int),
    ]


class _Plan(ctypes.Structure):
    _fields_ = [
        ("entry", ctypes.c_int), ("tuned", ctypes.c_int), ("num_splits", ctypes.c_int),
        ("threads", ctypes.c_uint), ("grid", ctypes.c_uint * 3), ("smem_bytes", ctypes.c_uint),
        ("combine_threads", ctypes.c_uint), ("combine_grid", ctypes.c_uint * 3),
        ("workspace_bytes", ctypes.c_size_t), ("config", ctypes.c_char * 256),
        ("part", ctypes.c_int), ("cc", ctypes.c_int), ("arch", ctypes.c_char * 16), ("space", ctypes.c_char * 64),
    ]


_lib.fatune_attention_forward.argtypes = [ctypes.POINTER(_Args), ctypes.c_void_p]
_lib.fatune_attention_workspace_size.argtypes = [ctypes.POINTER(_Args), ctypes.POINTER(ctypes.c_size_t)]
_lib.fatune_attention_plan.argtypes = [ctypes.POINTER(_Args), ctypes.POINTER(_Plan)]
_lib.fatune_attention_record_untuned.argtypes = [ctypes.c_char_p]
_lib.fatune_strerror.restype = ctypes.c_char_p
_lib.fatune_strerror.argtypes = [ctypes.c_int]
STRICT = 1
KEPT = 2  # FATUNE_WORKSPACE_KEPT


def _check(status, what):
    if status:
        raise FatuneError(status, f"fatune_attention: {what}: {_lib.fatune_strerror(status).decode()}")


def _args(q, k, v, o, causal, strict, layout):
    import torch

    for name, t in (("q", q), ("k", k), ("v", v)):
        if not isinstance(t, torch.Tensor):
            raise FatuneError(1, f"fatune_attention: {name} is a {type(t).__name__}, not a torch.Tensor")
        if t.dim() != 4:
            raise FatuneError(1, f"fatune_attention: {name} has {t.dim()} dimensions: want 4 ([B,H,S,D] or, with layout='bshd', [B,S,H,D])")
        if not t.is_cuda:
            raise FatuneError(1, f"fatune_attention: {name} is on {t.device}: the kernels run on CUDA tensors")
        if t.dtype not in (torch.float16, torch.bfloat16) or t.dtype != q.dtype:
            raise FatuneError(2, f"fatune_attention: {name} is {t.dtype}: q, k and v must all be float16 or all bfloat16")
        if t.stride(-1) != 1 or not t.is_contiguous():
            raise FatuneError(4, f"fatune_attention: {name} is not contiguous: call .contiguous() first")
    if layout not in ("bhsd", "bshd"):
        raise FatuneError(4, f"fatune_attention: layout '{layout}': use 'bhsd' ([B,H,S,D]) or 'bshd' ([B,S,H,D])")
    hdim, sdim = (1, 2) if layout == "bhsd" else (2, 1)
    a = _Args()
    a.q, a.k, a.v, a.o = q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr() if o is not None else 0
    for field, t in (("q_stride", q), ("k_stride", k), ("v_stride", v), ("o_stride", q)):
        getattr(a, field)[:] = [t.stride(0), t.stride(hdim), t.stride(sdim)]
    a.b, a.h, a.s_q, a.d = q.shape[0], q.shape[hdim], q.shape[sdim], q.shape[3]
    a.h_kv, a.s_kv = k.shape[hdim], k.shape[sdim]
    if k.shape != v.shape or k.shape[0] != a.b or k.shape[3] != a.d:
        raise FatuneError(1, f"fatune_attention: k {tuple(k.shape)} and v {tuple(v.shape)} do not fit q {tuple(q.shape)}")
    a.dtype = 1 if q.dtype == torch.bfloat16 else 0
    a.causal = 1 if causal else 0
    a.flags = STRICT if strict else 0
    return a


def plan(q, k, v, causal=False, strict=False, layout="bhsd", cc=0):
    """The config and launch a call would use: a dict (part, arch, space, entry, tuned, config, grid, ...).
    cc=89 (a compute capability) plans for that GPU instead of the current device's."""
    import torch

    a = _args(q, k, v, None, causal, strict, layout)
    a.cc = cc
    p = _Plan()
    with torch.cuda.device(q.device):  # the library chooses for the current context's device
        _check(_lib.fatune_attention_plan(ctypes.byref(a), ctypes.byref(p)), "plan")
    return {"entry": p.entry, "tuned": bool(p.tuned), "config": p.config.decode(), "num_splits": p.num_splits,
            "threads": p.threads, "grid": tuple(p.grid), "smem_bytes": p.smem_bytes,
            "combine_threads": p.combine_threads, "combine_grid": tuple(p.combine_grid),
            "workspace_bytes": p.workspace_bytes, "part": p.part, "cc": p.cc, "arch": p.arch.decode(),
            "space": p.space.decode()}


# The workspace of each (device, stream): allocated when a call needs more than it holds, never per call.
# A workspace is handed to the library with FATUNE_WORKSPACE_KEPT only when the previous call on it (on the
# same stream, so in order) had the same shape and entry: that call left its zero_once scratch zero, so the
# library skips the memset, as fatune's worker zeroes it once before the first timed call. A new workspace,
# or one another shape wrote last (its split-KV partials may lie where this shape's scratch is), is zeroed
# by the library first. _workspaces[(device, stream)] = [tensor, key of the last call on it]
_workspaces = {}
_stats = {"allocations": 0}  # workspace tensors allocated (tests read it)


def _workspace(device, stream, need):
    """The cached workspace slot of (device, stream), grown to `need` bytes when smaller."""
    import torch

    slot = _workspaces.get((device, stream))
    if slot is None or slot[0].numel() < need:
        slot = [torch.empty(max(need, 1), dtype=torch.uint8, device=device), None]
        _workspaces[(device, stream)] = slot
        _stats["allocations"] += 1
    return slot


def attention(q, k, v, causal=False, strict=False, layout="bhsd"):
    """softmax(q k^T / sqrt(D)) v on the current CUDA stream; causal masks are bottom-right aligned.
    strict=True refuses shapes that were not tuned instead of running the nearest valid config."""
    import torch

    o = torch.empty_like(q)
    a = _args(q, k, v, o, causal, strict, layout)
    p = _Plan()
    with torch.cuda.device(q.device):  # the library chooses for the current context's device
        _check(_lib.fatune_attention_plan(ctypes.byref(a), ctypes.byref(p)), "plan")
        stream = torch.cuda.current_stream(q.device).cuda_stream
        slot = None
        if p.workspace_bytes:
            slot = _workspace(q.device, stream, p.workspace_bytes)
            key = (p.part, p.entry, a.b, a.h, a.h_kv, a.s_q, a.s_kv, a.d, a.dtype, a.causal, layout)
            a.workspace, a.workspace_bytes = slot[0].data_ptr(), slot[0].numel()
            a.flags |= KEPT if slot[1] == key else 0
            slot[1] = None  # until the call is issued: a failed one may have left anything there
        _check(_lib.fatune_attention_forward(ctypes.byref(a), ctypes.c_void_p(stream)), "forward")
        if slot is not None:
            slot[1] = key
    return o


def record_untuned(path):
    """Write every shape called without a tuned entry to path, a campaign file for fatune search."""
    _check(_lib.fatune_attention_record_untuned(path.encode() if path else None), "record_untuned")
