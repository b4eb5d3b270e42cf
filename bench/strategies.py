#!/usr/bin/env python3
"""strategies.py - how many evaluations each search strategy needs to come within 5%
of the exhaustive optimum, measured by replaying recorded trials (no GPU).

For every (arch, shape, dtype, causal) recorded in --recorded, runs
`fatune search --replay` once per strategy and seed with one compile thread, so
the order in which trials are stored is the order the strategy evaluated them,
and reports the number of evaluations until the first trial within 5% of the
best recorded time.

    python3 bench/strategies.py --fatune build/fatune --recorded rec.db [--seeds 20]
"""
import argparse, json, os, sqlite3, statistics, subprocess, sys, tempfile

def targets(rec):
    con = sqlite3.connect(f"file:{rec}?mode=ro", uri=True)
    rows = con.execute("""SELECT DISTINCT r.arch, r.b, r.h, r.s, r.d, r.dtype, r.causal
                          FROM runs r JOIN trials t ON t.run_id = r.id
                          WHERE t.status = 'ok' AND r.mode = 'timed' ORDER BY 1,2,3,4,5,6,7""").fetchall()
    con.close()
    return rows

def evals_to_within(fatune, rec, t, strategy, seed, tol):
    arch, b, h, s, d, dtype, causal = t
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "replay.db")
        cmd = [fatune, "search", "--replay", rec, "--arch", arch, "--shape", f"{b}x{h}x{s}x{d}",
               "--dtype", dtype, "--strategy", strategy, "--seed", str(seed), "--jobs", "1",
               "--db", db, "--quiet", "--json"]
        if causal:
            cmd.append("--causal")
        out = subprocess.run(cmd, capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"strategies: {' '.join(cmd)} failed: {out.stderr.strip()}")
        con = sqlite3.connect(db)
        seq = con.execute("""SELECT status, t_median_us FROM trials
                             WHERE status NOT IN ('rejected_constraint', 'rejected_smem')
                             ORDER BY id""").fetchall()
        con.close()
    best = min(m for st, m in seq if st == "ok")
    for i, (st, m) in enumerate(seq, 1):
        if st == "ok" and m <= best * (1 + tol):
            return i, len(seq)
    return None, len(seq)

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fatune", default="build/fatune")
    ap.add_argument("--recorded", required=True, help="a tuning DB with timed searches")
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--tolerance", type=float, default=0.05)
    ap.add_argument("--json", help="also write the results here")
    a = ap.parse_args()
    results = []
    print(f"evaluations until the first trial within {a.tolerance:.0%} of the best recorded "
          f"(guided and random: over {a.seeds} seeds)")
    print(f"{'arch':6} {'shape':14} {'dtype':5} {'causal':6} {'feasible':>8}  {'model':>5}  "
          f"{'guided: median':>14} {'mean':>6} {'p90':>5}  {'random: median':>14} {'mean':>6} {'p90':>5}")
    for t in targets(a.recorded):
        model, n = evals_to_within(a.fatune, a.recorded, t, "model", 1, a.tolerance)
        row = dict(arch=t[0], shape=f"{t[1]}x{t[2]}x{t[3]}x{t[4]}", dtype=t[5], causal=t[6],
                   feasible=n, model=model)
        for strat in ("guided", "random"):
            e = sorted(evals_to_within(a.fatune, a.recorded, t, strat, k, a.tolerance)[0]
                       for k in range(1, a.seeds + 1))
            row[strat] = dict(median=statistics.median(e), mean=round(statistics.mean(e), 1),
                              p90=e[int(0.9 * (len(e) - 1))])
        results.append(row)
        g, r = row["guided"], row["random"]
        print(f"{row['arch']:6} {row['shape']:14} {row['dtype']:5} {row['causal']:6} {n:8}  {model:5}  "
              f"{g['median']:6.1f} {g['mean']:6.1f} {g['p90']:5}  {r['median']:6.1f} {r['mean']:6.1f} {r['p90']:5}")
    if a.json:
        json.dump(results, open(a.json, "w"), indent=1)

if __name__ == "__main__":
    main()
