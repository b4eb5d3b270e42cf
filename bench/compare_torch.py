#!/usr/bin/env python3
"""compare_torch.py - fatune's stored best attention kernel against torch SDPA.

For each requested shape (or every stored one with --all) this reads fatune's
best config from the tuning DB (table `best`, opened read-only), loads its CUBIN
from fatune's cache, and in one process, on the same random inputs, times it
and torch's SDPA flash, cuDNN and efficient backends with fatune's method
(median over R samples; one sample = CUDA events around one replay of a CUDA
graph of K back-to-back calls, divided by K; docs/timing.md), and the other peers of
bench/peers.py (an autotuned Triton FlashAttention kernel; for S <= 16 a Triton split-KV
decode kernel). It checks that every output agrees with an fp64 reference (relative L2)
and prints the ratios, the ratio to the best of the peers, and TFLOP/s (4*B*H*S*S*D
flops, halved when causal). Only ratios from one run compare.

  python3 bench/compare_torch.py --shape 1x8x512x64 --causal --db fatune.db
  python3 bench/compare_torch.py --all --json out.json
  python3 bench/compare_torch.py --all --peers flash,cudnn      # a subset of the peers

--list prints the DB rows and CUBIN paths it would use, without a GPU.
Exit codes: 0 ok, 1 a wrong result or a failed launch, 2 usage / nothing to compare.
"""

import argparse
import json
import os
import sqlite3
import sys

TEMPLATE = "attention"
# relative L2 error vs fp64 that a correct kernel stays under (FACTS.md: fp16
# lands near 3e-4, bf16 near 2e-3); the same bounds fatune verifies with
TOLERANCE = {"fp16": 2e-3, "bf16": 1e-2}
# table column / JSON key -> bench/peers.py peer name
COLUMNS = {"flash": "sdpa-flash", "cudnn": "sdpa-cudnn", "efficient": "sdpa-efficient",
           "triton": "triton-fa", "decode": "triton-decode"}


def cache_dir():
    if os.environ.get("FATUNE_CACHE_DIR"):
        return os.environ["FATUNE_CACHE_DIR"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "fatune")


def parse_shape(text):
    try:
        b, h, s, d = (int(x) for x in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"shape '{text}' is not BxHxSxD (e.g. 1x8x512x64)")
    if min(b, h, s, d) < 1:
        raise argparse.ArgumentTypeError(f"shape '{text}': every dimension must be >= 1")
    return b, h, s, d


def parse_config(text):
    out = {}
    for part in text.split(","):
        k, sep, v = part.partition("=")
        if not sep:
            raise ValueError(f"config '{text}': item '{part}' is not NAME=VALUE")
        out[k.strip()] = int(v)
    return out


def read_best(path, arch, device, shapes, causal, dtype, everything):
    """All of this script's access to fatune's DB (opened read-only): the stored best rows to
    compare, newest first per key, preferring this device, as plain dicts with the launch
    geometry. Columns a DB may not have yet (h_kv, s_kv, layout) default to h, s and 'bhsd'.
    Exits with a message when the file is missing or not a fatune DB."""
    if not os.path.exists(path):
        sys.exit(f"compare_torch: no tuning database at '{path}': run `fatune search` first, "
                 f"or pass --db / set FATUNE_DB")
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    db.row_factory = sqlite3.Row
    cols = {r[1] for r in db.execute("PRAGMA table_info(best)")}
    if not cols:
        sys.exit(f"compare_torch: '{path}' has no 'best' table: is it a fatune database?")
    q = "SELECT * FROM best WHERE template_name = ? AND arch = ?"
    args = [TEMPLATE, arch]
    if not everything:
        q += " AND dtype = ? AND causal = ?"
        args += [dtype, int(causal)]
    order = " ORDER BY (device = ?) DESC" + (", updated_at DESC" if "updated_at" in cols else "")
    rows = db.execute(q + order, args + [device]).fetchall()
    picked, seen = [], set()
    for r in rows:
        c = dict(b=r["b"], h=r["h"], s=r["s"], d=r["d"], causal=r["causal"], dtype=r["dtype"],
                 h_kv=(r["h_kv"] if "h_kv" in cols and r["h_kv"] else r["h"]),
                 s_kv=(r["s_kv"] if "s_kv" in cols and r["s_kv"] else r["s"]),
                 layout={0: "bhsd", 1: "bshd"}.get(r["layout"], r["layout"] or "bhsd")
                 if "layout" in cols else "bhsd",
                 config=r["config"], compile_key=r["compile_key"])
        key = (c["b"], c["h"], c["s"], c["d"], c["h_kv"], c["s_kv"], c["layout"], c["dtype"], c["causal"])
        if key in seen:
            continue
        if not everything and (c["b"], c["h"], c["s"], c["d"]) not in shapes:
            continue
        seen.add(key)
        values = parse_config(r["config"])
        smem = r["smem_bytes"] if "smem_bytes" in cols else r["smem_model"]
        c["geometry"] = dict(threads=r["threads"], grid=[r["grid_x"], r["grid_y"], r["grid_z"]],
                             smem=smem or 0, num_splits=values.get("NUM_SPLITS", 1),
                             combine_threads=r["combine_threads"] or 0,
                             combine_grid=[r["combine_grid_x"] or 0, r["combine_grid_y"] or 0,
                                           r["combine_grid_z"] or 0])
        picked.append(c)
    db.close()
    return picked


