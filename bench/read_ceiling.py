#!/usr/bin/env python3
"""read_ceiling.py - how fast this GPU can read a decode step's K and V: the floor under any
decode kernel's time, to name what a decode target asks for.

A decode step (1-16 query rows per head) must read the whole KV cache once, and at batch 16
its time is that read: bench/compare_torch.py's serving rows put fatune's decode space at
4.0-4.3 TB/s and cuDNN or the Triton split-KV kernel at 4.4-4.5 TB/s on an H200. Issue 17
asks for 0.95x the best peer. This times pure reads of the same number of bytes, with
fatune's timing method (bench/peers.py measure: CUDA graphs of K calls, median of R
samples), by

  torch-sum   torch.sum over the buffer (fp16 in, fp32 accumulate): a library reduction
  triton-read a Triton kernel written for this script: a grid of programs each reading
              BLOCK elements per step of a grid-stride loop and writing one fp32 partial
              sum; swept over BLOCK, warps and programs per SM

and checks each against the buffer's fp64 sum (fresh uniform values in [0.5, 1.5): a reader
that skipped 0.1 % of the bytes fails). It prints one
line per reader and configuration, then the read ceiling (the fastest of them: a floor under
what the GPU can read, since another kernel may read faster), then, for each
--need MB:PEER_US pair given (a decode row's bytes in MB and the best peer's time in us),
the bandwidth that 0.95x the peer needs against the ceiling.

  python3 bench/read_ceiling.py [--mib N ...] [--need MB:PEER_US ...] [--json FILE]
"""
import argparse
import json
import sys

import torch
import triton
import triton.language as tl

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import peers as pe  # noqa: E402


@triton.jit
def _read_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    step = tl.num_programs(0) * BLOCK
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(pid * BLOCK, n, step):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + offs, mask=offs < n, other=0.0).to(tl.float32)
    tl.store(out_ptr + pid, tl.sum(acc, axis=0))


def triton_reader(x, block, warps, programs):
    out = torch.empty(programs, device=x.device, dtype=torch.float32)

    def fn():
        _read_kernel[(programs,)](x, out, x.numel(), BLOCK=block, num_warps=warps)
    return fn, lambda: out.double().sum().item()


def torch_reader(x):
    box = {}

    def fn():
        box["s"] = torch.sum(x, dtype=torch.float32)
    return fn, lambda: box["s"].double().item()


def time_reader(name, fn, total, x, samples):
    fn()
    torch.cuda.synchronize()
    want = x.double().sum().item()
    got = total()
    # every element is in [0.5, 1.5): a reader that skipped 0.1 % of them is 0.1 % off,
    # fp32 accumulation over ~1e4 elements per lane far less
    ok = abs(got - want) <= 1e-4 * want
    t = pe.measure(fn, samples)
    tbs = x.numel() * x.element_size() / (t["median"] * 1e-6) / 1e12
    return dict(reader=name, median_us=t["median"], min_us=t["min"], p90_us=t["p90"], tb_per_s=tbs,
                sum_ok=bool(ok), calls=t["calls"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mib", type=int, action="append", help="buffer sizes in MiB (default 2048)")
    ap.add_argument("--need", action="append", default=[],
                    help="MB:PEER_US: a decode row's K+V megabytes and its best peer's time")
    ap.add_argument("--samples", type=int, default=30)
    ap.add_argument("--json", help="also write the results as JSON here")
    args = ap.parse_args()
    if any(not 1 <= m <= 4095 for m in args.mib or []):
        ap.error("--mib takes 1..4095 (the reader's offsets are 32-bit)")
    torch.manual_seed(0)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    results = []
    for mib in args.mib or [2048]:
        x = (torch.rand(mib << 19, device="cuda", dtype=torch.float32) + 0.5).half()
        runs = [time_reader("torch-sum", *torch_reader(x), x, args.samples)]
        for block in (1024, 2048, 4096, 8192):
            for warps in (4, 8):
                for per_sm in (1, 2, 4, 8):
                    r = time_reader("triton-read", *triton_reader(x, block, warps, per_sm * sms), x,
                                    args.samples)
                    r.update(block=block, warps=warps, programs=per_sm * sms)
                    runs.append(r)
        for r in runs:
            cfg = "" if r["reader"] == "torch-sum" else \
                f" BLOCK {r['block']}, {r['warps']} warps, {r['programs']} programs"
            print(f"{mib} MiB {r['reader']}{cfg}: {r['median_us']:.2f} us (min {r['min_us']:.2f}), "
                  f"{r['tb_per_s']:.3f} TB/s{'' if r['sum_ok'] else '  SUM WRONG'}", flush=True)
        good = [r for r in runs if r["sum_ok"]]
        if not good:
            print("no reader's sum matched: no ceiling", file=sys.stderr)
            return 1
        best = max(good, key=lambda r: r["tb_per_s"])
        print(f"read ceiling, {mib} MiB: {best['tb_per_s']:.3f} TB/s ({best['reader']})", flush=True)
        results.append(dict(mib=mib, runs=runs, ceiling_tb_per_s=best["tb_per_s"]))
        del x
    ceiling = max(r["ceiling_tb_per_s"] for r in results)
    for item in args.need:
        mb, peer_us = (float(v) for v in item.split(":"))
        need = mb * 1e6 / (0.95 * peer_us * 1e-6) / 1e12
        print(f"{mb:.1f} MB against a {peer_us:.2f} us peer: 0.95x needs {need:.3f} TB/s, "
              f"{need / ceiling:.3f}x the read ceiling {ceiling:.3f}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(device=torch.cuda.get_device_name(0), results=results), f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
