#!/usr/bin/env python3
"""ablation.py - what each FlashAttention-3 mechanism parameter buys, on a GPU (issue 17).

For each shape: `fatune search` with the default spaces (both families on sm_90), then, for each
space's best config, `fatune bench` of that config with each value of the mechanism parameters it
has, the others held at the best's values, in one process per call but in the same session,
interleaved A B C A B C so that clock drift shows as a spread rather than as a gain:

  INTRA_WG_OVERLAP (Hopper template): 1 the overlapped loop, 2 V one tile behind K
  TILE_ORDER (Hopper, causal): 0 each head's row blocks together, 1 the heaviest row blocks of every
      head first, L2-grouped (FlashAttention-3's longest-first order)
  MASK_PEEL (Hopper, causal): 0 each KV tile tests whether it needs the mask, 1 the loop peeled at the
      diagonal (unmasked tiles, then masked ones)
      (both non-persistent only, as the space offers them: a persistent best is timed beside the four
      combinations of its PERSISTENT=0 twin)
  Q_IN_REGS (Hopper): Q K^T with Q's fragments in registers, or Q read from shared memory
  KV_WARPGROUPS (Hopper): a 64-row block's KV tiles split between two consumers, or read by one
  CLUSTER_M (Hopper, D >= 128 non-causal): clusters of two blocks multicasting K and V, or none
  PDL (both templates): the combine kernel launched with programmatic dependent launch (1 released
      after each split block's stores, 2 as it starts: the decode space only); only for
      a split best (NUM_SPLITS > 1); a best that merges its splits in the kernel
      (COMBINE_IN_KERNEL=1) is compared with its combine-kernel twins (COMBINE_IN_KERNEL=0, PDL 0/1/2)

It also prints, for each split-KV shape, FlashAttention-3's split count for that best's grid
(tuner/search/strategy.c ft_split_heuristic, repeated here) next to the count the search chose.

  python3 bench/ablation.py --fatune build/fatune --db build/ablation.db --json out.json [--only 0 1]
  python3 bench/ablation.py --list        # the shapes and what would run, no GPU

A variant the space's constraints reject for the shape (e.g. TILE_ORDER 1 where the work tiles fit
one wave, or a register limit) is reported "not in the space" and skipped, not counted as a failure.

Exit codes: 0 every variant verified; 1 a variant failed or was wrong; 2 usage.
"""

import argparse
import json
import math
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import kernel_check as kc  # noqa: E402  (the space's expressions, for a best's grid)

# the shapes of issue 17's brief: the mission shape, the D 128 throughput shape, the causal bf16
# miss, GQA decode (bshd) and MHA decode, the D 128 causal shape, and the long bf16 D 128 shape (clusters)
SHAPES = [
    "--shape 1x8x512x64",
    "--shape 4x16x2048x128",
    "--shape 2x32x2048x64 --dtype bf16 --causal",
    "--shape 2x40x1x128 --kv-heads 8 --kv-len 8192 --layout bshd",
    "--shape 1x32x1x128 --kv-len 8192",
    "--shape 4x16x2048x128 --causal",
    "--shape 4x8x4096x128 --dtype bf16",
]
SPLIT_COUNTS = {"attention": [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64], "attention_sm90": [1, 2, 4]}
SMS = 132


def parse_config(text):
    return dict((k, int(v)) for k, v in (kv.split("=", 1) for kv in text.split(",")))


def format_config(values):
    return ",".join(f"{k}={v}" for k, v in values.items())


