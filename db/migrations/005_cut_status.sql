-- 005_cut_status.sql - schema version 5: the trial status 'cut'.
--
-- Racing (docs/timing.md) gives every verified candidate a quick first
-- measurement and measures in full only those within a margin of the best so
-- far; the others are stored as 'cut' (stage 'timed') with their rough quick
-- time, never as 'ok'. SQLite cannot change a CHECK constraint in place, so
-- trials is rebuilt with the longer status list, the same ids and stages;
-- dropping the old table runs its ON DELETE actions (best.trial_id SET NULL),
-- so best's links to their trials are kept across the rebuild.

CREATE TABLE trials_v5 (
	id INTEGER PRIMARY KEY,
	run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	search_key TEXT NOT NULL,
	config TEXT NOT NULL,
	status TEXT NOT NULL CHECK (status IN ('rejected_constraint', 'rejected_smem',
		'compile_failed', 'spills', 'compiled', 'ok', 'wrong_result', 'crashed', 'timeout',
		'not_in_recording', 'cut')),
	reason TEXT NOT NULL DEFAULT '',
	log TEXT,
	compile_key TEXT,
	smem_model INTEGER,
	threads INTEGER,
	grid_x INTEGER,
	grid_y INTEGER,
	grid_z INTEGER,
	combine_threads INTEGER,
	combine_grid_x INTEGER,
	combine_grid_y INTEGER,
	combine_grid_z INTEGER,
	regs INTEGER,
	smem_static INTEGER,
	stack_bytes INTEGER,
	spill_stores INTEGER,
	spill_loads INTEGER,
	compile_ms REAL,
	rel_err REAL,
	t_median_us REAL,
	t_min_us REAL,
	t_p90_us REAL,
	t_spread REAL,
	samples INTEGER NOT NULL DEFAULT 0,
	created_at TEXT NOT NULL,
	workspace_bytes INTEGER,
	device_index INTEGER,
	device TEXT,
	stage TEXT NOT NULL DEFAULT 'model' CHECK (stage IN ('model', 'compiled', 'verified', 'timed'))
);
INSERT INTO trials_v5 (id, run_id, search_key, config, status, reason, log, compile_key,
	smem_model, threads, grid_x, grid_y, grid_z, combine_threads, combine_grid_x,
	combine_grid_y, combine_grid_z, regs, smem_static, stack_bytes, spill_stores, spill_loads,
	compile_ms, rel_err, t_median_us, t_min_us, t_p90_us, t_spread, samples, created_at,
	workspace_bytes, device_index, device, stage)
	SELECT id, run_id, search_key, config, status, reason, log, compile_key,
	smem_model, threads, grid_x, grid_y, grid_z, combine_threads, combine_grid_x,
	combine_grid_y, combine_grid_z, regs, smem_static, stack_bytes, spill_stores, spill_loads,
	compile_ms, rel_err, t_median_us, t_min_us, t_p90_us, t_spread, samples, created_at,
	workspace_bytes, device_index, device, stage FROM trials;
CREATE TEMP TABLE best_trial_v5 AS SELECT id, trial_id FROM best WHERE trial_id IS NOT NULL;
DROP TABLE trials;
ALTER TABLE trials_v5 RENAME TO trials;
CREATE INDEX trials_by_key ON trials (search_key, config, id);
CREATE INDEX trials_by_run ON trials (run_id);
UPDATE best SET trial_id = (SELECT k.trial_id FROM best_trial_v5 k WHERE k.id = best.id)
	WHERE id IN (SELECT id FROM best_trial_v5);
DROP TABLE best_trial_v5;
