#!/usr/bin/env python3
"""strategies.py - how many evaluations each search strategy needs to come within 5%
of the exhaustive optimum, measured by replaying recorded trials (no GPU).

For every (arch, shape, dtype, causal) recorded in --recorded, runs
`fatune search --replay` once per strategy and seed with one compile thread, so
the order in which trials are stored is the order the strategy evaluated them,
and reports the number of evaluations until the first trial within 5% of the
best recorded time.

With --transfer, it also replays the transfer strategy the way a campaign
runs it, in two ways: leave-one-out (every other target tuned first, then
this one with transfer) and in campaign order (the targets tuned one after
the other with transfer, as `fatune search --campaign ... --strategy transfer`
does: the first has no neighbour). For each it reports the evaluations to
within 5%, the evaluations spent until the strategy stopped, and the final
quality (best found / exhaustive optimum), beside guided and random.

    python3 bench/strategies.py --fatune build/fatune --recorded rec.db [--seeds 20] [--transfer]
                                [--space search_spaces/attention_sm90.yaml]
"""
import argparse, json, os, shutil, sqlite3, statistics, subprocess, sys, tempfile

# the template replayed: by default the shipped mma space's ("attention"); --space FILE
# replays another space of the recording (e.g. the wgmma one a Hopper recording also holds)
TEMPLATE = "attention"
SPACE_ARGS = []


def template_of(space):
    """The base name of the template file a space file names (what runs.template_name holds)."""
    import re
    m = re.search(r"file:\s*([^,}\s]+)", open(space).read())
    if not m:
        sys.exit(f"strategies: '{space}' names no template file")
    return os.path.splitext(os.path.basename(m.group(1)))[0]

def targets(rec):
    con = sqlite3.connect(f"file:{rec}?mode=ro", uri=True)
    rows = con.execute("""SELECT DISTINCT r.arch, r.b, r.h, r.s, r.d, r.dtype, r.causal
                          FROM runs r JOIN trials t ON t.run_id = r.id
                          WHERE t.status = 'ok' AND r.mode = 'timed' AND r.template_name = ?
                          ORDER BY 1,2,3,4,5,6,7""", (TEMPLATE,)).fetchall()
    con.close()
    return rows

def evals_to_within(fatune, rec, t, strategy, seed, tol):
    arch, b, h, s, d, dtype, causal = t
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "replay.db")
        cmd = [fatune, "search", "--replay", rec, "--arch", arch, "--shape", f"{b}x{h}x{s}x{d}",
               "--dtype", dtype, "--strategy", strategy, "--seed", str(seed), "--jobs", "1",
               "--db", db, "--quiet", "--json"] + SPACE_ARGS
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

def shape_text(t):
    return f"{t[1]}x{t[2]}x{t[3]}x{t[4]}"

def replay(fatune, rec, arch, db, strategy, extra):
    cmd = [fatune, "search", "--replay", rec, "--arch", arch, "--strategy", strategy, "--seed", "1",
           "--jobs", "1", "--db", db, "--quiet", "--json"] + SPACE_ARGS + extra
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"strategies: {' '.join(cmd)} failed: {out.stderr.strip()}")

def run_sequence(db, t):
    """The evaluations of the latest run of target t in db, in order."""
    con = sqlite3.connect(db)
    arch, b, h, s, d, dtype, causal = t
    (run,) = con.execute("SELECT max(id) FROM runs WHERE arch=? AND b=? AND h=? AND s=? AND d=? "
                         "AND dtype=? AND causal=?", t).fetchone()
    seq = con.execute("""SELECT status, t_median_us FROM trials WHERE run_id = ?
                         AND status NOT IN ('rejected_constraint', 'rejected_smem') ORDER BY id""",
                      (run,)).fetchall()
    con.close()
    return seq

def score(seq, optimum, tol):
    """(evaluations to within tol of optimum or None, evaluations spent, best found / optimum)"""
    first = next((i for i, (st, m) in enumerate(seq, 1) if st == "ok" and m <= optimum * (1 + tol)), None)
    found = min((m for st, m in seq if st == "ok"), default=float("inf"))
    return first, len(seq), found / optimum

def campaign_file(tmp, ts):
    path = os.path.join(tmp, "campaign.yaml")
    with open(path, "w") as f:
        f.write("fatune_campaign: 1\nname: replay\nshapes:\n")
        for t in ts:
            f.write(f"  - {{shape: {shape_text(t)}, dtype: {t[5]}, causal: [{t[6]}]}}\n")
    return path

def optimum(rec, t):
    con = sqlite3.connect(f"file:{rec}?mode=ro", uri=True)
    (best,) = con.execute("""SELECT min(t.t_median_us) FROM trials t JOIN runs r ON r.id = t.run_id
                             WHERE t.status = 'ok' AND r.arch=? AND r.b=? AND r.h=? AND r.s=? AND r.d=?
                             AND r.dtype=? AND r.causal=? AND r.template_name=?""",
                          tuple(t) + (TEMPLATE,)).fetchone()
    con.close()
    return best

