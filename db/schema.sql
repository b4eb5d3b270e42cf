-- schema.sql - fatune tuning database, schema version 1: the base every file starts from.
--
-- A new file runs this, then every db/migrations/NNN_*.sql in order (NNN = the
-- version it makes, starting at 002); an older file runs only the migrations it
-- lacks. db.c sets PRAGMA user_version and application_id; both are compiled
-- into fatune (cmake/embed_sql.cmake). Columns are documented in db/README.md.
-- Conventions: times are UTC ISO-8601 text ("2026-11-22T02:10:00Z"); a NULL
-- number means "unknown / not measured" (NaN doubles and -1 counts are stored
-- as NULL); durations carry their unit in the name (_us, _ms, _s).

-- One search (or bench) invocation.
CREATE TABLE runs (
	id INTEGER PRIMARY KEY,
	started_at TEXT NOT NULL,
	finished_at TEXT,				-- NULL while running or after kill -9
	outcome TEXT CHECK (outcome IN ('done', 'interrupted', 'failed')),	-- NULL while running
	wall_s REAL,
	fatune_version TEXT NOT NULL,
	arch TEXT NOT NULL,				-- "sm_89"
	device TEXT NOT NULL DEFAULT '',		-- "" when nothing was timed on a device
	nvrtc_version TEXT,
	driver_version TEXT,
	template_name TEXT NOT NULL,
	template_hash TEXT,				-- xxh64 hex of the template and its includes
	space_path TEXT,
	space_hash TEXT,				-- xxh64 hex of the space file
	search_key TEXT NOT NULL,			-- hash of everything a trial's result depends on
	b INTEGER NOT NULL CHECK (b >= 1),
	h INTEGER NOT NULL CHECK (h >= 1),
	s INTEGER NOT NULL CHECK (s >= 1),
	d INTEGER NOT NULL CHECK (d >= 1),
	dtype TEXT NOT NULL CHECK (dtype IN ('fp16', 'bf16')),
	causal INTEGER NOT NULL CHECK (causal IN (0, 1)),
	mode TEXT,					-- "feasibility" or "timed"
	strategy TEXT,
	seed INTEGER,
	budget INTEGER,					-- evaluations, -1 for none
	timing TEXT					-- "warm" or "cold"
);

-- One candidate configuration's outcome; every candidate gets a row, failed or not.
CREATE TABLE trials (
	id INTEGER PRIMARY KEY,
	run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	search_key TEXT NOT NULL,
	config TEXT NOT NULL,				-- canonical "NAME=V,NAME=V,..."
	status TEXT NOT NULL CHECK (status IN ('rejected_constraint', 'rejected_smem',
		'compile_failed', 'spills', 'compiled', 'ok', 'wrong_result', 'crashed', 'timeout')),
	reason TEXT NOT NULL DEFAULT '',		-- "" for ok
	log TEXT,					-- compile log, NULL when none
	compile_key TEXT,				-- CUBIN cache key, NULL if never compiled
	smem_model INTEGER,				-- the space's smem_bytes formula
	threads INTEGER,
	grid_x INTEGER,
	grid_y INTEGER,
	grid_z INTEGER,
	combine_threads INTEGER,			-- 0 when the space has no combine kernel
	combine_grid_x INTEGER,
	combine_grid_y INTEGER,
	combine_grid_z INTEGER,
	regs INTEGER,					-- ptxas: registers per thread
	smem_static INTEGER,				-- ptxas: static __shared__ bytes
	stack_bytes INTEGER,
	spill_stores INTEGER,
	spill_loads INTEGER,
	compile_ms REAL,				-- 0 on a CUBIN cache hit
	rel_err REAL,					-- relative L2 error vs the reference
	t_median_us REAL,
	t_min_us REAL,
	t_p90_us REAL,
	t_spread REAL,					-- (p90 - min) / median
	samples INTEGER NOT NULL DEFAULT 0,
	created_at TEXT NOT NULL
);
-- resume ("latest trial of this config") and best-config selection
CREATE INDEX trials_by_key ON trials (search_key, config, id);
-- per-run listings and ON DELETE CASCADE
CREATE INDEX trials_by_run ON trials (run_id);

-- The fastest verified config per problem and target: what `fatune export` writes.
CREATE TABLE best (
	id INTEGER PRIMARY KEY,
	arch TEXT NOT NULL,
	device TEXT NOT NULL,
	template_name TEXT NOT NULL,
	b INTEGER NOT NULL,
	h INTEGER NOT NULL,
	s INTEGER NOT NULL,
	d INTEGER NOT NULL,
	dtype TEXT NOT NULL CHECK (dtype IN ('fp16', 'bf16')),
	causal INTEGER NOT NULL CHECK (causal IN (0, 1)),
	config TEXT NOT NULL,
	compile_key TEXT,
	template_hash TEXT,
	fatune_version TEXT NOT NULL,
	t_median_us REAL,
	t_min_us REAL,
	t_p90_us REAL,
	rel_err REAL,
	smem_bytes INTEGER,				-- the trial's smem_model
	threads INTEGER,
	grid_x INTEGER,
	grid_y INTEGER,
	grid_z INTEGER,
	combine_threads INTEGER,
	combine_grid_x INTEGER,
	combine_grid_y INTEGER,
	combine_grid_z INTEGER,
	run_id INTEGER REFERENCES runs (id) ON DELETE SET NULL,
	trial_id INTEGER REFERENCES trials (id) ON DELETE SET NULL,
	updated_at TEXT NOT NULL,
	UNIQUE (arch, device, template_name, b, h, s, d, dtype, causal)
);