def compare_one(torch, fk, pe, row, cache, peer_names):
    b, h, s, d, causal, dtype = row["b"], row["h"], row["s"], row["d"], row["causal"], row["dtype"]
    h_kv, s_kv, layout = row["h_kv"], row["s_kv"], row["layout"]
    dt = {"fp16": torch.float16, "bf16": torch.bfloat16}[dtype]
    shape = f"{b}x{h}x{s}x{d}"
    if (h_kv, s_kv, layout) != (h, s, "bhsd"):
        shape += f"/kv{h_kv}x{s_kv}/{layout}"
    res = dict(shape=shape, causal=causal, dtype=dtype, config=row["config"],
               gflop=(pe.flops(b, h, s, s_kv, d, causal) if s_kv != s  # the unmasked scores
                      else 4.0 * b * h * s * s * d / (2 if causal else 1)) / 1e9)
    q, k, v = pe.make_inputs(b, h, s, d, h_kv=h_kv, s_kv=s_kv, dtype=dt, layout=layout)
    ref = pe.reference(q, k, v, causal)
    tol = TOLERANCE[dtype]

    cubin = os.path.join(cache, "cubin", f"{row['compile_key']}.cubin")
    fat = dict(name="fatune")
    try:
        if (h_kv, s_kv, layout) != (h, s, "bhsd"):
            raise RuntimeError("bench/ftkernel.py launches ABI v1 kernels only (H_kv = H, S_kv = S, bhsd)")
        if not row["compile_key"] or not os.path.exists(cubin):
            raise FileNotFoundError(f"CUBIN '{cubin}' is not in fatune's cache: re-run "
                                    f"`fatune search` or set FATUNE_CACHE_DIR")
        mod = fk.Module(cubin)
        att = fk.Attention(mod, row["geometry"], b, h, s, d)
        o = torch.full((b, h, s, d), float("nan"), device="cuda", dtype=dt)
        att.poison_partials()
        att(q, k, v, o)
        torch.cuda.synchronize()
        fat["rel_l2"], fat["nonfinite"] = fk.rel_l2(o, ref)
        kk, rr = fk.plan_timing(fk.quick_time(lambda: att(q, k, v, o)))
        fat.update(fk.time_graph(lambda: att(q, k, v, o), kk, rr))
        fat["ok"] = fat["nonfinite"] == 0 and fat["rel_l2"] <= tol
    except (fk.CudaError, OSError, RuntimeError) as e:
        fat.update(ok=False, error=str(e))
    res["fatune"] = fat

    # the peers, on the same inputs, with the same method (bench/peers.py)
    names = peer_names or pe.default_peers(s)
    results = pe.run_peers(q, k, v, bool(causal), names, ref=ref)
    res["peers"] = results
    for col, name in COLUMNS.items():
        r = next((x for x in results if x["name"] == name), None)
        if r is None:
            continue
        p = dict(name=col, status=r["status"])
        for key in ("rel_l2", "nonfinite", "config", "note"):
            if key in r:
                p[key] = r[key]
        if "median_us" in r:
            p.update(median=r["median_us"], min=r["min_us"], p90=r["p90_us"])
        if r["status"] != "ok":
            p["error"] = r.get("error") or r["status"]
        res[col] = p
    best = pe.best_of_peers(results)
    if best:
        res["best"] = dict(name=best["name"], median=best["median_us"])
        if fat.get("median"):
            res["vs_best"] = fat["median"] / best["median_us"]
    return res


def cell(p):
    if p and "median" in p:
        return f"{p['median']:9.2f}"
    return f"{'n/a':>9s}"


