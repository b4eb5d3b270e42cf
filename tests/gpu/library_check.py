"""library_check.py - the Python package of a fatune library against torch SDPA (tests/gpu/013).

usage: library_check.py DB ARCH FATUNE OVERHEAD_BIN UNTUNED_SHAPE...
The library holds every arch and space of DB. For every unit DB tuned on ARCH (the GPU's, any space: the plan
must be fatune's winner across spaces), and for each UNTUNED_SHAPE (BxHxSxD[,kv_heads=N][,kv_len=N]
[,layout=L]:dtype:causal), runs fatune_attention.attention (installed by pip) on random inputs, compares with
an fp32 SDPA reference (bottom-right causal mask, GQA heads repeated) and prints one line per unit: max abs
error, relative L2 error, the library's GPU and host times against bare cuLaunchKernel of the same launches
(OVERHEAD_BIN, library_overhead.c: gpu_us is timed as the worker times, a CUDA graph of 20 calls) and
fatune's own timing of the config (`fatune bench --best --json`), with the issue's targets as reported
verdicts: time_ok (gpu_us within 2 % or 0.5 us of fatune_us) and overhead_ok (overhead_us <= 1 us). Exits 1 on a wrong result, a unit whose
plan is not its own tuned entry, an untuned shape run as tuned, or input errors that do not raise.
"""
import json
import re
import sqlite3
import subprocess
import sys

import torch
import fatune_attention as fa

TOL = {"fp16": 2e-3, "bf16": 1e-2}  # relative L2, the worker's tolerances (tuner/run/verify.c)


def parse(text):
    m = re.match(r"(\d+)x(\d+)x(\d+)x(\d+)((?:,\w+=\w+)*)$", text)
    b, h, s, d = map(int, m.groups()[:4])
    opt = dict(kv.split("=") for kv in m.group(5).split(",")[1:])
    return b, h, int(opt.get("kv_heads", h)), s, int(opt.get("kv_len", s)), d, opt.get("layout", "bhsd")


def shape_text(b, h, hkv, s, skv, d, layout):
    t = f"{b}x{h}x{s}x{d}"
    if hkv != h:
        t += f",kv_heads={hkv}"
    if skv != s:
        t += f",kv_len={skv}"
    return t + (",layout=bshd" if layout == "bshd" else "")


def reference(q, k, v, causal):
    """fp32 SDPA on [B,H,S,D] tensors, bottom-right causal, KV heads repeated."""
    q, k, v = (t.float() for t in (q, k, v))
    g = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(g, dim=1), v.repeat_interleave(g, dim=1)
    mask = None
    if causal:
        sq, skv = q.shape[2], k.shape[2]
        mask = torch.ones(sq, skv, dtype=torch.bool, device=q.device).tril(diagonal=skv - sq)
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)


def run_unit(b, h, hkv, s, skv, d, layout, dtype, causal, want_tuned, fatune, overhead_bin, arch):
    dt = torch.float16 if dtype == "fp16" else torch.bfloat16
    shp = (lambda hh, ss: (b, hh, ss, d)) if layout == "bhsd" else (lambda hh, ss: (b, ss, hh, d))
    torch.manual_seed(1)
    q = torch.randn(*shp(h, s), dtype=dt, device="cuda")
    k = torch.randn(*shp(hkv, skv), dtype=dt, device="cuda")
    v = torch.randn(*shp(hkv, skv), dtype=dt, device="cuda")
    p = fa.plan(q, k, v, causal=causal, layout=layout)
    o = fa.attention(q, k, v, causal=causal, layout=layout)
    torch.cuda.synchronize()
    tr = (lambda t: t) if layout == "bhsd" else (lambda t: t.transpose(1, 2))
    ref = reference(tr(q), tr(k), tr(v), causal)
    out = tr(o).float()
    err = (out - ref).abs().max().item()
    rel = ((out - ref).norm() / ref.norm()).item()
    text = shape_text(b, h, hkv, s, skv, d, layout)
    line = {"shape": text, "dtype": dtype, "causal": int(causal), "tuned": p["tuned"], "arch": p["arch"],
            "space": p["space"], "config": p["config"], "max_abs_err": err, "rel_l2": rel}
    ok = rel < TOL[dtype] and out.isfinite().all().item() and p["tuned"] == want_tuned
    ok = ok and p["arch"].rstrip("a") == arch  # a part of the GPU's own arch, never another's
    ov = subprocess.run([overhead_bin, str(b), str(h), str(hkv), str(s), str(skv), str(d), str(int(causal)),
                         str(int(dtype == "bf16")), str(int(layout == "bshd"))], capture_output=True, text=True)
    if ov.returncode == 0:
        line.update(json.loads(ov.stdout))
    else:
        line["overhead_error"] = ov.stderr.strip()[-200:]
        ok = False
    if want_tuned:
        bench = subprocess.run([fatune, "bench", "--shape", text, "--dtype", dtype, "--best", "--json"] +
                               (["--causal"] if causal else []), capture_output=True, text=True)
        if bench.returncode == 0:
            bj = json.loads(bench.stdout)
            line["fatune_us"] = bj["t_median_us"]
            line["same_config"] = bj["config"] == p["config"]
            ok = ok and line["same_config"]
        else:
            line["bench_error"] = bench.stderr.strip()[-200:]
    if "gpu_us" in line and "fatune_us" in line:
        gap = line["gpu_us"] - line["fatune_us"]
        line["time_ok"] = gap <= max(0.02 * line["fatune_us"], 0.5)
    if "overhead_us" in line:
        line["overhead_ok"] = line["overhead_us"] <= 1.0
    line["ok"] = bool(ok)
    print(json.dumps(line), flush=True)
    return ok


