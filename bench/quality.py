#!/usr/bin/env python3
"""quality.py - issue 16: a campaign's bests against an exhaustive pass's, unit by unit.

    python3 bench/quality.py RACE.json EXHAUSTIVE.json RACE.db EXHAUSTIVE.db [--gpu N] [--fatune PATH]

RACE.json and EXHAUSTIVE.json are `fatune search --campaign ... --json` outputs (one line per unit),
RACE.db and EXHAUSTIVE.db their databases. Where the two bests differ, both are timed again
interleaved in one worker (`fatune bench --best-from RACE.db --best-from EXHAUSTIVE.db`, 40 samples
over 10 rounds, on GPU N), which takes the two passes' own noise (+-1.5-4 %) out of the ratio; the
same config counts 1.000. Each such pair is timed --repeats times (default 3), each a new worker,
the two bests' order swapped every other time; the ratio is the median and the table shows the
range, the check's own repeatability. Prints one row per unit, then `units compared N of M; W
within 1 %; worst R`. Under a unit over 1.01 (a miss) it prints where each of the two bests stood in
the race's database: not evaluated, cut after the quick pass, measured in full, or a finalist and
what each final round measured of it, so a miss can be told apart (transfer that never reached the
config, a quick pass that cut it, a final that ranked it behind). Used by tools/device-session.sh
throughput-quality and bench/anchor_ab.sh.
"""
import argparse
import json
import os
import sqlite3
import subprocess
import sys

from final_rounds import connect_ro, rounds_of  # a final row's log, read-only databases


def bests(path):
    out = {}
    for line in open(path):
        r = json.loads(line) if line.strip().startswith("{") else {}
        if "best" in r:
            out[(r["shape"], r["causal"], r["dtype"])] = (r["best"], r["evaluated"])
    return out


def interleaved(args, shape, causal, dtype, swap):
    """the race's best over the exhaustive best, timed interleaved in one worker"""
    dbs = [args.race_db, args.exhaustive_db][::-1 if swap else 1]
    cmd = [args.fatune, "bench", "--shape", shape, "--dtype", dtype, "--best-from", dbs[0],
           "--best-from", dbs[1], "--samples", "40", "--rounds", "10", "--json"]
    cmd += ["--causal"] if causal else []
    p = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "CUDA_VISIBLE_DEVICES": args.gpu})
    try:
        a, b = (json.loads(line) for line in p.stdout.splitlines())
        return b["t_median_us"] / a["t_median_us"] if swap else a["t_median_us"] / b["t_median_us"]
    except (ValueError, KeyError, TypeError):
        print(f"bench failed: {(p.stderr or p.stdout).strip()[:300]}", file=sys.stderr)
        return float("nan")


def shape_filter(shape):
    """SQL conditions on runs (r) and their values for a unit's shape, e.g. '2x40x1x128,kv_heads=8,
    kv_len=8192,layout=bshd' or '1x8x512x64'."""
    head, *opts = shape.split(",")
    b, h, s, d = (int(x) for x in head.split("x"))
    kv = dict(o.split("=", 1) for o in opts if "=" in o)
    return ("r.b = ? AND r.h = ? AND r.s = ? AND r.d = ? AND coalesce(r.s_kv, r.s) = ? AND "
            "coalesce(r.h_kv, r.h) = ? AND coalesce(r.layout, 'bhsd') = ?",
            [b, h, s, d, int(kv.get("kv_len", s)), int(kv.get("kv_heads", h)), kv.get("layout", "bhsd")])


def standing(db_path, key, config):
    """where a config stood in a database's search of the unit: one phrase per trial row"""
    where, vals = shape_filter(key[0])
    db = connect_ro(db_path)
    try:
        rows = db.execute(
            "SELECT t.status, t.reason, t.t_median_us, t.samples, t.log FROM trials t JOIN runs r ON t.run_id = r.id "
            f"WHERE {where} AND r.dtype = ? AND r.causal = ? AND t.config = ? ORDER BY t.id",
            vals + [key[2], key[1], config]).fetchall()
    finally:
        db.close()
    out = []
    for status, reason, t, n, log in rows:
        rounds = rounds_of(log)
        if rounds:
            out.append("final " + ", ".join(f"r{r} {p}/{m} {u:.2f}" for r, (p, m, u) in sorted(rounds.items())))
        elif status in ("ok", "cut") and t is not None:
            out.append(f"{status} {t:.2f} us ({n} samples{', ' + reason[:80] if reason else ''})")
        else:
            out.append(f"{status}{' (' + reason[:80] + ')' if reason else ''}")
    return "; ".join(out) if out else "not evaluated"


def repeated(args, key):
    """the median ratio of args.repeats interleaved timings, and their range"""
    rs = sorted(r for r in (interleaved(args, *key, i % 2 == 1) for i in range(args.repeats)) if r == r)
    if not rs:
        return float("nan"), ""
    return rs[len(rs) // 2] if len(rs) % 2 else sum(rs[len(rs) // 2 - 1:len(rs) // 2 + 1]) / 2, \
        f"{rs[0]:.3f}-{rs[-1]:.3f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("race_json")
    ap.add_argument("exhaustive_json")
    ap.add_argument("race_db")
    ap.add_argument("exhaustive_db")
    ap.add_argument("--gpu", default="0", help="the GPU that times the pairs (default 0)")
    ap.add_argument("--fatune", default="build/fatune")
    ap.add_argument("--repeats", type=int, default=3, help="interleaved timings of a differing pair (default 3)")
    args = ap.parse_args()
    if args.repeats < 1:
        ap.error(f"--repeats {args.repeats}: give 1 or more timings of a differing pair")
    race, ex = bests(args.race_json), bests(args.exhaustive_json)
    worst, within, n, untimed = 0.0, 0, 0, 0
    print(f"{'shape':<22}{'c':>2}{'race us':>10}{'exh us':>10}{'pass ratio':>11}{'interleaved':>12}"
          f"{'range':>13}{'eval race':>10}{'eval exh':>9}")
    for k in sorted(ex):
        if k not in race:
            continue
        (rb, re_), (eb, ee) = race[k], ex[k]
        same = rb["config"] == eb["config"] and rb["space"] == eb["space"]
        ratio, spread = (1.0, "") if same else repeated(args, k)
        n += 1
        within += ratio <= 1.01
        untimed += ratio != ratio
        worst = max(worst, ratio) if ratio == ratio else worst
        print(f"{k[0]:<22}{k[1]:>2}{rb['t_median_us']:>10.4f}{eb['t_median_us']:>10.4f}"
              f"{rb['t_median_us'] / eb['t_median_us']:>11.3f}{ratio:>12.3f}{spread:>13}{re_:>10}{ee:>9}")
        if ratio == ratio and ratio > 1.01:
            try:
                print(f"    in the race: exhaustive best {standing(args.race_db, k, eb['config'])}")
                print(f"    in the race: its own best {standing(args.race_db, k, rb['config'])}")
            except (sqlite3.Error, ValueError) as e:
                print(f"    in the race: not read ({e})")
    print(f"units compared {n} of {len(ex)}; {within} within 1 %; worst transfer/exhaustive {worst:.3f} "
          f"(interleaved in one worker, the median of {args.repeats}; the same config counts 1.000; target <= 1.01)"
          + (f"; {untimed} pairs could not be timed (bench failed)" if untimed else ""))


if __name__ == "__main__":
    main()
