#!/usr/bin/env python3
"""compare_torch.py - fatune's stored best attention kernel against torch SDPA.

For each requested shape (or every stored one with --all) this reads fatune's
best config - the winner across the spaces searched (the mma.sync template's and, on
Hopper, the wgmma one's), as `fatune export` picks it - from the tuning DB (table `best`, opened read-only), loads its CUBIN
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


# what each shipped family's kernels are called, when the space file is not readable here
FAMILY_KERNELS = {"mma": ("fatune_attention_fwd", "fatune_attention_combine"),
                  "wgmma": ("fatune_sm90_fwd", "fatune_sm90_combine")}
# the wgmma family's TMA boxes (tuner/family/family_wgmma.c): 64 query rows per consumer warpgroup,
# BLOCK_N keys for K and V
WGMMA_Q_BOX_ROWS = 64


def space_kernels(space_path, family):
    """The (main, combine) entry points a space names (its template.kernel and
    template.combine_kernel), read with PyYAML where it is installed and the file is
    still there, else the shipped family's names."""
    try:
        import yaml
        with open(space_path) as f:
            t = yaml.safe_load(f).get("template", {})
        return t["kernel"], t.get("combine_kernel")
    except Exception:  # noqa: BLE001 - no yaml, no file, or not a fatune space: the family's names
        return FAMILY_KERNELS.get(family or "mma", FAMILY_KERNELS["mma"])


def read_best(path, arch, device, shapes, causal, dtype, everything):
    """All of this script's access to fatune's DB (opened read-only): per shape (with its KV
    length, KV heads, layout, dtype and causal flag), the winner across spaces as
    `fatune export` picks it: the latest row of each space (preferring this device), then
    the fastest of those. Plain dicts with the launch geometry, the family, the space's
    kernels and every space's time (`spaces`). Exits with a message when the file is
    missing or not a fatune DB."""
    if not os.path.exists(path):
        sys.exit(f"compare_torch: no tuning database at '{path}': run `fatune search` first, "
                 f"or pass --db / set FATUNE_DB")
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    db.row_factory = sqlite3.Row
    cols = {r[1] for r in db.execute("PRAGMA table_info(best)")}
    if not cols:
        sys.exit(f"compare_torch: '{path}' has no 'best' table: is it a fatune database?")
    if "space_name" not in cols:
        sys.exit(f"compare_torch: '{path}' has schema version 1: open it once with this fatune "
                 f"(`fatune query --db {path}`) to upgrade it")
    q = ("SELECT best.*, runs.space_path AS space_path FROM best LEFT JOIN runs ON runs.id = best.run_id "
         "WHERE best.arch = ? AND best.t_median_us IS NOT NULL")
    args = [arch]
    if not everything:
        q += " AND best.dtype = ? AND best.causal = ?"
        args += [dtype, int(causal)]
    q += " ORDER BY (best.device = ?) DESC, best.updated_at DESC"
    rows = db.execute(q, args + [device]).fetchall()
    db.close()
    per_space, order = {}, []
    for r in rows:
        c = dict(b=r["b"], h=r["h"], s=r["s"], d=r["d"], causal=r["causal"], dtype=r["dtype"],
                 h_kv=r["h_kv"] or r["h"], s_kv=r["s_kv"] or r["s"], layout=r["layout"] or "bhsd",
                 config=r["config"], compile_key=r["compile_key"], space=r["space_name"],
                 family=r["family"] or "mma", t_db=r["t_median_us"])
        key = (c["b"], c["h"], c["s"], c["d"], c["h_kv"], c["s_kv"], c["layout"], c["dtype"], c["causal"])
        if not everything and (c["b"], c["h"], c["s"], c["d"]) not in shapes:
            continue
        if (key, c["space"]) in per_space:
            continue  # an older row of this space, or another device's
        values = parse_config(r["config"])
        c["values"] = values
        c["kernels"] = space_kernels(r["space_path"] or "", c["family"])
        c["geometry"] = geometry_of(r, values)
        per_space[(key, c["space"])] = c
        if key not in order:
            order.append(key)
    picked = []
    for key in order:
        cands = [c for (k, _), c in per_space.items() if k == key]
        win = min(cands, key=lambda c: c["t_db"])
        win["spaces"] = {c["space"]: c["t_db"] for c in cands}
        picked.append(win)
    return picked


