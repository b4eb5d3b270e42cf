#!/usr/bin/env python3
"""final_rounds.py - how settled the race's final was, from the rows it stored.

    python3 bench/final_rounds.py DB [DB ...] [--min-finalists N]

Each row of a race final logs what every round measured of its finalist and where in the round it
ran ("round 1: 4 of 16, median 193.1 us", tuner/search/pipeline.c). For every final of at least N
finalists (default 8), each finalist that ran two rounds or more gets the ratio of its round-1 median
to the mean of its later rounds' medians, grouped by its place in round 1. A round 1 that ran in the
state the later rounds settled in gives ratios near 1.00 at every place; a GPU still settling after
the heat gives ratios that fall (or rise) with the place. Prints one line per database: the finals
read, then per quarter of the places (first to last) the mean ratio and how many finalists.
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


def analyse(path, min_finalists):
    db = connect_ro(path)
    finals, quarters = 0, [[], [], [], []]
    for (run,) in db.execute("SELECT id FROM runs"):
        logs = [r[0] for r in db.execute(
            "SELECT log FROM trials WHERE run_id = ? AND status = 'ok' AND reason LIKE 'race final%'", (run,))]
        rows = [rounds_of(x) for x in logs]
        rows = [r for r in rows if 1 in r]
        if not rows or rows[0][1][1] < min_finalists:
            continue
        finals += 1
        for r in rows:
            later = [v[2] for k, v in r.items() if k > 1]
            if not later:
                continue
            place, n, med = r[1]
            q = min(3, (place - 1) * 4 // n)
            quarters[q].append(med / statistics.mean(later))
    db.close()
    cells = []
    for i, q in enumerate(quarters):
        cells.append(f"places Q{i + 1} {statistics.mean(q):.3f} ({len(q)})" if q else f"places Q{i + 1} - (0)")
    print(f"{path}: {finals} finals of >= {min_finalists} finalists; round 1 over later rounds: " + ", ".join(cells))


def main():
    ap = argparse.ArgumentParser(description="how settled the race's finals were (their rows' logs)")
    ap.add_argument("db", nargs="+")
    ap.add_argument("--min-finalists", type=int, default=8)
    args = ap.parse_args()
    for p in args.db:
        try:
            analyse(p, args.min_finalists)
        except sqlite3.Error as e:
            print(f"final_rounds: {p}: {e}", file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
