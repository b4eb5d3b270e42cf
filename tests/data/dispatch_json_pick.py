"""dispatch_json_pick.py - a consumer of `fatune export --dispatch --format json` that picks as the C table does.

It reads only the JSON: the entries, the rule, and the "check" object (the space's constraints, the derived
parameters' tests, launch formulas and compile.defines as SQLite expressions, what each name is bound to, the limits). Validity is
decided with Python's own sqlite3, as fatune decides it with SQLite; nothing of fatune is imported. It serves
as the property test's JSON side (tests/cli/074) and as a model for a consumer in another language.

usage: dispatch_json_pick.py TABLE.json DRAWN
DRAWN: lines "d bf16 causal b h s kv hkv bshd c_index" (the C table's pick, -1 none). Prints one line per
problem whose JSON pick differs from the C pick, then "N problems, M picked, K differ"; exits 1 when any
differs or an entry's launch disagrees with its tuned geometry at its own shape.
"""
import json
import sqlite3
import sys


def ceil_div(a, b):
    if b == 0:
        return None
    return -((-a) // b)


def is_pow2(x):
    return 1 if x > 0 and x & (x - 1) == 0 else 0


class Table:
    def __init__(self, path):
        t = json.load(open(path))
        self.entries, self.check = t["entries"], t["check"]
        c = self.check
        self.db = sqlite3.connect(":memory:")
        self.db.create_function("ceil_div", 2, ceil_div, deterministic=True)
        self.db.create_function("is_pow2", 1, is_pow2, deterministic=True)
        self.names = list(c["names"])
        # the derived parameters' tests are constraints too: the entry's stored value is what the shape gives
        tests = [x["expr"] for x in c["constraints"]] + [x["test"] for x in c["derived"]]
        exprs = tests + [x["expr"] for x in c["launch"]] + [x["expr"] for x in c["defines"]]
        self.ncons, self.nlaunch = len(tests), len(c["launch"])
        cols = ", ".join(self.names)
        marks = ", ".join("?" for _ in self.names)
        self.sql = f"WITH v({cols}) AS (VALUES ({marks})) SELECT " + ", ".join(f"({e})" for e in exprs) + " FROM v"
        self.limits = c["launch_limits"]

    def valid(self, e, b, h, hkv, s, kv, bshd):
        """The launch (geom order) when entry e may serve the problem, else None."""
        c, d = self.check, e["d"]
        lim = c["shape_limits"]
        if any(x < 1 or x > lim["dim_max"] for x in (b, h, hkv, s, kv, d)) or h % hkv:
            return None
        if b * h * s * d > lim["elems_max"] or b * hkv * kv * d > lim["elems_max"]:
            return None
        if c["abi"] == 1 and (hkv != h or kv != s or bshd):
            return None
        ctx = {"B": b, "H": h, "S": s, "D": d, "CAUSAL": e["causal"], "DTYPE_BYTES": 2, "S_KV": kv, "H_KV": hkv,
               "LAYOUT": bshd, "DTYPE": 1 if e["dtype"] == "bf16" else 0}
        vals = []
        for n in self.names:
            v = c["names"][n]
            vals.append(ctx[n] if n in ctx else e["config"][n] if n in e["config"] else v)
        try:
            row = self.db.execute(self.sql, vals).fetchone()
        except (sqlite3.Error, OverflowError):
            return None
        if any(not isinstance(x, int) for x in row):
            return None
        if not all(row[:self.ncons]):
            return None
        g = list(row[self.ncons:self.ncons + self.nlaunch])
        defines = row[self.ncons + self.nlaunch:]
        names = [x["name"] for x in c["launch"]]
        for i, n in enumerate(names):
            if n in self.limits and not self.limits[n][0] <= g[i] <= self.limits[n][1]:
                return None
        if g[5] == 0:
            g[6] = g[7] = g[8] = 0
        if g[0] != e["geom"][0] or list(defines) != e["defines"]:
            return None
        return g

    def pick(self, d, bf16, causal, b, h, s, kv, hkv, bshd):
        """The index of the entry the rule picks, and its launch; (-1, None) when none."""
        def ratio(x, y):
            x, y = max(x, 1), max(y, 1)
            return x / y if x > y else y / x
        best, best_s, best_bh, best_g = -1, 0.0, 0.0, None
        for i, e in enumerate(self.entries):
            if e["d"] != d or (e["dtype"] == "bf16") != bool(bf16) or e["causal"] != causal or \
                    (e["layout"] == "bshd") != bool(bshd) or (e["h_kv"] < e["h"]) != (hkv < h) or \
                    (e["s"] == 1) != (s == 1):
                continue
            g = self.valid(e, b, h, hkv, s, kv, bshd)
            if g is None:
                continue
            ds = ratio(s, e["s"]) * ratio(kv, e["s_kv"])
            dbh = ratio(b * h, e["b"] * e["h"]) * ratio(h // hkv, e["h"] // e["h_kv"])
            if best < 0 or ds < best_s or (ds == best_s and dbh < best_bh):
                best, best_s, best_bh, best_g = i, ds, dbh, g
        return best, best_g


def main():
    table = Table(sys.argv[1])
    bad = 0
    for i, e in enumerate(table.entries):  # every entry is valid at its own shape, with its own launch
        g = table.valid(e, e["b"], e["h"], e["h_kv"], e["s"], e["s_kv"], e["layout"] == "bshd")
        if g != e["geom"]:
            print(f"entry {i} ({e['shape']}): launch {g} at its own shape, tuned {e['geom']}")
            bad += 1
    n = picked = differ = 0
    for line in open(sys.argv[2]):
        d, bf16, causal, b, h, s, kv, hkv, bshd, want = map(int, line.split())
        got, _ = table.pick(d, bf16, causal, b, h, s, kv, hkv, bshd)
        n += 1
        picked += got >= 0
        if got != want:
            differ += 1
            if differ <= 5:
                print(f"D={d} bf16={bf16} causal={causal} {b}x{h}x{s}, kv {kv} x {hkv}, bshd {bshd}: JSON picks {got}, C {want}")
    print(f"{n} problems, {picked} picked, {differ} differ")
    sys.exit(1 if differ or bad else 0)


main()