def geometry_of(r, values):
    """The launch geometry of DB row r (config values parsed): grids, threads, shared
    memory, splits, and the workspace. A candidate whose combine_threads is 0 launches no
    combine kernel (its main kernel merges the splits); a row that predates that rule
    is recognised by its config (COMBINE_IN_KERNEL=1), and its workspace (one 4-byte
    counter per row block: grid.x / NUM_SPLITS x grid.y x grid.z) derived when the
    row does not carry it."""
    keys = r.keys()
    splits = values.get("NUM_SPLITS", 1)
    grid = [r["grid_x"], r["grid_y"], r["grid_z"]]
    g = dict(threads=r["threads"], grid=grid, smem=r["smem_bytes"] or 0, num_splits=splits,
             combine_threads=r["combine_threads"] or 0,
             combine_grid=[r["combine_grid_x"] or 0, r["combine_grid_y"] or 0, r["combine_grid_z"] or 0],
             workspace=(r["workspace_bytes"] or 0) if "workspace_bytes" in keys else 0)
    # the spaces' launch.combine_pdl is their PDL parameter (not stored in the DB)
    # (1 and 2 differ only in where the main kernel releases the combine: both launch it so)
    g["pdl"] = 1 if values.get("PDL", 0) != 0 else 0
    if values.get("COMBINE_IN_KERNEL") == 1 and splits > 1:
        g["combine_threads"], g["combine_grid"] = 0, [0, 0, 0]
        g["workspace"] = max(g["workspace"], 4 * (grid[0] // splits) * grid[1] * grid[2])
    return g


def launcher(fk, torch, row, cubin, q, k, v, o):
    """A no-argument call of the row's kernel(s) over q, k, v, o, as fatune's worker
    launches that family (the wgmma family reads Q, K, V through TMA descriptors); the
    combine kernel only where fatune launches it (fk.launches_combine), the workspace
    allocated and zeroed once (fk.workspace_for)."""
    main, combine = row["kernels"]
    mod = fk.Module(cubin, main, combine if fk.launches_combine(row["geometry"]) else None)
    if row["family"] == "wgmma":
        bn = row["values"]["BLOCK_N"]
        att = fk.AttentionV2(mod, row["geometry"], {"q": WGMMA_Q_BOX_ROWS, "k": bn, "v": bn},
                             q, k, v, o, layout=1 if row["layout"] == "bshd" else 0)
        return att, att
    att = fk.Attention(mod, row["geometry"], row["b"], row["h"], row["s"], row["d"], row["h_kv"], row["s_kv"])
    return att, (lambda: att(q, k, v, o))


def compare_one(torch, fk, pe, row, cache, peer_names, tune_budget=None, heat_ms=0.0):
    b, h, s, d, causal, dtype = row["b"], row["h"], row["s"], row["d"], row["causal"], row["dtype"]
    h_kv, s_kv, layout = row["h_kv"], row["s_kv"], row["layout"]
    dt = {"fp16": torch.float16, "bf16": torch.bfloat16}[dtype]
    shape = f"{b}x{h}x{s}x{d}"
    if (h_kv, s_kv, layout) != (h, s, "bhsd"):
        shape += f"/kv{h_kv}x{s_kv}/{layout}"
    res = dict(shape=shape, causal=causal, dtype=dtype, config=row["config"], space=row["space"],
               family=row["family"], spaces_db_us=row["spaces"],
               gflop=(pe.flops(b, h, s, s_kv, d, causal) if s_kv != s  # the unmasked scores
                      else 4.0 * b * h * s * s * d / (2 if causal else 1)) / 1e9,
               kv_bytes=2 * b * h_kv * s_kv * d * (2 if dtype in ("fp16", "bf16") else 4))
    q, k, v = pe.make_inputs(b, h, s, d, h_kv=h_kv, s_kv=s_kv, dtype=dt, layout=layout)
    ref = pe.reference(q, k, v, causal)
    tol = TOLERANCE[dtype]

    cubin = os.path.join(cache, "cubin", f"{row['compile_key']}.cubin")
    fat = dict(name="fatune")
    try:
        if not row["compile_key"] or not os.path.exists(cubin):
            raise FileNotFoundError(f"CUBIN '{cubin}' is not in fatune's cache: re-run "
                                    f"`fatune search` or set FATUNE_CACHE_DIR")
        if layout == "bshd":
            o = torch.full((b, s, h, d), float("nan"), device="cuda", dtype=dt).permute(0, 2, 1, 3)
        else:
            o = torch.full((b, h, s, d), float("nan"), device="cuda", dtype=dt)
        att, call = launcher(fk, torch, row, cubin, q, k, v, o)
        att.poison_partials()
        call()
        torch.cuda.synchronize()
        fat["rel_l2"], fat["nonfinite"] = fk.rel_l2(o, ref)
        kk, rr = fk.plan_timing(fk.quick_time(call))
        fat.update(fk.time_graph(call, kk, rr, heat_ms=heat_ms))
        fat["ok"] = fat["nonfinite"] == 0 and fat["rel_l2"] <= tol
    except (fk.CudaError, OSError, RuntimeError, KeyError) as e:
        fat.update(ok=False, error=str(e))
    res["fatune"] = fat

    # the peers, on the same inputs, with the same method (bench/peers.py)
    names = peer_names or pe.default_peers(s)
    results = pe.run_peers(q, k, v, bool(causal), names, ref=ref, tune_budget=tune_budget, heat_ms=heat_ms)
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


def print_header():
    print(f"{'shape':>15s} {'c':>1s} {'dtype':>5s} {'fatune':>9s} {'flash':>9s} {'cudnn':>9s} "
          f"{'effic':>9s} {'triton':>9s} {'/flash':>6s} {'/cudnn':>6s} {'/effic':>6s} {'/triton':>7s} "
          f"{'/best':>6s} {'best':>14s} {'TFLOP/s':>7s} {'KV TB/s':>7s} {'rel_l2':>8s}  space: config",
          flush=True)


def print_row(r):
    f = r["fatune"]
    ours = f.get("median")

    def ratio(name, width=6):
        p = r.get(name, {})
        return f"{ours / p['median']:{width}.2f}" if ours and "median" in p else f"{'n/a':>{width}s}"
    tflops = f"{r['gflop'] * 1e3 / ours:7.1f}" if ours else f"{'-':>7s}"
    kvbw = f"{r['kv_bytes'] / ours / 1e6:7.2f}" if ours else f"{'-':>7s}"
    err = f"{f['rel_l2']:8.1e}" if "rel_l2" in f else f"{'-':>8s}"
    best = r.get("best")
    vs = f"{r['vs_best']:6.2f}" if "vs_best" in r else f"{'n/a':>6s}"
    print(f"{r['shape']:>15s} {r['causal']:1d} {r['dtype']:>5s} {cell(f)} {cell(r.get('flash', {}))} "
          f"{cell(r.get('cudnn', {}))} {cell(r.get('efficient', {}))} {cell(r.get('triton', r.get('decode', {})))} "
          f"{ratio('flash')} {ratio('cudnn')} {ratio('efficient')} {ratio('triton' if 'triton' in r else 'decode', 7)} {vs} "
          f"{(best['name'] if best else '-'):>14s} {tflops} {kvbw} {err}  {r['space']}: {r['config']}", flush=True)


def print_notes(results):
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


def precompile_peers(torch, pe, rows, peer_names, budget_s):
    """Compiles the Triton peers' tuning configs for every row ahead, on a process pool
    (Triton compiles one kernel at a time per process); tuning is never timed either way."""
    cases = [dict(shape=(r["b"], r["h"], r["s"], r["d"]), dtype=r["dtype"], layout=r["layout"],
                  h_kv=r["h_kv"], s_kv=r["s_kv"], causal=bool(r["causal"]),
                  peers=peer_names or pe.default_peers(r["s"])) for r in rows]
    import time
    done, failed, skipped, wall = pe.precompile(pe.case_jobs(cases, []),
                                                deadline=time.time() + budget_s if budget_s else None)
    print(f"compare_torch: Triton peers compiled ahead: {done} ok, {failed} failed, {skipped} not reached, "
          f"{wall:.1f} s", file=sys.stderr, flush=True)


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
    ap.add_argument("--tune-budget", type=float, default=0,
                    help="seconds per Triton peer tuning; configs after it are skipped (default: none)")
    ap.add_argument("--compile-budget", type=float, default=0,
                    help="seconds for compiling the Triton peers ahead (default: none; 0 with --no-precompile)")
    ap.add_argument("--ceiling", action="store_true",
                    help="also time a 1 GiB device-to-device copy (the bandwidth target of decode shapes)")
    ap.add_argument("--no-precompile", action="store_true", help="compile the Triton peers on first use")
    ap.add_argument("--heat-ms", type=float, default=0.0, metavar="MS",
                    help="run every timed kernel (fatune's and each peer's) back to back for at least MS "
                         "before its samples, so that heavy kernels are timed at the clock the GPU's power "
                         "cap leaves, as the race's heated final ranks them (default 0: the 20 ms warm-up)")
    ap.add_argument("--peers", default="all",
                    help="peers to time next to fatune: all (SDPA flash, cuDNN, efficient and the "
                         "Triton kernel), or a comma list of flash, cudnn, efficient, triton, decode")
    args = ap.parse_args()
    if not args.all and not args.shape:
        ap.error("give --shape BxHxSxD (repeatable) or --all")
    if not 0 <= args.heat_ms <= 10000:
        ap.error(f"--heat-ms {args.heat_ms:g}: give 0..10000 ms")
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
    # The peers import torch._dynamo lazily, inside a timing. Import it here, before fatune's kernels load
    # through ctypes: a broken environment then shows once, with its cause. (The "source code string cannot
    # contain null bytes" of 2026-11-27 and 2026-12-01 was not the environment: ftkernel's PDL launch wrote
    # into the interpreter's empty bytes, bench/launch_config.py.)
    try:
        import torch._dynamo  # noqa: F401
    except Exception as e:  # noqa: BLE001 - whatever breaks the import, say it and go on with fatune's rows
        print(f"compare_torch: torch._dynamo does not import before any kernel ran ({type(e).__name__}: {e}): "
              f"the SDPA and Triton peers will fail; check the Python environment", file=sys.stderr, flush=True)
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
    if not args.no_precompile:
        precompile_peers(torch, pe, rows, peer_names, args.compile_budget)
    heat = f", each kernel heated {args.heat_ms:g} ms first" if args.heat_ms > 0 else ""
    print(f"{device} ({arch}), torch {torch.__version__}; us per call, fatune's timing method{heat}", flush=True)
    ceiling = None
    if args.ceiling:
        ceiling = pe.copy_ceiling()
        print(f"copy ceiling: {ceiling['tb_per_s']:.3f} TB/s (1 GiB device-to-device copy, bytes read + "
              f"written, median of {ceiling['calls']} calls per sample)", flush=True)
    print_header()
    results = []

    def save():
        if not args.json:
            return
        text = json.dumps(dict(device=device, arch=arch, torch=torch.__version__, copy_ceiling=ceiling,
                               heat_ms=args.heat_ms, results=results), indent=1)
        if args.json == "-":
            print(text)
        else:
            with open(args.json, "w") as f:
                f.write(text + "\n")
    for r in rows:
        results.append(compare_one(torch, fk, pe, r, cache, peer_names, args.tune_budget or None, args.heat_ms))
        print_row(results[-1])
        if args.json != "-":
            save()  # as it goes: a run cut short keeps what it measured
    print_notes(results)
    if args.json == "-":
        save()
    return 0 if all(r["fatune"].get("ok") for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