def print_table(results):
    print(f"{'shape':>15s} {'c':>1s} {'dtype':>5s} {'fatune':>9s} {'flash':>9s} {'cudnn':>9s} "
          f"{'effic':>9s} {'triton':>9s} {'/flash':>6s} {'/cudnn':>6s} {'/effic':>6s} {'/triton':>7s} "
          f"{'/best':>6s} {'best':>14s} {'TFLOP/s':>7s} {'rel_l2':>8s}  config")
    for r in results:
        f = r["fatune"]
        ours = f.get("median")

        def ratio(name, width=6):
            p = r.get(name, {})
            return f"{ours / p['median']:{width}.2f}" if ours and "median" in p else f"{'n/a':>{width}s}"
        tflops = f"{r['gflop'] * 1e3 / ours:7.1f}" if ours else f"{'-':>7s}"
        err = f"{f['rel_l2']:8.1e}" if "rel_l2" in f else f"{'-':>8s}"
        best = r.get("best")
        vs = f"{r['vs_best']:6.2f}" if "vs_best" in r else f"{'n/a':>6s}"
        print(f"{r['shape']:>15s} {r['causal']:1d} {r['dtype']:>5s} {cell(f)} {cell(r.get('flash', {}))} "
              f"{cell(r.get('cudnn', {}))} {cell(r.get('efficient', {}))} {cell(r.get('triton', {}))} "
              f"{ratio('flash')} {ratio('cudnn')} {ratio('efficient')} {ratio('triton', 7)} {vs} "
              f"{(best['name'] if best else '-'):>14s} {tflops} {err}  {r['config']}")
    for r in results:
        f = r["fatune"]
        if "error" in f:
            print(f"  {r['shape']} causal={r['causal']} fatune: n/a: {f['error']}")
        elif not f.get("ok"):
            print(f"  {r['shape']} causal={r['causal']} fatune: WRONG (rel_l2 "
                  f"{f['rel_l2']:.2e}, {f['nonfinite']} non-finite)")
        for p in r.get("peers", []):
            if p["status"] != "ok":
                print(f"  {r['shape']} causal={r['causal']} {p['name']}: {p['status']}: {p.get('error', '')[:160]}")
            elif p.get("config"):
                print(f"  {r['shape']} causal={r['causal']} {p['name']}: {p['config']}")


def main():
    ap = argparse.ArgumentParser(description="fatune's stored best attention vs torch SDPA")
    ap.add_argument("--shape", action="append", type=parse_shape, default=[],
                    help="BxHxSxD; repeatable")
    ap.add_argument("--causal", action="store_true")
    ap.add_argument("--dtype", choices=("fp16", "bf16"), default="fp16")
    ap.add_argument("--all", action="store_true", help="every stored best row for this GPU's arch")
    ap.add_argument("--db", default=os.environ.get("FATUNE_DB", "fatune.db"))
    ap.add_argument("--arch", help="sm_XX to read rows for (default: the GPU's)")
    ap.add_argument("--device", default=None, help="device name to prefer among rows")
    ap.add_argument("--json", nargs="?", const="-", help="write results as JSON (to a file, or - )")
    ap.add_argument("--list", action="store_true", help="print the rows and CUBINs, no GPU")
    ap.add_argument("--peers", default="all",
                    help="peers to time next to fatune: all (SDPA flash, cuDNN, efficient and the "
                         "Triton kernel), or a comma list of flash, cudnn, efficient, triton, decode")
    args = ap.parse_args()
    if not args.all and not args.shape:
        ap.error("give --shape BxHxSxD (repeatable) or --all")
    peer_names = None
    if args.peers not in ("", "all"):
        known = {"flash", "cudnn", "efficient", "triton", "decode"} | set(COLUMNS.values())
        bad = [p for p in args.peers.split(",") if p.strip() not in known]
        if bad:
            ap.error(f"--peers: unknown peer '{bad[0]}' (all, or a comma list of "
                     f"flash, cudnn, efficient, triton, decode)")
        peer_names = tuple(dict.fromkeys(COLUMNS.get(p.strip(), p.strip()) for p in args.peers.split(",")))

    cache = cache_dir()
    if args.list:
        arch = args.arch or "sm_90"
        rows = read_best(args.db, arch, args.device or "", set(args.shape), args.causal, args.dtype, args.all)
        for r in rows:
            cubin = os.path.join(cache, "cubin", f"{r['compile_key']}.cubin")
            print(f"{r['b']}x{r['h']}x{r['s']}x{r['d']} causal={r['causal']} {r['dtype']} "
                  f"{r['config']} {r['geometry']} {cubin} "
                  f"{'(present)' if os.path.exists(cubin) else '(MISSING)'}")
        return 0 if rows else 2

    import torch
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import ftkernel as fk
    import peers as pe

    if not torch.cuda.is_available():
        sys.exit("compare_torch: torch sees no CUDA device")
    major, minor = torch.cuda.get_device_capability()
    arch = args.arch or f"sm_{major}{minor}"
    device = args.device or torch.cuda.get_device_name()
    rows = read_best(args.db, arch, device, set(args.shape), args.causal, args.dtype, args.all)
    found = {(r["b"], r["h"], r["s"], r["d"]) for r in rows}
    for s in args.shape:
        if s not in found:
            print(f"compare_torch: no stored best for {'x'.join(map(str, s))} "
                  f"{'causal ' if args.causal else ''}{args.dtype} on {arch}: "
                  f"run `fatune search --shape {'x'.join(map(str, s))}` first", file=sys.stderr)
    if not rows:
        return 2
    torch.manual_seed(int.from_bytes(os.urandom(4), "little"))  # fresh inputs every run
    results = [compare_one(torch, fk, pe, r, cache, peer_names) for r in rows]
    print(f"{device} ({arch}), torch {torch.__version__}; us per call, fatune's timing method")
    print_table(results)
    if args.json:
        text = json.dumps(dict(device=device, arch=arch, torch=torch.__version__, results=results),
                          indent=1)
        if args.json == "-":
            print(text)
        else:
            with open(args.json, "w") as f:
                f.write(text + "\n")
    return 0 if all(r["fatune"].get("ok") for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
