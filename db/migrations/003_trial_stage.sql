-- 003_trial_stage.sql - schema version 3: a trial's stage is stored, and replays are marked.
--
-- A trial records how far its candidate got (stage: model, compiled, verified,
-- timed; the states and transitions are documented in tuner/base/trial.h), so
-- that nothing has to guess it from the status, the registers or the reason
-- any more. Rows written before are given their stage once, here, from what
-- they hold: a rejection with ptxas registers was judged after compiling,
-- one without before. A new status, 'not_in_recording', marks a replayed
-- candidate the recording never had (it gets no time). SQLite cannot change a
-- CHECK constraint in place, so the trials table is rebuilt; the best rows'
-- links to their trials (trial_id) are kept across the rebuild.

CREATE TABLE trials_v3 (
	id INTEGER PRIMARY KEY,
	run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	search_key TEXT NOT NULL,
	config TEXT NOT NULL,
	status TEXT NOT NULL CHECK (status IN ('rejected_constraint', 'rejected_smem',
		'compile_failed', 'spills', 'compiled', 'ok', 'wrong_result', 'crashed', 'timeout',
		'not_in_recording')),
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
INSERT INTO trials_v3 (id, run_id, search_key, config, status, reason, log, compile_key,
	smem_model, threads, grid_x, grid_y, grid_z, combine_threads, combine_grid_x,
	combine_grid_y, combine_grid_z, regs, smem_static, stack_bytes, spill_stores, spill_loads,
	compile_ms, rel_err, t_median_us, t_min_us, t_p90_us, t_spread, samples, created_at,
	workspace_bytes, device_index, device, stage)
	SELECT id, run_id, search_key, config, status, reason, log, compile_key, smem_model,
	threads, grid_x, grid_y, grid_z, combine_threads, combine_grid_x, combine_grid_y,
	combine_grid_z, regs, smem_static, stack_bytes, spill_stores, spill_loads, compile_ms,
	rel_err, t_median_us, t_min_us, t_p90_us, t_spread, samples, created_at, workspace_bytes,
	device_index, device,
	CASE
		WHEN status = 'ok' THEN 'timed'
		WHEN status IN ('wrong_result', 'crashed', 'timeout') THEN 'verified'
		WHEN status IN ('compile_failed', 'spills', 'compiled') THEN 'compiled'
		WHEN regs IS NOT NULL OR compile_key IS NOT NULL THEN 'compiled'
		ELSE 'model'
	END
	FROM trials;
-- DROP TABLE sets best.trial_id to NULL (ON DELETE SET NULL): keep the links
CREATE TEMP TABLE best_trial_v3 AS SELECT id, trial_id FROM best WHERE trial_id IS NOT NULL;
DROP TABLE trials;
ALTER TABLE trials_v3 RENAME TO trials;
CREATE INDEX trials_by_key ON trials (search_key, config, id);
CREATE INDEX trials_by_run ON trials (run_id);
UPDATE best SET trial_id = (SELECT k.trial_id FROM best_trial_v3 k WHERE k.id = best.id)
	WHERE id IN (SELECT id FROM best_trial_v3);
DROP TABLE best_trial_v3;
