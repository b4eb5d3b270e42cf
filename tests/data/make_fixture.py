#!/usr/bin/env python3
"""make_fixture.py - turns a tuning DB recorded on a GPU into a replay fixture (SQL text).

    python3 tests/data/make_fixture.py RECORDED.db > tests/data/recorded_h200.sql
    python3 tests/data/make_fixture.py --best TUNED.db > tests/data/h200_suite24_best.sql

--best keeps only the timed runs and their best rows (a `search --seeds-from` fixture: no
trials, so each best row's trial_id is NULL).

Keeps the timed runs and every trial of them except model rejections (replay
recomputes those), drops compile logs, and writes a complete database of the
recorded file's schema version as SQL (fatune's application_id and user_version included), so
`sqlite3 x.db < fixture.sql` gives a file fatune opens (and migrates, once the
schema moves on).
"""
import sqlite3, sys

best_only = sys.argv[1] == "--best"
src = sqlite3.connect(f"file:{sys.argv[-1]}?mode=ro", uri=True)
out = sys.stdout
out.write("-- replay fixture made by tests/data/make_fixture.py from trials recorded on a GPU: do not edit\n")
version = src.execute("PRAGMA user_version").fetchone()[0]
out.write(f"PRAGMA application_id = 1180783726;\nPRAGMA user_version = {version};\nBEGIN;\n")
for (sql,) in src.execute("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY rowid"):
    out.write(sql + ";\n")

def dump(table, where):
    cols = [r[1] for r in src.execute(f"PRAGMA table_info({table})")]
    for row in src.execute(f"SELECT * FROM {table} WHERE {where} ORDER BY id"):
        vals = []
        for c, v in zip(cols, row):
            if c == "log" or v is None or (best_only and c == "trial_id"):
                vals.append("NULL")
            elif isinstance(v, (int, float)):
                vals.append(repr(v))
            else:
                vals.append("'" + str(v).replace("'", "''") + "'")
        out.write(f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({', '.join(vals)});\n")

dump("runs", "mode = 'timed'")
if not best_only:
    dump("trials", "status != 'rejected_constraint' AND run_id IN (SELECT id FROM runs WHERE mode = 'timed')")
dump("best", "1")
out.write("COMMIT;\n")