def transfer(fatune, rec, ts, tol):
    """{target: {"loo": score, "campaign": score}} for the transfer strategy."""
    out = {t: {} for t in ts}
    with tempfile.TemporaryDirectory() as tmp:
        by_arch = {}
        for t in ts:
            by_arch.setdefault(t[0], []).append(t)
        for arch, group in by_arch.items():
            camp = campaign_file(tmp, group)
            db = os.path.join(tmp, f"campaign-{arch}.db")
            replay(fatune, rec, arch, db, "transfer", ["--campaign", camp])
            for t in group:
                out[t]["campaign"] = score(run_sequence(db, t), optimum(rec, t), tol)
            base = os.path.join(tmp, f"all-{arch}.db")
            replay(fatune, rec, arch, base, "exhaustive", ["--campaign", camp])
            for t in group:
                db = os.path.join(tmp, "loo.db")
                shutil.copy(base, db)
                con = sqlite3.connect(db)
                key = t[1:]
                con.execute("DELETE FROM best WHERE b=? AND h=? AND s=? AND d=? AND dtype=? AND causal=?", key)
                con.execute("""DELETE FROM trials WHERE run_id IN (SELECT id FROM runs WHERE b=? AND h=?
                               AND s=? AND d=? AND dtype=? AND causal=?)""", key)
                con.commit()
                con.close()
                extra = ["--shape", shape_text(t), "--dtype", t[5]] + (["--causal"] if t[6] else [])
                replay(fatune, rec, arch, db, "transfer", extra)
                out[t]["loo"] = score(run_sequence(db, t), optimum(rec, t), tol)
                os.remove(db)
    return out

def report_transfer(results, tf, tol):
    print(f"\ntransfer replayed as a campaign: evaluations to within {tol:.0%} / evaluations until it "
          f"stopped / final best vs the optimum")
    print(f"{'shape':14} {'dtype':5} {'causal':6} {'leave-one-out':>22} {'campaign order':>22} "
          f"{'guided med':>10} {'random med':>10}")
    tot = dict(loo=0, camp=0, guided=0, random=0)
    worst = dict(loo=1.0, camp=1.0)
    for row, t in zip(results, tf):
        loo, camp = tf[t]["loo"], tf[t]["campaign"]
        row["transfer"] = dict(loo=dict(to_within=loo[0], spent=loo[1], quality=round(loo[2], 4)),
                               campaign=dict(to_within=camp[0], spent=camp[1], quality=round(camp[2], 4)))
        fmt = lambda x: f"{x[0] if x[0] else '-':>4} / {x[1]:4} / {x[2]:5.3f}"
        print(f"{row['shape']:14} {row['dtype']:5} {row['causal']:6} {fmt(loo):>22} {fmt(camp):>22} "
              f"{row['guided']['median']:10.1f} {row['random']['median']:10.1f}")
        tot["loo"] += loo[0] or loo[1]
        tot["camp"] += camp[0] or camp[1]
        tot["guided"] += row["guided"]["median"]
        tot["random"] += row["random"]["median"]
        worst["loo"] = max(worst["loo"], loo[2])
        worst["camp"] = max(worst["camp"], camp[2])
    n = len(results)
    print(f"mean evaluations to within {tol:.0%}: transfer leave-one-out {tot['loo']/n:.1f}, campaign order "
          f"{tot['camp']/n:.1f}, guided {tot['guided']/n:.1f}, random {tot['random']/n:.1f} "
          f"(random / transfer: {tot['random']/max(tot['loo'],1):.1f}x leave-one-out, "
          f"{tot['random']/max(tot['camp'],1):.1f}x campaign order)")
    print(f"worst final quality of transfer: {worst['loo']:.3f} leave-one-out, {worst['camp']:.3f} campaign "
          f"order (guided and random without a budget: 1.000)")
    return dict(mean_loo=tot["loo"]/n, mean_campaign=tot["camp"]/n, mean_guided=tot["guided"]/n,
                mean_random=tot["random"]/n, worst_quality_loo=worst["loo"], worst_quality_campaign=worst["camp"])

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fatune", default="build/fatune")
    ap.add_argument("--recorded", required=True, help="a tuning DB with timed searches")
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--tolerance", type=float, default=0.05)
    ap.add_argument("--json", help="also write the results here")
    ap.add_argument("--transfer", action="store_true",
                    help="also replay the transfer strategy as a campaign (leave-one-out and in order)")
    ap.add_argument("--space", help="replay this space's trials (default: the shipped mma space)")
    a = ap.parse_args()
    global TEMPLATE, SPACE_ARGS
    if a.space:
        TEMPLATE, SPACE_ARGS = template_of(a.space), ["--space", a.space]
    results = []
    print(f"evaluations until the first trial within {a.tolerance:.0%} of the best recorded "
          f"(guided and random: over {a.seeds} seeds)")
    print(f"{'arch':6} {'shape':14} {'dtype':5} {'causal':6} {'feasible':>8}  {'model':>5}  "
          f"{'guided: median':>14} {'mean':>6} {'p90':>5}  {'random: median':>14} {'mean':>6} {'p90':>5}")
    ts = targets(a.recorded)
    for t in ts:
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
    summary = None
    if a.transfer:
        summary = report_transfer(results, transfer(a.fatune, a.recorded, ts, a.tolerance), a.tolerance)
    if a.json:
        json.dump(dict(targets=results, transfer=summary) if a.transfer else results,
                  open(a.json, "w"), indent=1)

if __name__ == "__main__":
    main()
