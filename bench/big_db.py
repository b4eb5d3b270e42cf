#!/usr/bin/env python3
"""big_db.py - makes a large tuning database to measure what the corrupt-file check costs.

usage: bench/big_db.py SEED.db OUT.db [N]

SEED.db is a database a fatune search wrote (any; its schema and first run are
reused). OUT.db gets a copy of it plus N (default 1,000,000) trials shaped like
those of a timed search: a 70-90 character config, status ok, registers, launch
geometry, timings and a device name, spread over 100 runs and search keys, so
both trial indexes are as large as they would be. docs/testing.md records the
measurement (time of `fatune query --runs`, whose open runs PRAGMA quick_check).
"""
import shutil
import sqlite3
import sys


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__.strip().splitlines()[2])
    seed, out = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) == 4 else 1_000_000
    shutil.copyfile(seed, out)
    con = sqlite3.connect(out)
    run = con.execute("SELECT max(id) FROM runs").fetchone()[0]
    con.execute("BEGIN")
    # 100 runs: copies of the seed's last run with their own search keys
    for r in range(100):
        con.execute(
            "INSERT INTO runs (started_at, finished_at, outcome, wall_s, fatune_version, arch, device,"
            " nvrtc_version, driver_version, template_name, template_hash, space_path, space_hash,"
            " search_key, b, h, s, d, dtype, causal, mode, strategy, seed, budget, timing, s_kv, h_kv,"
            " layout, space_name, family, abi, campaign)"
            " SELECT started_at, finished_at, 'done', 600.0, fatune_version, arch, 'NVIDIA H100 80GB HBM3',"
            " nvrtc_version, driver_version, template_name, template_hash, space_path, space_hash,"
            " printf('%016x', ?), b, h, s * (1 + ? % 8), d, dtype, causal, 'timed', strategy, seed, budget,"
            " timing, s_kv, h_kv, layout, space_name, family, abi, campaign FROM runs WHERE id = ?",
            (r + 1, r, run))
    con.execute(
        "WITH RECURSIVE i(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM i WHERE k + 1 < ?)"
        " INSERT INTO trials (run_id, search_key, config, status, reason, log, compile_key, smem_model,"
        " threads, grid_x, grid_y, grid_z, combine_threads, combine_grid_x, combine_grid_y,"
        " combine_grid_z, regs, smem_static, stack_bytes, spill_stores, spill_loads, compile_ms,"
        " rel_err, t_median_us, t_min_us, t_p90_us, t_spread, samples, workspace_bytes,"
        " device_index, device, created_at)"
        " SELECT ? + 1 + k % 100, printf('%016x', 1 + k % 100),"
        " printf('NUM_WARPS_PER_BLOCK=%d,TILE_M=%d,TILE_N=%d,KV_STAGES=%d,PACK_GQA=0,DENSE_KV=1,NUM_SPLITS=%d',"
        "        1 << (k % 4), 16 << (k / 4 % 4), 32 << (k / 16 % 3), 1 + k / 48 % 3, 1 + k / 144),"
        " 'ok', '', '', printf('%016x', k * 2654435761), 10240 + k % 64 * 1024, 128, 64, 8, 1,"
        " 128, 64, 8, 1, 96 + k % 100, 0, 0, 0, 0, 600.0 + k % 97, 1.2e-3, 40.0 + k % 1000 / 10.0,"
        " 39.0 + k % 1000 / 10.0, 41.5 + k % 1000 / 10.0, 0.01, 15, 0, 0, 'NVIDIA H100 80GB HBM3',"
        " '2026-11-25T10:00:00Z' FROM i",
        (n, run))
    con.commit()
    con.close()


if __name__ == "__main__":
    main()
