#!/usr/bin/env python3
"""final_rounds.py - how settled the race's final was, from the rows it stored.

    python3 bench/final_rounds.py DB [DB ...] [--min-finalists N] [--by-round]

Each row of a race final logs what every round measured of its finalist and where in the round it
ran ("round 1: 4 of 16, median 193.1 us", tuner/search/pipeline.c). For every final of at least N
finalists (default 8), each finalist that ran two rounds or more gets the ratio of its round-1 median
to the mean of its later rounds' medians, grouped by its place in round 1. A round 1 that ran in the
state the later rounds settled in gives ratios near 1.00 at every place; a GPU still settling after
the heat gives ratios that fall (or rise) with the place. Prints one line per database: the finals
read, then per quarter of the places (first to last) the mean ratio and how many finalists.
With --by-round, every round instead: each finalist that ran the final's first three rounds gets
each round's median over the mean of its three, grouped by its place in that round, a line per
round: the drift within each round, which a finalist's place in the rotation weighs on its time.
"""
import argparse
import re
import sqlite3
import statistics
import sys
import urllib.parse

LINE = re.compile(r"round (\d+): (\d+) of (\d+), median ([0-9.]+) us")


def rounds_of(log):
    """{round: (place from 1, finalists in the round, median us)} from a final row's log."""
    out = {}
    for m in LINE.finditer(log or ""):
        out[int(m.group(1))] = (int(m.group(2)), int(m.group(3)), float(m.group(4)))
    return out


def connect_ro(path):
    """a database opened read-only (a path with ? or # stays a path)"""
    return sqlite3.connect(f"file:{urllib.parse.quote(path)}?mode=ro", uri=True)


def quarter_cells(quarters):
    """ "places Q1 1.024 (63), ..." from four lists of ratios"""
    return ", ".join(f"places Q{i + 1} {statistics.mean(q):.3f} ({len(q)})" if q else f"places Q{i + 1} - (0)"
                     for i, q in enumerate(quarters))


def finals_of(db, min_finalists):
    """each final of at least min_finalists finalists: its rows' rounds (rounds_of)"""
    for (run,) in db.execute("SELECT id FROM runs"):
        logs = [r[0] for r in db.execute(
            "SELECT log FROM trials WHERE run_id = ? AND status = 'ok' AND reason LIKE 'race final%'", (run,))]
        rows = [rounds_of(x) for x in logs]
        rows = [r for r in rows if 1 in r]
        if rows and rows[0][1][1] >= min_finalists:
            yield rows


def analyse_by_round(path, min_finalists, nrounds=3):
    db = connect_ro(path)
    finals, per = 0, {k: [[], [], [], []] for k in range(1, nrounds + 1)}
    for rows in finals_of(db, min_finalists):
        finals += 1
        for r in rows:
            if not all(k in r for k in per):
                continue
            mean = statistics.mean(r[k][2] for k in per)
            for k in per:
                place, n, med = r[k]
                per[k][min(3, (place - 1) * 4 // n)].append(med / mean)
    db.close()
    print(f"{path}: {finals} finals of >= {min_finalists} finalists; each round's median over the finalist's "
          f"mean of rounds 1-{nrounds}:")
    for k, quarters in per.items():
        print(f"  round {k}: " + quarter_cells(quarters))


def analyse(path, min_finalists):
    db = connect_ro(path)
    finals, quarters = 0, [[], [], [], []]
    for rows in finals_of(db, min_finalists):
        finals += 1
        for r in rows:
            later = [v[2] for k, v in r.items() if k > 1]
            if not later:
                continue
            place, n, med = r[1]
            q = min(3, (place - 1) * 4 // n)
            quarters[q].append(med / statistics.mean(later))
    db.close()
    print(f"{path}: {finals} finals of >= {min_finalists} finalists; round 1 over later rounds: " +
          quarter_cells(quarters))


def main():
    ap = argparse.ArgumentParser(description="how settled the race's finals were (their rows' logs)")
    ap.add_argument("db", nargs="+")
    ap.add_argument("--min-finalists", type=int, default=8)
    ap.add_argument("--by-round", action="store_true", help="each round's median over the finalist's mean of "
                    "rounds 1-3, by its place in that round")
    args = ap.parse_args()
    for p in args.db:
        try:
            (analyse_by_round if args.by_round else analyse)(p, args.min_finalists)
        except sqlite3.Error as e:
            print(f"final_rounds: {p}: {e}", file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