def variants(values, causal):
    """(parameter, label, config values) for every mechanism value to time, the best's own
    first in each group (TILE_ORDER and MASK_PEEL only for a causal shape, all four combinations)."""
    out = []
    if "INTRA_WG_OVERLAP" in values:
        for v in (values["INTRA_WG_OVERLAP"], *[x for x in (1, 2) if x != values["INTRA_WG_OVERLAP"]]):
            out.append(("INTRA_WG_OVERLAP", str(v), dict(values, INTRA_WG_OVERLAP=v)))
    if causal and "TILE_ORDER" in values:
        # the four combinations; the space offers them on non-persistent configs only, so a
        # persistent best is timed beside its non-persistent twin's four
        group, base, note = "TILE_ORDER/MASK_PEEL", dict(values), ""
        if values.get("PERSISTENT") == 1:
            out.append((group, "the best (persistent)", dict(values)))
            base, note = dict(values, PERSISTENT=0, TILE_ORDER=0, MASK_PEEL=0), ", PERSISTENT=0"
        own = (base["TILE_ORDER"], base["MASK_PEEL"])
        for to, mp in [own] + [c for c in ((0, 0), (1, 0)) if c != own]:  # MASK_PEEL=1: not in the space (C7520)
            out.append((group, f"TILE_ORDER={to} MASK_PEEL={mp}{note}", dict(base, TILE_ORDER=to, MASK_PEEL=mp)))
    if "Q_IN_REGS" in values:
        for v in (values["Q_IN_REGS"], 1 - values["Q_IN_REGS"]):
            out.append(("Q_IN_REGS", str(v), dict(values, Q_IN_REGS=v)))
    if "KV_WARPGROUPS" in values:
        # the same 64-row block: two consumers splitting its KV tiles, or one reading them all
        one = dict(values, KV_WARPGROUPS=1, NUM_CONSUMER_WG=1, BLOCK_M=64)
        two = dict(values, KV_WARPGROUPS=2, NUM_CONSUMER_WG=2, BLOCK_M=64, PINGPONG=0, PERSISTENT=0, KV_STAGES=2)
        if values["KV_WARPGROUPS"] == 2:
            out += [("KV_WARPGROUPS", "2", dict(values)), ("KV_WARPGROUPS", "1 (one consumer, 64 rows)", one)]
        elif values.get("NUM_CONSUMER_WG") == 1:
            out += [("KV_WARPGROUPS", "1", dict(values)), ("KV_WARPGROUPS", "2 (two consumers, 64 rows)", two)]
    if "CLUSTER_M" in values:
        for v in (values["CLUSTER_M"], 3 - values["CLUSTER_M"]):
            out.append(("CLUSTER_M", str(v), dict(values, CLUSTER_M=v)))
    if "PDL" in values and values.get("NUM_SPLITS", 1) > 1:
        if values.get("COMBINE_IN_KERNEL", 0) == 1:
            out.append(("PDL", "in-kernel combine (best)", dict(values)))
            for v in (0, 1, 2):
                out.append(("PDL", f"combine kernel, PDL={v}", dict(values, COMBINE_IN_KERNEL=0, PDL=v)))
        else:
            # 2 (released as each split block starts) is the decode space's only: elsewhere it is
            # reported "not in the space"
            for v in (values["PDL"], *[x for x in (0, 1, 2) if x != values["PDL"]]):
                out.append(("PDL", str(v), dict(values, PDL=v)))
    return out


def split_heuristic(mblocks, nblocks, counts, sms=SMS):
    """FlashAttention-3's num_splits_heuristic over the space's counts (strategy.c)."""
    if mblocks < 1 or 10 * mblocks >= 8 * sms or nblocks <= 4:
        return 1
    eff = {c: (lambda w: w / math.ceil(w))(mblocks * c / sms) for c in counts if c <= min(nblocks, sms)}
    best = max(eff.values())
    return min(c for c, e in eff.items() if e >= 0.85 * best)


