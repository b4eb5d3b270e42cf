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
With --by-round, every round instead: each finalist that ran all of its final's interleaved rounds
(3, or FATUNE_RACE_ROUNDS, as the rows' reasons say; close rounds not counted) gets each round's
median over the mean of those rounds, grouped by its place in that round, a line per round: the
drift within each round, which a finalist's place in the rotation weighs on its time.
"""
import argparse
import re
import sqlite3
import statistics
import sys
import urllib.parse

LINE = re.compile(r"round (\d+): (\d+) of (\d+), median ([0-9.]+) us")
# a final row's reason: "... over 3 interleaved rounds ..." or, left after round 1, "over 1 of 3 ..."
ROUNDS = re.compile(r"over (?:\d+ of )?(\d+) interleaved rounds")


def rounds_of(log):
    """{round: (place from 1, finalists in the round, median us)} from a final row's log."""
    out = {}
    for m in LINE.finditer(log or ""):
        out[int(m.group(1))] = (int(m.group(2)), int(m.group(3)), float(m.group(4)))
    return out


def connect_ro(path):
    """a database opened read-only (a path with ? or # stays a path)"""
    return sqlite3.connect(f"file:{urllib.parse.quote(path)}?mode=ro", uri=True)


def quarter(place, n):
    """0-3: the quarter of a round of n finalists that place (from 1) falls in"""
    return min(3, (place - 1) * 4 // n)


def quarter_cells(quarters):
    """ "places Q1 1.024 (63), ..." from four lists of ratios"""
    return ", ".join(f"places Q{i + 1} {statistics.mean(q):.3f} ({len(q)})" if q else f"places Q{i + 1} - (0)"
                     for i, q in enumerate(quarters))


def finals_of(db, min_finalists):
    """each final of at least min_finalists finalists: its rows' rounds (rounds_of) and its count of
    interleaved rounds (FATUNE_RACE_ROUNDS; the close rounds after them not counted)"""
    for (run,) in db.execute("SELECT id FROM runs"):
        found = db.execute(
            "SELECT log, reason FROM trials WHERE run_id = ? AND status = 'ok' AND reason LIKE 'race final%'",
            (run,)).fetchall()
        rows = [r for r in (rounds_of(log) for log, _ in found) if 1 in r]
        counts = [int(m.group(1)) for _, reason in found for m in [ROUNDS.search(reason)] if m]
        if rows and rows[0][1][1] >= min_finalists:
            yield rows, max(counts, default=3)


def analyse_by_round(path, min_finalists):
    db = connect_ro(path)
    finals, per = 0, {}
    for rows, nrounds in finals_of(db, min_finalists):
        finals += 1
        mine = range(1, nrounds + 1)
        for r in rows:
            if not all(k in r for k in mine):
                continue
            mean = statistics.mean(r[k][2] for k in mine)
            for k in mine:
                place, n, med = r[k]
                per.setdefault(k, [[], [], [], []])[quarter(place, n)].append(med / mean)
    db.close()
    print(f"{path}: {finals} finals of >= {min_finalists} finalists; each round's median over the finalist's "
          f"mean of its final's rounds:")
    for k in sorted(per):
        print(f"  round {k}: " + quarter_cells(per[k]))


def analyse(path, min_finalists):
    db = connect_ro(path)
    finals, quarters = 0, [[], [], [], []]
    for rows, _ in finals_of(db, min_finalists):
        finals += 1
        for r in rows:
            later = [v[2] for k, v in r.items() if k > 1]
            if not later:
                continue
            place, n, med = r[1]
            quarters[quarter(place, n)].append(med / statistics.mean(later))
    db.close()
    print(f"{path}: {finals} finals of >= {min_finalists} finalists; round 1 over later rounds: " +
          quarter_cells(quarters))


def main():
    ap = argparse.ArgumentParser(description="how settled the race's finals were (their rows' logs)")
    ap.add_argument("db", nargs="+")
    ap.add_argument("--min-finalists", type=int, default=8)
    ap.add_argument("--by-round", action="store_true", help="each round's median over the finalist's mean of "
                    "its final's rounds, by its place in that round")
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
