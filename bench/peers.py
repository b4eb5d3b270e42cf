#!/usr/bin/env python3
"""peers.py - the peers fatune's attention kernels are measured against.

Given q [B, H, S_q, D] and k, v [B, H_kv, S_kv, D] (torch CUDA tensors, fp16 or
bf16, any strides with D contiguous: [B, S, H, D] storage permuted to
[B, H, S, D] works), this runs, checks and times, in one process on the same
inputs and with fatune's timing method (docs/timing.md: median over R samples,
each one CUDA-graph replay of K back-to-back calls, divided by K; the code is
bench/ftkernel.py's):

  sdpa-flash      torch SDPA, FLASH_ATTENTION backend
  sdpa-cudnn      torch SDPA, CUDNN_ATTENTION backend
  sdpa-efficient  torch SDPA, EFFICIENT_ATTENTION backend
  triton-fa       a FlashAttention-style forward kernel in Triton, written for
                  this benchmark, autotuned per shape over FA_CONFIGS (72)
  triton-decode   a split-KV decode kernel in Triton (S_q <= 16), written for
                  this benchmark: the G = H/H_kv query heads of one KV head are
                  one tile, the KV length is split over blocks, and a second
                  kernel merges the splits by log-sum-exp; configs and the
                  number of splits tuned per shape

Causal masks are bottom-right aligned (fatune_abi.h v2): query i sees keys
0 .. i + S_kv - S_q. SDPA's is_causal is top-left, so for S_q != S_kv the SDPA
peers use torch.nn.attention.bias.causal_lower_right (flash), the op it
dispatches to (efficient), or its materialized mask (cuDNN), and say so in
`note`. A backend that refuses a case is reported `unsupported`, not an error.
GQA goes to SDPA as enable_gqa=True.

Every peer's output is compared with an fp64 reference (relative L2); a peer
with a non-finite output or an error over the tolerance (fp16 2e-3, bf16 1e-2,
as fatune verifies) is `wrong` and not timed. Tuning is never timed.

API (see each docstring):
  make_inputs(b, h, s_q, d, h_kv=, s_kv=, dtype=, layout=) -> (q, k, v)
  reference(q, k, v, causal) -> fp64 [B, H, S_q, D]
  run_peers(q, k, v, causal, peers=None, ...) -> [result dict per peer]
  best_of_peers(results) -> the fastest correct result dict, or None
  vs_peers(fatune_us, results) -> "fatune X us / best of peers (name) Y us = R x"
  copy_ceiling(nbytes) -> device-to-device copy bandwidth, same method
  triton_attention(q, k, v, causal, config) / triton_decode(q, k, v, causal, ...)

CLI:
  python3 bench/peers.py run --shape 1x32x1x128 --h-kv 8 --s-kv 8192 --causal
  python3 bench/peers.py ceiling
  python3 bench/peers.py selftest --json out.json        (needs a GPU)
  TRITON_INTERPRET=1 python3 bench/peers.py cpucheck     (no GPU: the Triton
                                                          kernels' numerics)
"""

import argparse
import itertools
import json
import math
import os
import statistics
import sys
import time
import traceback
import warnings

import torch

try:
    import triton
    import triton.language as tl
except ImportError:  # the SDPA peers still work
    triton = None

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ftkernel as fk  # noqa: E402  (timing method shared with fatune's bench scripts)

LOG2E = 1.4426950408889634
DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16}
DTYPE_NAMES = {v: k for k, v in DTYPES.items()}
# relative L2 error vs fp64 that a correct kernel stays under: fatune's bounds
TOLERANCE = {torch.float16: 2e-3, torch.bfloat16: 1e-2}
SDPA_PEERS = ("sdpa-flash", "sdpa-cudnn", "sdpa-efficient")
ALL_PEERS = SDPA_PEERS + ("triton-fa", "triton-decode")
DECODE_MAX_SQ = 16


class Unsupported(Exception):
    """The peer cannot run this case (a backend refused it, or it is out of the peer's scope)."""


# ---------------------------------------------------------------------------------------------
# inputs and the fp64 reference
# ---------------------------------------------------------------------------------------------

def make_inputs(b, h, s_q, d, h_kv=None, s_kv=None, dtype=torch.float16, layout="bhsd",
                device="cuda", seed=None):
    """Fresh random q [B,H,S_q,D], k, v [B,H_kv,S_kv,D] (standard normal, no zeros).
    layout 'bshd' allocates [B,S,H,D] storage and returns the permuted [B,H,S,D] views."""
    h_kv = h_kv or h
    s_kv = s_kv or s_q
    if h % h_kv:
        raise ValueError(f"H={h} is not a multiple of H_kv={h_kv}")
    if layout not in ("bhsd", "bshd"):
        raise ValueError(f"layout '{layout}' is not bhsd or bshd")
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int.from_bytes(os.urandom(7), "little"))

    def one(heads, s):
        shape = (b, heads, s, d) if layout == "bhsd" else (b, s, heads, d)
        x = torch.randn(shape, generator=gen, device=device, dtype=torch.float32).to(dtype)
        x = torch.where(x == 0, torch.ones_like(x), x)  # never an exact zero
        return x if layout == "bhsd" else x.permute(0, 2, 1, 3)
    return one(h, s_q), one(h_kv, s_kv), one(h_kv, s_kv)


def _check_inputs(q, k, v):
    if q.dim() != 4 or k.dim() != 4 or v.dim() != 4:
        raise ValueError("q, k, v must be 4-d [B, H, S, D]")
    b, h, s_q, d = q.shape
    bk, h_kv, s_kv, dk = k.shape
    if bk != b or dk != d or tuple(v.shape) != tuple(k.shape):
        raise ValueError(f"shapes q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)} do not match")
    if h % h_kv:
        raise ValueError(f"H={h} is not a multiple of H_kv={h_kv}")
    if not (q.dtype == k.dtype == v.dtype) or q.dtype not in TOLERANCE:
        raise ValueError(f"dtype must be fp16 or bf16 for all of q, k, v (got {q.dtype}, {k.dtype}, {v.dtype})")
    for t in (q, k, v):
        if t.stride(-1) != 1:
            raise ValueError("the last dimension (D) must be contiguous")
    return b, h, h_kv, s_q, s_kv, d


def causal_mask(s_q, s_kv, device):
    """Bottom-right aligned: query i sees key j iff j <= i + s_kv - s_q."""
    i = torch.arange(s_q, device=device)[:, None]
    j = torch.arange(s_kv, device=device)[None, :]
    return j <= i + (s_kv - s_q)