def shape_of(text):
    """kernel_check.Shape, causal and dtype of a shape's fatune arguments."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape")
    ap.add_argument("--kv-len", type=int)
    ap.add_argument("--kv-heads", type=int)
    ap.add_argument("--layout", default="bhsd")
    ap.add_argument("--dtype", default="fp16")
    ap.add_argument("--causal", action="store_true")
    a = ap.parse_args(text.split())
    b, h, s, d = (int(x) for x in a.shape.split("x"))
    return kc.Shape(b, h, s, d, a.kv_heads or h, a.kv_len or s, int(a.layout == "bshd")), a.causal, a.dtype


def split_note(text, space, space_file, best):
    """The split count the search chose beside FlashAttention-3's rule for the best's grid."""
    shape, causal, dtype = shape_of(text)
    g = kc.Space(space_file).geometry(shape, causal, "sm_90", best, dtype)
    splits = best.get("NUM_SPLITS", 1)
    bn = best.get("BLOCK_N", best.get("TILE_N", 128))
    ntiles = math.ceil(shape.s_kv / bn)
    rule = split_heuristic(g["grid"][0] * g["grid"][1] * g["grid"][2] // splits, ntiles, SPLIT_COUNTS.get(space, [1]))
    return f"splits: the search chose {splits}, FA3's rule gives {rule} ({ntiles} KV tiles of {bn})"


def run_json(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    try:
        return p.returncode, json.loads(p.stdout.strip().splitlines()[-1]) if p.stdout.strip() else None, p.stderr
    except (json.JSONDecodeError, IndexError):
        return p.returncode, None, p.stderr + p.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fatune", default=os.path.join(ROOT, "build", "fatune"))
    ap.add_argument("--db", default=os.path.join(ROOT, "build", "ablation.db"))
    ap.add_argument("--bench-db", default=os.path.join(ROOT, "build", "ablation-bench.db"))
    ap.add_argument("--shape", action="append", help="shape arguments, e.g. '--shape 1x8x512x64 --causal' "
                    "(repeatable; default: the seven above)")
    ap.add_argument("--only", type=int, nargs="+", help="only these of the shapes (0-6), e.g. to fit "
                    "a 10-minute call; the DB keeps the others' searches")
    ap.add_argument("--reps", type=int, default=2, help="rounds of the interleaved variants")
    ap.add_argument("--json", help="write every result here")
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args()
    shapes = list(enumerate(args.shape or SHAPES))
    if args.only:
        shapes = [shapes[i] for i in args.only]
    if args.list:
        for i, s in shapes:
            print(f"{i}: search {s}; then each space's best with INTRA_WG_OVERLAP 1/2, TILE_ORDER 0/1, "
                  "MASK_PEEL 0/1, Q_IN_REGS 0/1, KV_WARPGROUPS 1/2, CLUSTER_M 1/2 (Hopper) and PDL 0/1/2 (split; 2 the decode space only)")
        return 0
    results, failed = [], 0
    for _, s in shapes:
        rc, res, err = run_json([args.fatune, "search", *s.split(), "--db", args.db, "--json", "--quiet"])
        if res is None or "spaces" not in res:
            print(f"{s}: search failed (rc {rc}): {err.strip()[-400:]}")
            failed += 1
            continue
        for sp in res["spaces"]:
            if "best" not in sp:
                print(f"{s} {sp['space']}: nothing verified")
                continue
            best = parse_config(sp["best"]["config"])
            space_file = os.path.join(ROOT, "search_spaces", sp["space"] + ".yaml")
            print(f"\n{s}  {sp['space']} best {sp['best']['t_median_us']:.2f} us  {sp['best']['config']}")
            vs = variants(best, "--causal" in s.split())
            if not vs:
                print("  no mechanism parameter applies (no split, no Hopper loop)")
            times = {}
            for rep in range(args.reps):
                for param, label, values in vs:
                    cfg = format_config(values)
                    rc, b, err = run_json([args.fatune, "bench", "--space", space_file, *s.split(), "--config", cfg,
                                           "--db", args.bench_db, "--json"])
                    ok = b is not None and b.get("status") == "ok"
                    if b is not None and str(b.get("status", "")).startswith("rejected"):
                        print(f"  {param}={label}: not in the space for this shape ({b.get('reason')})")
                        continue
                    if not ok:
                        failed += 1
                        print(f"  {param}={label}: FAILED rc {rc}: {(b or {}).get('reason') or err.strip()[-300:]}")
                    times.setdefault((param, label), []).append(b["t_median_us"] if ok else None)
                    results.append(dict(shape=s, space=sp["space"], best=sp["best"]["config"], param=param,
                                        value=label, config=cfg, rep=rep, status=(b or {}).get("status"),
                                        t_median_us=(b or {}).get("t_median_us"), rel_err=(b or {}).get("rel_err")))
            for param in dict.fromkeys(p for p, _, _ in vs):
                base = None
                for (p, label), ts in times.items():
                    if p != param:
                        continue
                    good = [t for t in ts if t is not None]
                    med = sorted(good)[len(good) // 2] if good else None
                    base = base if base is not None else med
                    ratio = f"{med / base:.3f}x" if med and base else "-"
                    print(f"  {param}={label:28s} {' '.join(f'{t:8.2f}' if t else '  failed' for t in ts)} us"
                          f"   {ratio} of the best's")
            if best.get("NUM_SPLITS", 1) > 1 or "--kv-len" in s:
                print("  " + split_note(s, sp["space"], space_file, best))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    print(f"\n{len(results)} timings, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