def main():
    db, arch, fatune, overhead_bin = sys.argv[1:5]
    con = sqlite3.connect(db)
    rows = con.execute("SELECT DISTINCT b, h, h_kv, s, s_kv, d, layout, dtype, causal FROM best WHERE arch = ?",
                       (arch,)).fetchall()
    good = True
    for b, h, hkv, s, skv, d, layout, dtype, causal in rows:
        good &= run_unit(b, h, hkv, s, skv, d, layout, dtype, bool(causal), True, fatune, overhead_bin, arch)
    for u in sys.argv[5:]:
        text, dtype, causal = u.split(":")
        b, h, hkv, s, skv, d, layout = parse(text)
        try:
            good &= run_unit(b, h, hkv, s, skv, d, layout, dtype, causal == "1", False, fatune, overhead_bin, arch)
        except fa.FatuneError as e:  # no valid entry of that kind in this space: said clearly, not run
            print(json.dumps({"shape": text, "refused": str(e)}))
    # the other arches' rows: planned for their compute capability (no such GPU here), each its own tuned entry
    others = con.execute("SELECT DISTINCT arch, b, h, h_kv, s, s_kv, d, layout, dtype, causal FROM best WHERE arch != ?",
                         (arch,)).fetchall()
    for other, b, h, hkv, s, skv, d, layout, dtype, causal in others:
        cc = int(other[3:].rstrip("a"))
        shp = (lambda hh, ss: (b, hh, ss, d)) if layout == "bhsd" else (lambda hh, ss: (b, ss, hh, d))
        dt = torch.float16 if dtype == "fp16" else torch.bfloat16
        q = torch.empty(*shp(h, s), dtype=dt, device="cuda")
        kv = torch.empty(*shp(hkv, skv), dtype=dt, device="cuda")
        p = fa.plan(q, kv, kv, causal=bool(causal), layout=layout, cc=cc)
        try:
            here = fa.plan(q, kv, kv, causal=bool(causal), layout=layout)
        except fa.FatuneError as e:  # nothing of this head dim, dtype or kind tuned on this GPU's arch
            here = {"arch": arch, "refused": str(e)}
        ok = p["arch"] == other and p["tuned"] and p["cc"] == cc and here["arch"].rstrip("a") == arch
        print(json.dumps({"shape": shape_text(b, h, hkv, s, skv, d, layout), "planned_for": other, "plan_arch": p["arch"],
                          "tuned": p["tuned"], "here_arch": here["arch"], "ok": bool(ok)}))
        good &= bool(ok)
    # strict mode and bad input raise, with the library's message
    q = torch.randn(1, 8, 700, 64, dtype=torch.float16, device="cuda")
    # (a library tuned for other head dims refuses the strict call for that reason instead)
    for bad, want in ((lambda: fa.attention(q, q, q, strict=True), ("not tuned", "no config was tuned")),
                      (lambda: fa.attention(q.cpu(), q, q), ("CUDA tensors",)),
                      (lambda: fa.attention(q.float(), q, q), ("float16",)),
                      (lambda: fa.attention(q[0], q, q), ("dimensions",))):
        try:
            bad()
            print(f"no error for a call that should raise ({want})")
            good = False
        except (fa.FatuneError, ValueError) as e:
            if not any(w in str(e) for w in want):
                good = False
            print(f"raised as it should: {e}")
    sys.exit(0 if good else 1)


main()
