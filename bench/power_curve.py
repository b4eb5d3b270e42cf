#!/usr/bin/env python3
"""power_curve.py - issue 16's quality: how fast a GPU reaches its power-capped state under a
heavy attention kernel, how fast it leaves it in a gap, and whether two kernels rank alike
in both states. Answers how long a timing must keep the GPU busy before it measures the
sustained state (docs/timing.md, "The GPU's power cap").

    python3 bench/power_curve.py [--shape 1x32x8192x128] [--json OUT]   (a GPU machine, torch)

Three parts, each call timed by its own CUDA event pair:
  ramp:  after 2 s idle, the kernel back to back for 2 s; the mean call time per 25 ms of
         elapsed GPU time (the first buckets are the boost clock, the last the capped one);
  gaps:  from the capped state, an idle gap of g ms, then 40 calls; the first calls' times
         after each gap over the capped mean (how much of the cap a gap forgets);
  swap:  two kernels (SDPA's flash and cuDNN backends) timed cool (after 150 ms idle, two
         untimed calls and five timed ones, within the 50 ms before the cap; alternated) and
         hot (alternated back to back after 1 s of load); the ratio of their medians in each
         state.
"""
import argparse
import json
import statistics as st
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", default="1x32x8192x128", help="BxHxSxD (fp16, non-causal)")
    ap.add_argument("--json", help="write the figures here too")
    a = ap.parse_args()
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    b, h, s, d = (int(x) for x in a.shape.split("x"))
    q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=torch.float16) for _ in range(3))

    def kern(backend):
        def f():
            with sdpa_kernel(backend):
                return F.scaled_dot_product_attention(q, k, v)
        return f

    flash, cudnn = kern(SDPBackend.FLASH_ATTENTION), kern(SDPBackend.CUDNN_ATTENTION)
    for f in (flash, cudnn):
        f()
    torch.cuda.synchronize()

    def timed(fs):
        """Runs fs back to back; (start offsets ms, call us) per call."""
        ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in fs]
        for (e0, e1), f in zip(ev, fs):
            e0.record()
            f()
            e1.record()
        torch.cuda.synchronize()
        first = ev[0][0]
        return [first.elapsed_time(e0) for e0, _ in ev], [e0.elapsed_time(e1) * 1e3 for e0, e1 in ev]

    out = {"shape": a.shape, "gpu": torch.cuda.get_device_name()}
    # ramp
    time.sleep(2)
    single = timed([flash])[1][0]
    n = max(20, int(2000e3 / single))
    at, us = timed([flash] * n)
    buckets = {}
    for t, u in zip(at, us):
        buckets.setdefault(int(t // 25), []).append(u)
    out["ramp"] = [(k * 25, round(st.mean(v), 2), len(v)) for k, v in sorted(buckets.items())]
    capped = st.median(us[len(us) // 2:])
    out["ramp_cold_us"] = round(st.median(us[:5]), 2)
    out["ramp_capped_us"] = round(capped, 2)
    # the time after which calls are within 1 % of the capped state for good
    settle = next((at[i] for i in range(len(us)) if all(u >= 0.99 * capped for u in us[i:i + 50])), None)
    out["ramp_settle_ms"] = settle
    # gaps
    gaps = []
    for g in (0.5, 2, 5, 20, 100, 500):
        timed([flash] * int(400e3 / single))
        time.sleep(g / 1e3)
        _, us = timed([flash] * 40)
        gaps.append({"gap_ms": g, "first": [round(u / capped, 3) for u in us[:5]],
                     "last20": round(st.median(us[20:]) / capped, 3)})
    out["gaps"] = gaps
    # swap
    time.sleep(1)
    cool = {"flash": [], "cudnn": []}
    for i in range(16):
        for name, f in (("flash", flash), ("cudnn", cudnn)) if i % 2 == 0 else (("cudnn", cudnn), ("flash", flash)):
            time.sleep(0.15)
            cool[name].extend(timed([f] * 7)[1][2:])
    timed([flash, cudnn] * int(500e3 / single))
    _, us = timed([flash, cudnn] * int(250e3 / single))
    hot = {"flash": us[0::2], "cudnn": us[1::2]}
    out["swap"] = {state: {k: round(st.median(v), 2) for k, v in dd.items()} for state, dd in
                   (("cool", cool), ("hot", hot))}
    for state in ("cool", "hot"):
        sw = out["swap"][state]
        sw["cudnn/flash"] = round(sw["cudnn"] / sw["flash"], 4)
    json.dump(out, sys.stdout, indent=1)
    print()
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(out, fh, indent=1)


if __name__ == "__main__":
    main()