def reference(q, k, v, causal, scale=None, max_scores=1 << 26):
    """fp64 attention, bottom-right causal, GQA; one (batch, KV head) at a time and at most
    max_scores scores at once. A query row that sees no key comes out 0."""
    b, h, h_kv, s_q, s_kv, d = _check_inputs(q, k, v)
    g = h // h_kv
    scale = scale if scale is not None else 1.0 / math.sqrt(d)
    out = torch.empty((b, h, s_q, d), dtype=torch.float64, device=q.device)
    mask = causal_mask(s_q, s_kv, q.device) if causal else None
    rows = max(1, max_scores // max(1, g * s_kv))
    for bi in range(b):
        for hk in range(h_kv):
            kh = k[bi, hk].double()
            vh = v[bi, hk].double()
            for r0 in range(0, s_q, rows):
                r1 = min(s_q, r0 + rows)
                qh = q[bi, hk * g:(hk + 1) * g, r0:r1].double()       # [G, r, D]
                s = torch.matmul(qh, kh.t()) * scale                  # [G, r, S_kv]
                if mask is not None:
                    s.masked_fill_(~mask[r0:r1], float("-inf"))
                m = s.amax(-1, keepdim=True)
                m = torch.where(torch.isinf(m), torch.zeros_like(m), m)
                p = torch.exp(s - m)
                den = p.sum(-1, keepdim=True)
                out[bi, hk * g:(hk + 1) * g, r0:r1] = torch.matmul(p, vh) / torch.where(
                    den == 0, torch.ones_like(den), den)
    return out


def rel_l2(out, ref):
    """||out - ref|| / ||ref|| in fp64 over the finite outputs, and the count of non-finite ones."""
    o = out.double()
    finite = torch.isfinite(o)
    nonfinite = int((~finite).sum().item())
    diff = torch.where(finite, o - ref, torch.zeros_like(ref))
    den = float(torch.linalg.vector_norm(ref))
    err = float(torch.linalg.vector_norm(diff)) / (den if den > 0 else 1.0)
    return err, nonfinite


# ---------------------------------------------------------------------------------------------
# Triton: FlashAttention-style forward (written for this benchmark)
# ---------------------------------------------------------------------------------------------

if triton is not None:

    @triton.jit(do_not_specialize=["H", "G", "S_q", "S_kv", "OFFSET"])
    def _fa_fwd_kernel(Q, K, V, O,
                       sqb, sqh, sqs, skb, skh, sks, svb, svh, svs, sob, soh, sos,
                       H, G, S_q, S_kv, OFFSET, qk_scale,
                       HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                       CAUSAL: tl.constexpr):
        # one program: BLOCK_M query rows of one (batch, head); the longest causal rows go first
        pid_m = tl.num_programs(0) - 1 - tl.program_id(0)
        pid_bh = tl.program_id(1)
        b = (pid_bh // H).to(tl.int64)
        h = pid_bh % H
        hk = (h // G).to(tl.int64)
        h = h.to(tl.int64)
        start_m = pid_m * BLOCK_M
        offs_m = start_m + tl.arange(0, BLOCK_M)
        offs_n = tl.arange(0, BLOCK_N)
        offs_d = tl.arange(0, HEAD_DIM)
        row_ok = offs_m < S_q

        q = tl.load(Q + b * sqb + h * sqh + offs_m[:, None] * sqs + offs_d[None, :],
                    mask=row_ok[:, None], other=0.0)
        k_base = K + b * skb + hk * skh
        v_base = V + b * svb + hk * svh

        m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)  # running max, log2 units
        l_i = tl.zeros([BLOCK_M], tl.float32)                 # running sum
        acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)

        # (scalar bounds by if, not tl.minimum: the interpreter keeps those scalars)
        hi = S_kv
        full = S_kv
        if CAUSAL:
            # row r sees keys < r + OFFSET + 1; every row of the block sees keys < start_m + OFFSET + 1
            hi = start_m + BLOCK_M + OFFSET
            if hi > S_kv:
                hi = S_kv
            if hi < 0:
                hi = 0
            full = start_m + OFFSET + 1
            if full > S_kv:
                full = S_kv
            if full < 0:
                full = 0
        full = full // BLOCK_N * BLOCK_N

        # key blocks every row sees in full: no mask
        for start_n in range(0, full, BLOCK_N):
            cols = start_n + offs_n
            k = tl.load(k_base + cols[:, None] * sks + offs_d[None, :])
            qk = tl.dot(q, tl.trans(k))
            m_new = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
            p = tl.math.exp2(qk * qk_scale - m_new[:, None])
            alpha = tl.math.exp2(m_i - m_new)
            l_i = l_i * alpha + tl.sum(p, 1)
            v = tl.load(v_base + cols[:, None] * svs + offs_d[None, :])
            acc = acc * alpha[:, None]
            acc = tl.dot(p.to(v.dtype), v, acc)
            m_i = m_new

        # the diagonal and the ragged end: masked
        for start_n in range(full, hi, BLOCK_N):
            cols = start_n + offs_n
            col_ok = cols < S_kv
            k = tl.load(k_base + cols[:, None] * sks + offs_d[None, :], mask=col_ok[:, None], other=0.0)
            qk = tl.dot(q, tl.trans(k)) * qk_scale
            ok = col_ok[None, :]
            if CAUSAL:
                ok = ok & (cols[None, :] <= offs_m[:, None] + OFFSET)
            qk = tl.where(ok, qk, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(qk, 1))
            m_use = tl.where(m_new == float("-inf"), 0.0, m_new)  # a row with no key yet: no NaN
            p = tl.math.exp2(qk - m_use[:, None])
            alpha = tl.math.exp2(m_i - m_use)
            l_i = l_i * alpha + tl.sum(p, 1)
            v = tl.load(v_base + cols[:, None] * svs + offs_d[None, :], mask=col_ok[:, None], other=0.0)
            acc = acc * alpha[:, None]
            acc = tl.dot(p.to(v.dtype), v, acc)
            m_i = m_new

        out = acc / tl.where(l_i == 0.0, 1.0, l_i)[:, None]  # a row that saw no key: 0
        tl.store(O + b * sob + h * soh + offs_m[:, None] * sos + offs_d[None, :],
                 out.to(O.dtype.element_ty), mask=row_ok[:, None])

    @triton.jit(do_not_specialize=["B", "H_kv", "G", "S_q", "S_kv", "OFFSET", "BLOCKS_PER_SPLIT"])
    def _decode_split_kernel(Q, K, V, O, OP, LSE,
                             sqb, sqh, sqs, skb, skh, sks, svb, svh, svs, sob, soh, sos,
                             B, H, H_kv, G, S_q, S_kv, OFFSET, BLOCKS_PER_SPLIT, qk_scale,
                             HEAD_DIM: tl.constexpr, BLOCK_R: tl.constexpr, BLOCK_N: tl.constexpr,
                             CAUSAL: tl.constexpr, DIRECT: tl.constexpr):
        # one program: one KV split of one (batch, KV head), all G*S_q query rows that read it
        split = tl.program_id(0)
        pid = tl.program_id(1)
        b = (pid // H_kv).to(tl.int64)
        hk = pid % H_kv
        r = tl.arange(0, BLOCK_R)
        g = r // S_q
        i = r % S_q
        row_ok = r < G * S_q
        h = hk * G + g
        offs_n = tl.arange(0, BLOCK_N)
        offs_d = tl.arange(0, HEAD_DIM)

        q = tl.load(Q + b * sqb + h[:, None].to(tl.int64) * sqh + i[:, None] * sqs + offs_d[None, :],
                    mask=row_ok[:, None], other=0.0)
        k_base = K + b * skb + hk.to(tl.int64) * skh
        v_base = V + b * svb + hk.to(tl.int64) * svh

        start = split * BLOCKS_PER_SPLIT * BLOCK_N
        end = start + BLOCKS_PER_SPLIT * BLOCK_N
        if end > S_kv:
            end = S_kv
        lim = end
        if CAUSAL:
            if lim > OFFSET + 1:  # row i = 0 sees keys < OFFSET + 1
                lim = OFFSET + 1
        n_full = lim - start
        if n_full < 0:
            n_full = 0
        full = start + n_full // BLOCK_N * BLOCK_N

        m_i = tl.full([BLOCK_R], float("-inf"), tl.float32)
        l_i = tl.zeros([BLOCK_R], tl.float32)
        acc = tl.zeros([BLOCK_R, HEAD_DIM], tl.float32)
        for start_n in range(start, full, BLOCK_N):
            cols = start_n + offs_n
            k = tl.load(k_base + cols[:, None] * sks + offs_d[None, :])
            qk = tl.dot(q, tl.trans(k))
            m_new = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
            p = tl.math.exp2(qk * qk_scale - m_new[:, None])
            alpha = tl.math.exp2(m_i - m_new)
            l_i = l_i * alpha + tl.sum(p, 1)
            v = tl.load(v_base + cols[:, None] * svs + offs_d[None, :])
            acc = acc * alpha[:, None]
            acc = tl.dot(p.to(v.dtype), v, acc)
            m_i = m_new
        for start_n in range(full, end, BLOCK_N):
            cols = start_n + offs_n
            col_ok = cols < end
            k = tl.load(k_base + cols[:, None] * sks + offs_d[None, :], mask=col_ok[:, None], other=0.0)
            qk = tl.dot(q, tl.trans(k)) * qk_scale
            ok = col_ok[None, :]
            if CAUSAL:
                ok = ok & (cols[None, :] <= i[:, None] + OFFSET)
            qk = tl.where(ok, qk, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(qk, 1))
            m_use = tl.where(m_new == float("-inf"), 0.0, m_new)
            p = tl.math.exp2(qk - m_use[:, None])
            alpha = tl.math.exp2(m_i - m_use)
            l_i = l_i * alpha + tl.sum(p, 1)
            v = tl.load(v_base + cols[:, None] * svs + offs_d[None, :], mask=col_ok[:, None], other=0.0)
            acc = acc * alpha[:, None]
            acc = tl.dot(p.to(v.dtype), v, acc)
            m_i = m_new

        out = acc / tl.where(l_i == 0.0, 1.0, l_i)[:, None]
        if DIRECT:
            tl.store(O + b * sob + h[:, None].to(tl.int64) * soh + i[:, None] * sos + offs_d[None, :],
                     out.to(O.dtype.element_ty), mask=row_ok[:, None])
        else:
            # partial output (already divided by its own sum) and the natural-log LSE of the split
            rows = B * H * S_q
            row = (b * H + h) * S_q + i
            lse = tl.where(l_i > 0.0, (m_i + tl.math.log2(tl.where(l_i > 0.0, l_i, 1.0))) * 0.6931471805599453,
                           float("-inf"))
            base = split.to(tl.int64) * rows + row
            tl.store(OP + base[:, None] * HEAD_DIM + offs_d[None, :], out, mask=row_ok[:, None])
            tl.store(LSE + base, lse, mask=row_ok)

    @triton.jit(do_not_specialize=["H", "S_q", "ROWS", "NUM_SPLITS"])
    def _decode_combine_kernel(OP, LSE, O, sob, soh, sos, H, S_q, ROWS, NUM_SPLITS,
                               HEAD_DIM: tl.constexpr, SPLITS_P2: tl.constexpr):
        # one program: one query row (b, h, i); merges its NUM_SPLITS partials by log-sum-exp
        row = tl.program_id(0)
        i = row % S_q
        bh = row // S_q
        h = (bh % H).to(tl.int64)
        b = (bh // H).to(tl.int64)
        s = tl.arange(0, SPLITS_P2)
        s_ok = s < NUM_SPLITS
        lse = tl.load(LSE + s.to(tl.int64) * ROWS + row, mask=s_ok, other=float("-inf"))
        m = tl.max(lse, 0)
        m = tl.where(m == float("-inf"), 0.0, m)
        w = tl.exp(lse - m)
        den = tl.sum(w, 0)
        offs_d = tl.arange(0, HEAD_DIM)
        part = tl.load(OP + (s.to(tl.int64) * ROWS + row)[:, None] * HEAD_DIM + offs_d[None, :],
                       mask=s_ok[:, None], other=0.0)
        out = tl.sum(part * w[:, None], 0) / tl.where(den == 0.0, 1.0, den)
        tl.store(O + b * sob + h * soh + i * sos + offs_d, out.to(O.dtype.element_ty))


# (BLOCK_M, BLOCK_N, num_warps, num_stages): 3 x 3 x 2 x 4 = 72
FA_CONFIGS = [dict(block_m=m, block_n=n, num_warps=w, num_stages=s)
              for m in (32, 64, 128) for n in (32, 64, 128) for w in (4, 8) for s in (1, 2, 3, 4)]
FA_DEFAULT = dict(block_m=64, block_n=64, num_warps=4, num_stages=2)
# (BLOCK_N, num_warps, num_stages): 2 x 2 x 3 = 12; the split count is tuned at run time
DECODE_CONFIGS = [dict(block_n=n, num_warps=w, num_stages=s)
                  for n in (64, 128) for w in (4, 8) for s in (2, 3, 4)]
DECODE_DEFAULT = dict(block_n=64, num_warps=4, num_stages=3)
DECODE_MAX_SPLITS = 128


def _cfg_str(cfg):
    return ",".join(f"{k.upper()}={v}" for k, v in cfg.items())


def _fa_launch_args(q, k, v, o, causal, cfg):
    """(grid, positional args, keyword args) of one forward launch; q, k, v, o may be tensors
    or, for a compile-only warm-up, their torch dtypes with shape/stride given separately."""
    (b, h, s_q, d), (h_kv, s_kv), strides = q["shape"], q["kv"], q["strides"]
    grid = (triton.cdiv(s_q, cfg["block_m"]), b * h)
    args = [q["t"], k, v, o, *strides, h, h // h_kv, s_q, s_kv, s_kv - s_q, LOG2E / math.sqrt(d)]
    kw = dict(HEAD_DIM=d, BLOCK_M=cfg["block_m"], BLOCK_N=cfg["block_n"], CAUSAL=bool(causal),
              num_warps=cfg["num_warps"], num_stages=cfg["num_stages"])
    return grid, args, kw


def _desc(q, k, v, o):
    """What a launch needs of the tensors: shapes and strides (elements)."""
    return dict(t=q, shape=tuple(q.shape), kv=(k.shape[1], k.shape[2]),
                strides=[*q.stride()[:3], *k.stride()[:3], *v.stride()[:3], *o.stride()[:3]])


def triton_attention(q, k, v, causal, config=None, out=None):
    """The Triton forward kernel with one config (FA_DEFAULT when None); returns O like q."""
    if triton is None:
        raise Unsupported("triton is not installed")
    b, h, h_kv, s_q, s_kv, d = _check_inputs(q, k, v)
    if d not in (16, 32, 64, 128, 256):
        raise Unsupported(f"triton-fa: D={d} is not a power of two in 16..256")
    o = out if out is not None else torch.empty_like(q)
    grid, args, kw = _fa_launch_args(_desc(q, k, v, o), k, v, o, causal, config or FA_DEFAULT)
    _fa_fwd_kernel[grid](*args, **kw)
    return o


def _pow2(n):
    return 1 << max(0, (int(n) - 1).bit_length())


class DecodePlan:
    """One configured split-KV decode call with its partial buffers (allocated once, so that
    the call allocates nothing and can be graph-captured)."""

    def __init__(self, q, k, v, causal, config=None, num_splits=None, out=None):
        if triton is None:
            raise Unsupported("triton is not installed")
        b, h, h_kv, s_q, s_kv, d = _check_inputs(q, k, v)
        g = h // h_kv
        if s_q > DECODE_MAX_SQ:
            raise Unsupported(f"triton-decode: S_q={s_q} > {DECODE_MAX_SQ} (a decode kernel)")
        if d not in (16, 32, 64, 128, 256):
            raise Unsupported(f"triton-decode: D={d} is not a power of two in 16..256")
        if g * s_q > 128:
            raise Unsupported(f"triton-decode: G*S_q = {g * s_q} rows > 128 per tile")
        self.cfg = dict(config or DECODE_DEFAULT)
        self.q, self.k, self.v, self.causal = q, k, v, bool(causal)
        self.o = out if out is not None else torch.empty_like(q)
        self.dims = (b, h, h_kv, s_q, s_kv, d)
        n_blocks = triton.cdiv(s_kv, self.cfg["block_n"])
        want = num_splits if num_splits else decode_splits_heuristic(b, h_kv, s_kv, self.cfg["block_n"])
        want = max(1, min(int(want), n_blocks, DECODE_MAX_SPLITS))
        self.bps = triton.cdiv(n_blocks, want)
        self.splits = triton.cdiv(n_blocks, self.bps)  # no empty split
        self.cfg["splits"] = self.splits
        self.block_r = max(16, _pow2(g * s_q))
        rows = b * h * s_q
        if self.splits > 1:
            self.op = torch.empty((self.splits * rows, d), dtype=torch.float32, device=q.device)
            self.lse = torch.empty((self.splits * rows,), dtype=torch.float32, device=q.device)
        else:  # unused (DIRECT), fp32 so that the kernel's signature is the same
            self.op = self.lse = torch.empty((1,), dtype=torch.float32, device=q.device)

    def poison(self):
        self.o.fill_(float("nan"))
        if self.splits > 1:
            self.op.fill_(float("nan"))
            self.lse.fill_(float("nan"))

    def launch_args(self, dtype_only=False):
        """[(kernel, grid, args, kw)] for the call; with dtype_only, tensors become dtypes
        (for JITFunction.warmup: a compile with the same specialization, no launch)."""
        b, h, h_kv, s_q, s_kv, d = self.dims
        T = (lambda t: t.dtype) if dtype_only else (lambda t: t)
        q, k, v, o = self.q, self.k, self.v, self.o
        strides = [*q.stride()[:3], *k.stride()[:3], *v.stride()[:3], *o.stride()[:3]]
        direct = self.splits == 1
        main = (_decode_split_kernel, (self.splits, b * h_kv),
                [T(q), T(k), T(v), T(o), T(self.op), T(self.lse), *strides,
                 b, h, h_kv, h // h_kv, s_q, s_kv, s_kv - s_q, self.bps, LOG2E / math.sqrt(d)],
                dict(HEAD_DIM=d, BLOCK_R=self.block_r, BLOCK_N=self.cfg["block_n"], CAUSAL=self.causal,
                     DIRECT=direct, num_warps=self.cfg["num_warps"], num_stages=self.cfg["num_stages"]))
        out = [main]
        if not direct:
            rows = b * h * s_q
            out.append((_decode_combine_kernel, (rows,),
                        [T(self.op), T(self.lse), T(o), *o.stride()[:3], h, s_q, rows, self.splits],
                        dict(HEAD_DIM=d, SPLITS_P2=_pow2(self.splits), num_warps=4 if d >= 128 else 2,
                             num_stages=1)))
        return out

    def __call__(self):
        for kern, grid, args, kw in self.launch_args():
            kern[grid](*args, **kw)
        return self.o


def decode_splits_heuristic(b, h_kv, s_kv, block_n, sms=None):
    """Enough (batch, KV head, split) programs for about two waves, each split >= 2 key blocks."""
    if sms is None:
        sms = torch.cuda.get_device_properties(0).multi_processor_count if torch.cuda.is_available() else 132
    n_blocks = -(-s_kv // block_n)
    want = -(-2 * sms // max(1, b * h_kv))
    return max(1, min(want, n_blocks // 2 if n_blocks >= 2 else 1, DECODE_MAX_SPLITS))


def triton_decode(q, k, v, causal, config=None, num_splits=None, out=None):
    """The Triton split-KV decode kernels with one config and split count; returns O like q."""
    return DecodePlan(q, k, v, causal, config, num_splits, out)()


def decode_split_candidates(b, h_kv, s_kv, block_n):
    n_blocks = -(-s_kv // block_n)
    c = {1, decode_splits_heuristic(b, h_kv, s_kv, block_n)}
    p = 2
    while p <= min(n_blocks, DECODE_MAX_SPLITS):
        c.add(p)
        p *= 2
    return sorted(c)


# ---------------------------------------------------------------------------------------------
# timing (fatune's method, bench/ftkernel.py) and tuning
# ---------------------------------------------------------------------------------------------

def measure(fn, samples=30, heat_ms=0.0):
    """fatune's method: K calls per CUDA graph (a sample ~1 ms), median/min/p90 of R samples;
    heat_ms: fk.time_graph's (the warm-up at least that long)."""
    kk, rr = fk.plan_timing(fk.quick_time(fn), samples=samples)
    t = fk.time_graph(fn, kk, rr, heat_ms=heat_ms)
    t.update(calls=kk, samples=rr)
    return t


def quick_graph_time(fn, target_us=300.0, reps=5):
    """A cheaper time for tuning only: median of `reps` replays of a graph of K calls."""
    est = fk.quick_time(fn, n=2)
    kk = max(1, min(100, int(round(target_us / max(est, 1.0)))))
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        fn()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(kk):
            fn()
    a, z = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    graph.replay()
    ts = []
    for _ in range(reps):
        a.record()
        graph.replay()
        z.record()
        z.synchronize()
        ts.append(a.elapsed_time(z) * 1000.0 / kk)
    del graph
    return statistics.median(ts)


_TUNED = {}  # (kind, shape key) -> (best config, tuning table)


def _shape_key(q, k, causal):
    return (tuple(q.shape), tuple(q.stride()), tuple(k.shape), tuple(k.stride()), q.dtype, bool(causal))


def _fail_text(e):
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0][:160] if text else ''}"


_TRACED = set()


def _config_failed(e):
    """A tuned config's failure as a table status; the first failure of each exception type
    in this process also prints its traceback to stderr, so an environment's fault (the
    "source code string cannot contain null bytes" of some machines) shows where it is raised."""
    if type(e) not in _TRACED:
        _TRACED.add(type(e))
        traceback.print_exception(e, file=sys.stderr)
    return _fail_text(e)


def tune_fa(q, k, v, causal, ref=None, configs=None, deadline=None, log=None):
    """Times every config of FA_CONFIGS (or `configs`) on these inputs, checking each one's
    output against ref (fp64) first; returns (best config, table). Cached per shape."""
    key = ("fa", _shape_key(q, k, causal))
    if key in _TUNED:
        return _TUNED[key]
    tol = TOLERANCE[q.dtype]
    o = torch.empty_like(q)
    table = []
    for cfg in configs or FA_CONFIGS:
        row = dict(cfg)
        if deadline and time.time() > deadline:
            row["status"] = "skipped (time budget)"
            table.append(row)
            continue
        try:
            t0 = time.time()
            o.fill_(float("nan"))
            triton_attention(q, k, v, causal, cfg, out=o)
            torch.cuda.synchronize()
            row["first_call_s"] = round(time.time() - t0, 3)
            if ref is not None:
                err, bad = rel_l2(o, ref)
                row["rel_l2"] = err
                if bad or not err <= tol:
                    row["status"] = f"wrong (rel_l2 {err:.2e}, {bad} non-finite)"
                    table.append(row)
                    continue
            row["us"] = quick_graph_time(lambda: triton_attention(q, k, v, causal, cfg, out=o))
            row["status"] = "ok"
        except Exception as e:  # out of resources, compile failure: this config is out
            row["status"] = _config_failed(e)
            _sync_or_raise()
        table.append(row)
    ok = [r for r in table if r.get("status") == "ok"]
    if not ok:
        raise RuntimeError("triton-fa: no config ran correctly: " +
                           "; ".join(sorted({r['status'] for r in table}))[:300])
    best = min(ok, key=lambda r: r["us"])
    cfg = {n: best[n] for n in ("block_m", "block_n", "num_warps", "num_stages")}
    if log:
        top = sorted(ok, key=lambda r: r["us"])[:4]
        fails = {}
        for r in table:
            if r.get("status") != "ok":
                fails[r["status"][:60]] = fails.get(r["status"][:60], 0) + 1
        log(f"  tune triton-fa: {len(ok)}/{len(table)} configs ok; fastest: " +
            ", ".join(f"{r['block_m']}x{r['block_n']} w{r['num_warps']} s{r['num_stages']} {r['us']:.2f}" for r in top) +
            (" | not ok: " + "; ".join(f"{n} x {k}" for k, n in fails.items()) if fails else ""))
    _TUNED[key] = (cfg, table)
    return _TUNED[key]


def tune_decode(q, k, v, causal, ref=None, configs=None, deadline=None, log=None):
    """Times every DECODE_CONFIGS config with every candidate split count; returns
    (best config incl. 'splits', table). Cached per shape."""
    key = ("decode", _shape_key(q, k, causal))
    if key in _TUNED:
        return _TUNED[key]
    tol = TOLERANCE[q.dtype]
    b, h, h_kv, s_q, s_kv, d = _check_inputs(q, k, v)
    table = []
    for cfg in configs or DECODE_CONFIGS:
        for n in decode_split_candidates(b, h_kv, s_kv, cfg["block_n"]):
            row = dict(cfg, splits=n)
            if deadline and time.time() > deadline:
                row["status"] = "skipped (time budget)"
                table.append(row)
                continue
            try:
                plan = DecodePlan(q, k, v, causal, cfg, n)
                if plan.splits != n:
                    continue  # the same as another split count after rounding
                plan.poison()
                plan()
                torch.cuda.synchronize()
                if ref is not None:
                    err, bad = rel_l2(plan.o, ref)
                    row["rel_l2"] = err
                    if bad or not err <= tol:
                        row["status"] = f"wrong (rel_l2 {err:.2e}, {bad} non-finite)"
                        table.append(row)
                        continue
                row["us"] = quick_graph_time(plan)
                row["status"] = "ok"
            except Exception as e:
                row["status"] = _config_failed(e)
                _sync_or_raise()
            table.append(row)
    ok = [r for r in table if r.get("status") == "ok"]
    if not ok:
        raise RuntimeError("triton-decode: no config ran correctly: " +
                           "; ".join(sorted({r['status'] for r in table}))[:300])
    best = min(ok, key=lambda r: r["us"])
    cfg = {n: best[n] for n in ("block_n", "num_warps", "num_stages", "splits")}
    if log:
        top = sorted(ok, key=lambda r: r["us"])[:4]
        fails = {}
        for r in table:
            if r.get("status") != "ok":
                fails[r["status"][:60]] = fails.get(r["status"][:60], 0) + 1
        log(f"  tune triton-decode: {len(ok)}/{len(table)} points ok; fastest: " +
            ", ".join(f"n{r['block_n']} w{r['num_warps']} s{r['num_stages']} x{r['splits']} {r['us']:.2f}"
                      for r in top) +
            (" | not ok: " + "; ".join(f"{n} x {k}" for k, n in fails.items()) if fails else ""))
    _TUNED[key] = (cfg, table)
    return _TUNED[key]


def _sync_or_raise():
    """After a failed call: a sticky CUDA error (illegal address, ...) ends the run here."""
    try:
        torch.cuda.synchronize()
    except RuntimeError as e:
        raise RuntimeError(f"the CUDA context is broken after a failed call: {e}") from e


# ---------------------------------------------------------------------------------------------
# the peers
# ---------------------------------------------------------------------------------------------

def _sdpa_prepare(name, q, k, v, causal):
    """(fn, note) for an SDPA backend: fn() returns O. Raises Unsupported when the backend
    cannot run the case."""
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.nn.attention.bias import CausalVariant, causal_lower_right

    b, h, h_kv, s_q, s_kv, d = _check_inputs(q, k, v)
    gqa = h != h_kv
    backend = {"sdpa-flash": SDPBackend.FLASH_ATTENTION, "sdpa-cudnn": SDPBackend.CUDNN_ATTENTION,
               "sdpa-efficient": SDPBackend.EFFICIENT_ATTENTION}[name]
    kw = dict(enable_gqa=True) if gqa else {}
    notes = ["enable_gqa=True"] if gqa else []

    if not causal or s_q == s_kv or s_q == 1:
        # S_q == S_kv: top-left = bottom-right; S_q == 1: bottom-right masks nothing
        is_causal = bool(causal) and s_q == s_kv
        if causal and s_q == 1 and s_kv > 1:
            notes.append("S_q=1: bottom-right causal masks nothing, is_causal=False")

        def fn():
            with sdpa_kernel([backend]):
                return F.scaled_dot_product_attention(q, k, v, is_causal=is_causal, **kw)
        return fn, "; ".join(notes)

    # causal with S_q != S_kv: bottom-right
    if name == "sdpa-flash":
        from torch.backends.cuda import SDPAParams, can_use_flash_attention
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            okay = can_use_flash_attention(SDPAParams(q, k, v, None, 0.0, False, gqa), True)
        if not okay:
            why = "; ".join(str(x.message).strip().splitlines()[0] for x in w if str(x.message).strip())
            raise Unsupported("flash refuses (can_use_flash_attention is False)" + (": " + why[:300] if why else ""))
        bias = causal_lower_right(s_q, s_kv)

        def fn():
            with sdpa_kernel([backend]):
                return F.scaled_dot_product_attention(q, k, v, attn_mask=bias, **kw)
        notes.append("attn_mask=causal_lower_right (dispatches to aten._scaled_dot_product_flash_attention)")
        return fn, "; ".join(notes)
    if name == "sdpa-efficient":
        if gqa:
            raise Unsupported("efficient: no bottom-right causal with GQA (CausalBias calls "
                              "_efficient_attention_forward, which has no enable_gqa)")
        scale = 1.0 / math.sqrt(d)
        mask_type = int(CausalVariant.LOWER_RIGHT.value)

        def fn():
            return torch.ops.aten._efficient_attention_forward(
                q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), None, None, None, None, None,
                0.0, mask_type, False, scale=scale)[0].transpose(1, 2)
        notes.append("aten._efficient_attention_forward custom_mask_type=LOWER_RIGHT "
                     "(what causal_lower_right dispatches to when flash cannot)")
        return fn, "; ".join(notes)
    # cuDNN: SDPA never routes causal_lower_right to cuDNN; the materialized mask is what torch offers
    mask = causal_mask(s_q, s_kv, q.device)

    def fn():
        with sdpa_kernel([backend]):
            return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, **kw)
    notes.append("bottom-right causal as a materialized bool mask (torch has no lower-right cuDNN path)")
    return fn, "; ".join(notes)


def default_peers(s_q):
    """The peers that apply to a shape: SDPA's three backends, plus triton-decode for
    S_q <= 16 or triton-fa otherwise."""
    return SDPA_PEERS + (("triton-decode",) if s_q <= DECODE_MAX_SQ else ("triton-fa",))


def parse_peers(text, s_q=None):
    """'all' (the defaults for the shape), or a comma list of ALL_PEERS names (also
    flash, cudnn, efficient, triton, decode)."""
    if text in (None, "", "all"):
        return None
    alias = {"flash": "sdpa-flash", "cudnn": "sdpa-cudnn", "efficient": "sdpa-efficient",
             "triton": "triton-fa", "decode": "triton-decode", "sdpa": SDPA_PEERS}
    out = []
    for part in text.split(","):
        part = part.strip()
        names = alias.get(part, part)
        for n in (names if isinstance(names, tuple) else (names,)):
            if n not in ALL_PEERS:
                raise ValueError(f"unknown peer '{part}': one of {', '.join(ALL_PEERS)}, or all")
            if n not in out:
                out.append(n)
    return tuple(out)


def run_peers(q, k, v, causal, peers=None, *, ref=None, timed=True, tune=True, samples=30,
              configs=None, deadline=None, tune_budget=None, log=None, heat_ms=0.0):
    """Runs each peer on (q, k, v, causal): checks it against the fp64 reference (ref, computed
    when None) and times it with fatune's method. Returns one dict per peer:
      name, status ('ok' | 'wrong' | 'unsupported' | 'error'), rel_l2, nonfinite,
      median_us, min_us, p90_us, calls (K), samples (R)   (when timed and ok),
      config (triton peers: the tuned or given config), note, error (reason when not ok).
    peers: names from ALL_PEERS (default: default_peers(S_q)); tune: autotune the Triton
    peers (excluded from timing) or use their defaults; configs: {'triton-fa': cfg,
    'triton-decode': cfg} to force one; deadline (time.time()) / tune_budget (s): configs
    not tried by then are skipped (and listed in the tuning table); heat_ms: measure()'s."""
    b, h, h_kv, s_q, s_kv, d = _check_inputs(q, k, v)
    names = peers or default_peers(s_q)
    if ref is None:
        ref = reference(q, k, v, causal)
    tol = TOLERANCE[q.dtype]
    configs = configs or {}
    results = []
    for name in names:
        r = dict(name=name)
        tdl = deadline
        if tune_budget:
            tdl = min(deadline or float("inf"), time.time() + tune_budget)
        try:
            if name in SDPA_PEERS:
                fn, r["note"] = _sdpa_prepare(name, q, k, v, causal)
                try:
                    with warnings.catch_warnings(record=True) as w:
                        warnings.simplefilter("always")
                        out = fn()
                        torch.cuda.synchronize()
                except RuntimeError as e:
                    _sync_or_raise()
                    why = "; ".join(dict.fromkeys(str(x.message).strip().splitlines()[0] for x in w
                                                  if str(x.message).strip()))
                    raise Unsupported(("refused: " + why[:400] + " | " if why else "") + _fail_text(e)[:120])
                poison = None
            elif name == "triton-fa":
                if triton is None:
                    raise Unsupported("triton is not installed")
                if name in configs:
                    cfg = configs[name]
                elif tune:
                    cfg, table = tune_fa(q, k, v, causal, ref=ref, deadline=tdl, log=log)
                    r["tuned"] = f"{sum(1 for t in table if t.get('status') == 'ok')}/{len(table)} ok"
                    r["tuning"] = table
                else:
                    cfg = FA_DEFAULT
                r["config"] = _cfg_str(cfg)
                o = torch.empty_like(q)

                def fn(cfg=cfg, o=o):
                    return triton_attention(q, k, v, causal, cfg, out=o)

                def poison(o=o):
                    o.fill_(float("nan"))
                poison()
                out = fn()
                torch.cuda.synchronize()
            elif name == "triton-decode":
                if triton is None:
                    raise Unsupported("triton is not installed")
                DecodePlan(q, k, v, causal)  # raises Unsupported out of scope
                if name in configs:
                    cfg = configs[name]
                elif tune:
                    cfg, table = tune_decode(q, k, v, causal, ref=ref, deadline=tdl, log=log)
                    r["tuned"] = f"{sum(1 for t in table if t.get('status') == 'ok')}/{len(table)} ok"
                    r["tuning"] = table
                else:
                    cfg = dict(DECODE_DEFAULT)
                plan = DecodePlan(q, k, v, causal, {n: cfg[n] for n in DECODE_DEFAULT}, cfg.get("splits"))
                r["config"] = _cfg_str(plan.cfg)
                fn, poison = plan, plan.poison
                poison()
                out = fn()
                torch.cuda.synchronize()
            else:
                raise ValueError(f"unknown peer '{name}'")

            r["rel_l2"], r["nonfinite"] = rel_l2(out, ref)
            if r["nonfinite"] or not r["rel_l2"] <= tol:
                r["status"] = "wrong"
                r["error"] = f"rel_l2 {r['rel_l2']:.2e} (tolerance {tol:g}), {r['nonfinite']} non-finite"
            else:
                r["status"] = "ok"
                if timed:
                    r.update((kk + "_us" if kk in ("median", "min", "p90") else kk, vv)
                             for kk, vv in measure(fn, samples, heat_ms).items())
                    # verified once more after timing (a kernel right only on its first call fails)
                    if poison:
                        poison()
                    again, bad = rel_l2(fn(), ref)
                    torch.cuda.synchronize()
                    if bad or not again <= tol:
                        r["status"] = "wrong"
                        r["error"] = f"after timing: rel_l2 {again:.2e}, {bad} non-finite"
        except Unsupported as e:
            r["status"] = "unsupported"
            r["error"] = str(e)
        except Exception as e:  # a failure of this peer, reported; a broken context is re-raised
            _sync_or_raise()
            r["status"] = "error"
            r["error"] = _fail_text(e)
        results.append(r)
    return results


def best_of_peers(results):
    """The fastest peer that ran correctly and was timed, or None."""
    ok = [r for r in results if r.get("status") == "ok" and "median_us" in r]
    return min(ok, key=lambda r: r["median_us"]) if ok else None


def vs_peers(fatune_us, results):
    """'fatune X us / best of peers (NAME) Y us = R x' (R < 1: fatune is faster)."""
    best = best_of_peers(results)
    if best is None or not fatune_us:
        return "fatune / best of peers: n/a (no correct, timed peer)"
    return (f"fatune {fatune_us:.2f} us / best of peers ({best['name']}) {best['median_us']:.2f} us"
            f" = {fatune_us / best['median_us']:.2f}x")


def copy_ceiling(nbytes=1 << 30, samples=30):
    """Device-to-device copy of nbytes (random fp16), timed like the peers; bandwidth counts
    bytes read plus bytes written: the bandwidth target for memory-bound (decode) kernels (not a
    strict bound: reads alone can run faster than a copy's reads plus writes)."""
    n = nbytes // 2
    src = torch.randn(n, device="cuda", dtype=torch.float16)
    dst = torch.empty_like(src)

    def fn():
        dst.copy_(src)
    t = measure(fn, samples)
    ok = bool(torch.equal(dst, src))
    return dict(bytes=2 * n, median_us=t["median"], min_us=t["min"], p90_us=t["p90"],
                tb_per_s=2 * 2 * n / (t["median"] * 1e-6) / 1e12, calls=t["calls"], copy_ok=ok)


def min_bytes(q, k, v):
    """Bytes an attention call must move at least: q, k, v read once, o written once."""
    return (2 * q.numel() + k.numel() + v.numel()) * q.element_size()


def flops(b, h, s_q, s_kv, d, causal):
    """4*B*H*S_q*S_kv*D, counting only the unmasked (bottom-right causal) scores."""
    if not causal:
        seen = s_q * s_kv
    else:
        off = s_kv - s_q
        seen = sum(max(0, min(s_kv, i + off + 1)) for i in range(s_q))
    return 4.0 * b * h * seen * d


# ---------------------------------------------------------------------------------------------
# compiling ahead, on several processes (Triton compiles one kernel at a time per process)
# ---------------------------------------------------------------------------------------------

def _compile_job(job):
    """In a worker process: JITFunction.warmup with the launch's exact specialization, so that
    the compiled kernel lands in Triton's on-disk cache for the main process."""
    kname, grid, args, kw = job
    t0 = time.time()
    try:
        kern = {"fa": _fa_fwd_kernel, "split": _decode_split_kernel, "combine": _decode_combine_kernel}[kname]
        kern.warmup(*args, grid=grid, **kw)
        return None, time.time() - t0
    except Exception as e:
        return _fail_text(e), time.time() - t0


_KERNELS = {}


def _job_key(job):
    """What decides a compiled kernel: the constexprs and options, and per argument its type
    and Triton's specialization (== 1, divisible by 16) unless do_not_specialize."""
    kname, grid, args, kw = job
    if not _KERNELS:
        _KERNELS.update(fa=_fa_fwd_kernel, split=_decode_split_kernel, combine=_decode_combine_kernel)
    params = _KERNELS[kname].params
    kinds = []
    for p, a in zip(params, args):
        if isinstance(a, bool) or not isinstance(a, int):
            kinds.append(repr(a) if not isinstance(a, float) else "f")
        elif p.do_not_specialize:
            kinds.append("i")
        else:
            kinds.append(("one" if a == 1 else "d16" if a % 16 == 0 else "i", a >= 2**31))
    return (kname, tuple(kinds), tuple(sorted(kw.items())))


def _worker_init():
    torch.cuda.init()


def precompile(jobs, workers=None, deadline=None, log=print, initializer=_worker_init):
    """Compiles the given (kernel name, grid, args with dtypes for tensors, kwargs) jobs on a
    process pool. Returns (done, failed, skipped, wall s). Only a cache warmer: whatever is
    not compiled here is compiled on first use."""
    import concurrent.futures as cf
    import multiprocessing as mp
    seen, uniq = set(), []
    for j in jobs:
        key = _job_key(j)
        if key not in seen:
            seen.add(key)
            uniq.append(j)
    if not uniq:
        return 0, 0, 0, 0.0
    workers = workers or max(1, min(len(uniq), (os.cpu_count() or 2) - 1))
    t0 = time.time()
    done = failed = 0
    fails = {}
    ex = cf.ProcessPoolExecutor(max_workers=workers, mp_context=mp.get_context("spawn"),
                                initializer=initializer)
    futs = [ex.submit(_compile_job, j) for j in uniq]
    try:
        for f in cf.as_completed(futs, timeout=(deadline - time.time()) if deadline else None):
            err, _ = f.result()
            if err:
                failed += 1
                fails[err[:120]] = fails.get(err[:120], 0) + 1
            else:
                done += 1
    except cf.TimeoutError:
        pass
    except Exception as e:  # a broken pool: what is missing compiles on first use
        log(f"precompile: the pool failed: {_fail_text(e)}")
    skipped = len(uniq) - done - failed
    ex.shutdown(wait=False, cancel_futures=True)
    wall = time.time() - t0
    log(f"precompile: {len(uniq)} kernels on {workers} processes: {done} compiled, {failed} failed, "
        f"{skipped} not reached, {wall:.1f} s")
    for e, n in fails.items():
        log(f"  {n} x {e}")
    return done, failed, skipped, wall


def compile_jobs(q, k, v, causal, peers, tune):
    """The Triton kernels run_peers will need for this case: [(kernel name, grid, args, kw)]."""
    jobs = []
    b, h, h_kv, s_q, s_kv, d = _check_inputs(q, k, v)
    if "triton-fa" in peers:
        strides = [*q.stride()[:3], *k.stride()[:3], *v.stride()[:3], *q.stride()[:3]]
        desc = dict(t=q.dtype, shape=tuple(q.shape), kv=(h_kv, s_kv), strides=strides)
        for cfg in (FA_CONFIGS if tune else [FA_DEFAULT]):
            grid, args, kw = _fa_launch_args(desc, k.dtype, v.dtype, q.dtype, causal, cfg)
            jobs.append(("fa", grid, args, kw))
    if "triton-decode" in peers and s_q <= DECODE_MAX_SQ and (h // h_kv) * s_q <= 128:
        pts = ([(c, n) for c in DECODE_CONFIGS for n in decode_split_candidates(b, h_kv, s_kv, c["block_n"])]
               if tune else [(DECODE_DEFAULT, None)])
        for cfg, n in pts:
            plan = _PlanSpec(q, k, v, causal, cfg, n)
            for kern, grid, args, kw in plan.launch_args(dtype_only=True):
                kname = "split" if kern is _decode_split_kernel else "combine"
                jobs.append((kname, grid, args, kw))
    return jobs


class _PlanSpec(DecodePlan):
    """A DecodePlan that allocates nothing (for listing compile jobs)."""

    def __init__(self, q, k, v, causal, config, num_splits):
        b, h, h_kv, s_q, s_kv, d = _check_inputs(q, k, v)
        self.cfg = dict(config)
        self.q, self.k, self.v, self.o, self.causal = q, k, v, q, bool(causal)
        self.dims = (b, h, h_kv, s_q, s_kv, d)
        n_blocks = -(-s_kv // self.cfg["block_n"])
        want = num_splits if num_splits else decode_splits_heuristic(b, h_kv, s_kv, self.cfg["block_n"])
        want = max(1, min(int(want), n_blocks, DECODE_MAX_SPLITS))
        self.bps = -(-n_blocks // want)
        self.splits = -(-n_blocks // self.bps)
        self.block_r = max(16, _pow2((h // h_kv) * s_q))
        self.op = self.lse = _Dtype(torch.float32)


class _Dtype:
    def __init__(self, dtype):
        self.dtype = dtype


# ---------------------------------------------------------------------------------------------
# CLI
# ---------------------------------------------------------------------------------------------

def parse_shape(text):
    try:
        b, h, s, d = (int(x) for x in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"shape '{text}' is not BxHxSxD (e.g. 1x8x512x64)")
    if min(b, h, s, d) < 1:
        raise argparse.ArgumentTypeError(f"shape '{text}': every dimension must be >= 1")
    return b, h, s, d


def case_name(c):
    b, h, s, d = c["shape"]
    t = f"{b}x{h}x{s}x{d}"
    if c.get("h_kv") and c["h_kv"] != h:
        t += f"/kv{c['h_kv']}"
    if c.get("s_kv") and c["s_kv"] != s:
        t += f" S_kv={c['s_kv']}"
    t += f" c{int(bool(c.get('causal')))} {c.get('dtype', 'fp16')}"
    if c.get("layout", "bhsd") != "bhsd":
        t += " " + c["layout"]
    return t


def _fmt_row(case, r):
    t = f"{r['median_us']:10.2f}" if "median_us" in r else f"{'-':>10s}"
    e = f"{r['rel_l2']:.1e}" if "rel_l2" in r else "-"
    extra = (r.get("config") or "") + (f" (tuned: {r['tuned']})" if r.get("tuned") else "")
    if r["status"] != "ok":
        extra = (r.get("error") or "")[:150]
    return f"{case:44s} {r['name']:15s} {r['status']:11s} {t} {e:>8s}  {extra}"


def run_case(c, timed=True, tune=True, log=print, deadline=None, ceiling=None, tune_budget=None):
    b, h, s, d = c["shape"]
    dt = DTYPES[c.get("dtype", "fp16")]
    q, k, v = make_inputs(b, h, s, d, h_kv=c.get("h_kv"), s_kv=c.get("s_kv"), dtype=dt,
                          layout=c.get("layout", "bhsd"))
    t0 = time.time()
    ref = reference(q, k, v, c.get("causal", False))
    t_ref = time.time() - t0
    peers = c.get("peers") or default_peers(s)
    res = run_peers(q, k, v, c.get("causal", False), peers, ref=ref, timed=timed, tune=tune,
                    configs=c.get("configs"), deadline=deadline, tune_budget=tune_budget, log=log)
    name = case_name(c)
    out = dict(case=name, shape=list(c["shape"]), h_kv=c.get("h_kv") or h, s_kv=c.get("s_kv") or s,
               causal=int(bool(c.get("causal"))), dtype=c.get("dtype", "fp16"),
               layout=c.get("layout", "bhsd"), ref_s=round(t_ref, 2), peers=res,
               min_bytes=min_bytes(q, k, v),
               gflop=flops(b, h, s, c.get("s_kv") or s, d, c.get("causal")) / 1e9)
    best = best_of_peers(res)
    out["best"] = best["name"] if best else None
    if ceiling and best:
        # min_bytes moved at the copy bandwidth: a target, not a bound (a kernel that mostly reads
        # can beat a copy, and K/V that fit in L2 are served from it between back-to-back calls)
        out["copy_bw_us"] = out["min_bytes"] / (ceiling["tb_per_s"] * 1e12) * 1e6
    for r in res:
        log(_fmt_row(name, r))
    if best:
        line = f"{name:44s} best of peers: {best['name']} {best['median_us']:.2f} us"
        if s > DECODE_MAX_SQ:
            line += f", {out['gflop'] * 1e3 / best['median_us']:.0f} TFLOP/s"
        if "copy_bw_us" in out:
            line += (f"; {out['min_bytes'] / 1e6:.1f} MB at copy bandwidth: {out['copy_bw_us']:.2f} us"
                     f" ({out['min_bytes'] / best['median_us'] / 1e6:.2f} TB/s achieved)")
        log(line)
    del q, k, v, ref
    return out


TIMED_CASES = [
    dict(shape=(1, 8, 512, 64)),
    dict(shape=(4, 16, 2048, 128)),
    dict(shape=(2, 20, 1536, 128), causal=True),
    dict(shape=(1, 32, 1, 128), h_kv=8, s_kv=1024, causal=True),
    dict(shape=(1, 32, 1, 128), h_kv=8, s_kv=8192, causal=True),
    dict(shape=(1, 32, 1, 128), h_kv=8, s_kv=32768, causal=True),
    dict(shape=(16, 32, 1, 128), h_kv=8, s_kv=32768, causal=True),
    dict(shape=(1, 32, 512, 128), h_kv=8, s_kv=4096, causal=True),
]


def grid_cases():
    cases = []
    for dtype, d, causal in itertools.product(("fp16", "bf16"), (64, 128), (False, True)):
        cases.append(dict(shape=(2, 8, 1000, d), dtype=dtype, causal=causal))
    cases += [
        dict(shape=(1, 32, 1024, 128), h_kv=8, causal=False),
        dict(shape=(1, 32, 1024, 128), h_kv=8, causal=True, dtype="bf16"),
        dict(shape=(1, 32, 512, 128), h_kv=8, s_kv=4096, causal=True),
        dict(shape=(1, 32, 512, 128), h_kv=8, s_kv=4096, causal=True, dtype="bf16"),
        dict(shape=(1, 32, 512, 128), h_kv=8, s_kv=4096, causal=True, layout="bshd"),
        dict(shape=(2, 8, 500, 64), s_kv=1111, causal=True),
        dict(shape=(2, 8, 500, 64), s_kv=1111, causal=False, dtype="bf16"),
        dict(shape=(2, 8, 1000, 64), causal=True, layout="bshd"),
        dict(shape=(1, 4, 300, 64), s_kv=200, causal=True, peers=("triton-fa",)),  # rows with no key
    ]
    for bb, skv in ((1, 1024), (1, 8192), (1, 32768), (16, 1024), (16, 32768)):
        cases.append(dict(shape=(bb, 32, 1, 128), h_kv=8, s_kv=skv, causal=True))
    cases += [
        dict(shape=(16, 32, 1, 128), h_kv=8, s_kv=8192, causal=True, layout="bshd"),
        dict(shape=(1, 32, 1, 128), h_kv=8, s_kv=4097, causal=False, dtype="bf16"),
        dict(shape=(2, 16, 1, 64), h_kv=2, s_kv=3000, causal=True),
        dict(shape=(2, 16, 1, 64), h_kv=2, s_kv=3000, causal=True, dtype="bf16"),
        dict(shape=(1, 32, 4, 128), h_kv=8, s_kv=4099, causal=True),
        dict(shape=(2, 32, 16, 128), h_kv=8, s_kv=2048, causal=True, layout="bshd"),
        dict(shape=(1, 32, 1, 128), h_kv=8, s_kv=1000, causal=True, peers=("triton-decode",),
             configs={"triton-decode": dict(DECODE_DEFAULT, splits=1)}),  # the direct (no combine) path
        dict(shape=(1, 32, 1, 128), h_kv=8, s_kv=1000, causal=True, peers=("triton-decode",),
             configs={"triton-decode": dict(DECODE_DEFAULT, splits=5)}),  # uneven splits
    ]
    return cases


def case_jobs(timed, grid):
    """The Triton compile jobs of selftest's cases: tuned spaces for `timed`, defaults for `grid`."""
    jobs = []
    # the grid's few defaults first: compiled lazily they would cost the most wall time
    for c, tune in [(c, False) for c in grid] + [(c, True) for c in timed]:
        b, h, s, d = c["shape"]
        dt = DTYPES[c.get("dtype", "fp16")]
        lay = c.get("layout", "bhsd")
        hk, sk = c.get("h_kv") or h, c.get("s_kv") or s
        qs = torch.empty((b, h, s, d) if lay == "bhsd" else (b, s, h, d), dtype=dt, device="meta")
        ks = torch.empty((b, hk, sk, d) if lay == "bhsd" else (b, sk, hk, d), dtype=dt, device="meta")
        if lay == "bshd":
            qs, ks = qs.permute(0, 2, 1, 3), ks.permute(0, 2, 1, 3)
        peers = c.get("peers") or default_peers(s)
        forced = c.get("configs", {})
        if "triton-decode" in forced:
            f = forced["triton-decode"]
            spec = _PlanSpec(qs, ks, ks, c.get("causal"), {n: f[n] for n in DECODE_DEFAULT}, f.get("splits"))
            for kern, gr, a, kw in spec.launch_args(dtype_only=True):
                jobs.append(("split" if kern is _decode_split_kernel else "combine", gr, a, kw))
        else:
            jobs += compile_jobs(qs, ks, ks, c.get("causal", False), peers, tune)
    return jobs



def cmd_selftest(args):
    t_start = time.time()
    deadline = t_start + args.budget if args.budget else None
    logf = open(args.log, "w") if args.log else None

    def log(msg=""):
        print(msg, flush=True)
        if logf:
            logf.write(msg + "\n")
            logf.flush()

    out = dict(started=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), torch=torch.__version__,
               triton=getattr(triton, "__version__", None))

    def save():
        if args.json:
            with open(args.json, "w") as f:
                json.dump(out, f, indent=1, default=str)

    if not torch.cuda.is_available():
        sys.exit("peers selftest: torch sees no CUDA device")
    p = torch.cuda.get_device_properties(0)
    out["device"] = dict(name=p.name, sms=p.multi_processor_count, cc=f"{p.major}.{p.minor}",
                         l2_mb=getattr(p, "L2_cache_size", 0) / 2**20, mem_gb=p.total_memory / 2**30)
    try:
        out["cudnn"] = torch.backends.cudnn.version()
    except Exception as e:
        out["cudnn"] = f"? ({_fail_text(e)})"
    log(f"{p.name}, {p.multi_processor_count} SMs, sm_{p.major}{p.minor}, torch {torch.__version__}, "
        f"triton {out['triton']}, cudnn {out['cudnn']}")
    save()

    timed = [] if args.skip_timing else list(TIMED_CASES)
    grid = [] if args.skip_grid else grid_cases()
    # what to compile ahead: the tuned spaces of the timed cases, the defaults of the grid's
    if triton is not None and not args.no_precompile:
        jobs = case_jobs(timed, grid)
        pc = precompile(jobs, workers=args.workers,
                        deadline=(time.time() + args.compile_budget) if args.compile_budget else None, log=log)
        out["precompile"] = dict(zip(("compiled", "failed", "not_reached", "wall_s"), pc))
        save()

    ceiling = None
    if not args.skip_timing:
        ceiling = copy_ceiling()
        out["copy_ceiling"] = ceiling
        log(f"copy ceiling: {ceiling['bytes'] / 2**30:.1f} GiB read + written in {ceiling['median_us']:.1f} us"
            f" = {ceiling['tb_per_s']:.2f} TB/s (min {ceiling['min_us']:.1f}, p90 {ceiling['p90_us']:.1f};"
            f" copy {'ok' if ceiling['copy_ok'] else 'WRONG'})")
        save()

    out["timed"], out["grid"] = [], []
    log(f"{'case':44s} {'peer':15s} {'status':11s} {'median us':>10s} {'rel_l2':>8s}  config / reason")
    for c in timed:
        if deadline and time.time() > deadline:
            log(f"{case_name(c)}: skipped (time budget)")
            continue
        t0 = time.time()
        out["timed"].append(run_case(c, timed=True, tune=True, log=log, deadline=deadline, ceiling=ceiling,
                                     tune_budget=args.tune_budget))
        out["timed"][-1]["wall_s"] = round(time.time() - t0, 1)
        save()
    log(f"-- correctness grid (not timed; Triton peers with their default config) at {time.time() - t_start:.0f} s")
    for c in grid:
        if deadline and time.time() > deadline:
            log(f"{case_name(c)}: skipped (time budget)")
            out["grid"].append(dict(case=case_name(c), skipped=True))
            continue
        out["grid"].append(run_case(c, timed=False, tune=False, log=log, deadline=deadline))
        save()

    # summary
    bad = [(c["case"], r["name"], r["status"], r.get("error", ""))
           for c in out["timed"] + out["grid"] for r in c.get("peers", []) if r["status"] in ("wrong", "error")]
    uns = [(c["case"], r["name"]) for c in out["timed"] + out["grid"] for r in c.get("peers", [])
           if r["status"] == "unsupported"]
    out["wall_s"] = round(time.time() - t_start, 1)
    log(f"== summary: {len(out['timed'])} timed cases, {sum(1 for c in out['grid'] if not c.get('skipped'))} grid "
        f"cases, {len(bad)} wrong/error, {len(uns)} unsupported, {out['wall_s']} s")
    for x in bad:
        log("  BAD " + " | ".join(map(str, x)))
    reasons = {}
    for c in out["timed"] + out["grid"]:
        for r in c.get("peers", []):
            if r["status"] == "unsupported":
                reasons.setdefault((r["name"], (r.get("error") or "")[:150]), []).append(c["case"])
    for (n, why), cs in reasons.items():
        log(f"  unsupported {n} in {len(cs)} case(s) (e.g. {cs[0]}): {why}")
    log(f"{'case':44s} " + " ".join(f"{n:>14s}" for n in ALL_PEERS) + "   best")
    for c in out["timed"]:
        cells = []
        for n in ALL_PEERS:
            r = next((r for r in c["peers"] if r["name"] == n), None)
            cells.append(f"{r['median_us']:14.2f}" if r and "median_us" in r else
                         f"{(r['status'][:14] if r else '-'):>14s}")
        fl = (f"  ({c['min_bytes'] / 1e6:.1f} MB: {c['copy_bw_us']:.2f} us at copy bandwidth)"
              if "copy_bw_us" in c and c["shape"][2] <= DECODE_MAX_SQ else "")
        log(f"{c['case']:44s} " + " ".join(cells) + f"   {c['best']}{fl}")
    save()
    if logf:
        logf.close()
    return 1 if bad else 0


def cmd_run(args):
    if not torch.cuda.is_available():
        sys.exit("peers run: torch sees no CUDA device")
    b, h, s, d = args.shape
    c = dict(shape=(b, h, s, d), h_kv=args.h_kv, s_kv=args.s_kv, causal=args.causal, dtype=args.dtype,
             layout=args.layout, peers=parse_peers(args.peers))
    ceiling = copy_ceiling() if args.ceiling else None
    res = run_case(c, timed=not args.no_time, tune=not args.no_tune, ceiling=ceiling)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1, default=str)
    return 0 if all(r["status"] in ("ok", "unsupported") for r in res["peers"]) else 1


def cmd_ceiling(args):
    if not torch.cuda.is_available():
        sys.exit("peers ceiling: torch sees no CUDA device")
    c = copy_ceiling(args.bytes)
    print(json.dumps(c))
    return 0 if c["copy_ok"] else 1


def cmd_cpucheck(args):
    """The Triton kernels' numerics under TRITON_INTERPRET=1 on the CPU, small shapes."""
    if os.environ.get("TRITON_INTERPRET") != "1":
        sys.exit("peers cpucheck: set TRITON_INTERPRET=1 (Triton's interpreter runs the kernels on the CPU)")
    torch.manual_seed(int.from_bytes(os.urandom(4), "little"))
    fails = 0
    cases = [
        # (b, h, h_kv, s_q, s_kv, d, causal, dtype, layout, fa config / decode (config, splits))
        (1, 2, 2, 40, 40, 64, False, torch.float16, "bhsd", dict(block_m=32, block_n=32, num_warps=4, num_stages=1)),
        (1, 2, 2, 40, 40, 64, True, torch.float16, "bhsd", dict(block_m=32, block_n=16 * 2, num_warps=4, num_stages=2)),
        # (bf16 stays out: Triton 3.6's interpreter computes tl.dot of bf16 operands wrongly)
        (2, 4, 2, 33, 70, 64, True, torch.float16, "bshd", dict(block_m=32, block_n=64, num_warps=4, num_stages=2)),
        (1, 4, 1, 70, 33, 32, True, torch.float16, "bhsd", dict(block_m=32, block_n=32, num_warps=4, num_stages=2)),
        (1, 2, 2, 64, 200, 128, False, torch.float16, "bshd", dict(block_m=64, block_n=64, num_warps=4, num_stages=2)),
        (1, 8, 2, 1, 300, 64, True, torch.float16, "bhsd", (dict(block_n=64, num_warps=4, num_stages=2), 3)),
        (2, 8, 2, 1, 300, 64, True, torch.float16, "bshd", (dict(block_n=64, num_warps=4, num_stages=2), 1)),
        (1, 8, 2, 4, 131, 64, True, torch.float16, "bhsd", (dict(block_n=32 * 2, num_warps=4, num_stages=2), 2)),
        (1, 4, 4, 5, 100, 32, False, torch.float16, "bshd", (dict(block_n=64, num_warps=4, num_stages=2), 4)),
        (1, 8, 2, 3, 2, 32, True, torch.float16, "bhsd", (dict(block_n=64, num_warps=4, num_stages=2), 1)),
        (1, 16, 2, 16, 260, 64, True, torch.float16, "bhsd", (dict(block_n=64, num_warps=4, num_stages=2), 3)),
    ]
    for b, h, hk, sq, sk, d, causal, dt, lay, cfg in cases:
        q, k, v = make_inputs(b, h, sq, d, h_kv=hk, s_kv=sk, dtype=dt, layout=lay, device="cpu")
        ref = reference(q, k, v, causal)
        if isinstance(cfg, tuple):
            plan = DecodePlan(q, k, v, causal, cfg[0], cfg[1])
            plan.poison()
            o = plan()
            what = f"decode {_cfg_str(plan.cfg)}"
        else:
            o = torch.full_like(q, float("nan"))
            triton_attention(q, k, v, causal, cfg, out=o)
            what = f"fa {_cfg_str(cfg)}"
        err, bad = rel_l2(o, ref)
        ok = bad == 0 and err <= TOLERANCE[dt]
        fails += not ok
        print(f"{'ok  ' if ok else 'FAIL'} b{b} h{h}/{hk} S_q{sq} S_kv{sk} D{d} c{int(causal)} "
              f"{DTYPE_NAMES[dt]} {lay} {what}: rel_l2 {err:.2e}, {bad} non-finite", flush=True)
    print(f"cpucheck: {len(cases) - fails}/{len(cases)} ok")
    return 1 if fails else 0


def main(argv=None):
    ap = argparse.ArgumentParser(description="fatune's benchmark peers: torch SDPA backends, Triton "
                                             "FlashAttention and split-KV decode, the copy ceiling")
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="check and time the peers on one case")
    r.add_argument("--shape", type=parse_shape, required=True, help="BxHxS_qxD")
    r.add_argument("--h-kv", type=int, default=None)
    r.add_argument("--s-kv", type=int, default=None)
    r.add_argument("--causal", action="store_true", help="bottom-right aligned")
    r.add_argument("--dtype", choices=tuple(DTYPES), default="fp16")
    r.add_argument("--layout", choices=("bhsd", "bshd"), default="bhsd")
    r.add_argument("--peers", default="all", help=f"all, or a comma list of {', '.join(ALL_PEERS)}")
    r.add_argument("--no-tune", action="store_true", help="Triton peers with their default config")
    r.add_argument("--no-time", action="store_true", help="check only")
    r.add_argument("--ceiling", action="store_true", help="also the copy ceiling, and the minimum bytes at its bandwidth")
    r.add_argument("--json")
    s = sub.add_parser("selftest", help="every peer on a correctness grid, then the timed cases")
    s.add_argument("--json")
    s.add_argument("--log")
    s.add_argument("--budget", type=float, default=0, help="seconds; cases after it are skipped")
    s.add_argument("--compile-budget", type=float, default=0, help="seconds for compiling ahead")
    s.add_argument("--workers", type=int, default=None, help="compile processes")
    s.add_argument("--tune-budget", type=float, default=0, help="seconds per tuning; configs after it skipped")
    s.add_argument("--no-precompile", action="store_true")
    s.add_argument("--skip-grid", action="store_true")
    s.add_argument("--skip-timing", action="store_true")
    c = sub.add_parser("ceiling", help="device-to-device copy bandwidth")
    c.add_argument("--bytes", type=int, default=1 << 30)
    sub.add_parser("cpucheck", help="the Triton kernels under TRITON_INTERPRET=1, no GPU")
    args = ap.parse_args(argv)
    return {"run": cmd_run, "selftest": cmd_selftest, "ceiling": cmd_ceiling, "cpucheck": cmd_cpucheck}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
