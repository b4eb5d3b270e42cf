#!/usr/bin/env python3
"""sample_length.py - issue 16: does two configs' rank depend on how long a sample keeps the GPU busy?

suite24's quality check (tools/device-session.sh throughput-quality) times the race's best A
against the exhaustive pass's best B with `fatune bench` (samples of K = 20 calls, at most 20 ms),
while the race's final takes samples of at most 1 ms. Where A and B differed, the two searches'
finals had them within 0.1-0.4 % and the check 1.3-2.5 % apart (2026-11-29, two H200s). Here each
pair is timed interleaved (40 samples over 10 rounds, `fatune bench --launches K`) with samples of
about 1, 4 and 20 ms, in alternating order, twice:

    python3 bench/sample_length.py [--reps 2] > OUT.txt

Needs build/fatune, a GPU and the CUBIN cache (it compiles what is missing).
"""
import argparse
import json
import subprocess
import sys

SM90 = "NUM_CONSUMER_WG={},BLOCK_M={},BLOCK_N={},KV_STAGES={},PINGPONG={},PERSISTENT={},Q_IN_REGS={}," \
       "INTRA_WG_OVERLAP={},TILE_ORDER={},MASK_PEEL=0,KV_WARPGROUPS=1,CLUSTER_M=1,NUM_SPLITS=1,PDL=0"
# (shape, causal, us per call, A = the race's best, B = exhaustive's best), suite24 on two H200s
PAIRS = [
    ("1x32x8192x128", 0, 1700, SM90.format(2, 128, 128, 2, 0, 0, 0, 2, 0), SM90.format(2, 128, 128, 2, 0, 0, 1, 2, 0)),
    ("4x16x2048x64", 0, 155, SM90.format(2, 128, 128, 3, 0, 1, 0, 2, 0), SM90.format(2, 128, 128, 2, 0, 1, 1, 2, 0)),
    ("2x16x4096x64", 1, 166, SM90.format(1, 64, 128, 2, 0, 0, 1, 2, 1), SM90.format(1, 64, 176, 2, 0, 0, 0, 2, 1)),
    ("4x16x2048x128", 0, 220, SM90.format(2, 128, 128, 2, 0, 1, 1, 1, 0), SM90.format(2, 128, 128, 2, 1, 0, 1, 1, 0)),
    ("1x8x2048x64", 0, 21, SM90.format(1, 64, 128, 2, 0, 0, 1, 1, 0), SM90.format(2, 128, 128, 3, 1, 0, 1, 2, 0)),
]
SAMPLE_MS = [1, 4, 20]


def bench(shape, causal, k, a, b):
    cmd = ["build/fatune", "bench", "--space", "search_spaces/attention_sm90.yaml", "--shape", shape,
           "--config", a, "--config", b, "--samples", "40", "--rounds", "10", "--launches", str(k), "--json"]
    cmd += ["--causal"] if causal else []
    p = subprocess.run(cmd, capture_output=True, text=True)
    try:
        ra, rb = (json.loads(line) for line in p.stdout.splitlines())
        return ra["t_median_us"], rb["t_median_us"]
    except (ValueError, KeyError, TypeError):
        print(f"bench failed: {(p.stderr or p.stdout).strip()[:300]}", file=sys.stderr)
        return float("nan"), float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=2)
    args = ap.parse_args()
    print(f"{'shape':<15}{'c':>2}{'sample ms':>10}{'K':>5}{'rep':>4}{'A us':>11}{'B us':>11}{'A/B':>8}")
    for shape, causal, us, a, b in PAIRS:
        for rep in range(args.reps):
            order = SAMPLE_MS if rep % 2 == 0 else SAMPLE_MS[::-1]
            for ms in order:
                k = max(1, min(1000, round(ms * 1000 / us)))
                ta, tb = bench(shape, causal, k, a, b)
                print(f"{shape:<15}{causal:>2}{ms:>10}{k:>5}{rep:>4}{ta:>11.3f}{tb:>11.3f}{ta / tb:>8.4f}", flush=True)


if __name__ == "__main__":
    main()
