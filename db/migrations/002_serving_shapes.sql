-- 002_serving_shapes.sql - schema version 2: serving shapes, template identity, several GPUs.
--
-- Shapes gain a KV length, KV heads and a layout (decode, chunked prefill,
-- grouped-query attention, [B,S,H,D]); rows written before keep s_kv = s,
-- h_kv = h, layout 'bhsd'. A run records the space it searched (its name is
-- the template's identity, with the template hash: two spaces over one .cu,
-- or two files both called attention.cu, no longer share best rows), the
-- template family and the kernel ABI, and the campaign it belongs to. A trial
-- records the GPU that timed it (index and name: a host may hold several, of
-- different models) and its workspace. The best table is rebuilt because its
-- key changes: one row per target x shape x space x template hash.

ALTER TABLE runs ADD COLUMN s_kv INTEGER;
ALTER TABLE runs ADD COLUMN h_kv INTEGER;
ALTER TABLE runs ADD COLUMN layout TEXT NOT NULL DEFAULT 'bhsd';
ALTER TABLE runs ADD COLUMN space_name TEXT;
ALTER TABLE runs ADD COLUMN family TEXT;
ALTER TABLE runs ADD COLUMN abi INTEGER;
ALTER TABLE runs ADD COLUMN campaign TEXT;
UPDATE runs SET s_kv = s, h_kv = h, space_name = template_name, family = 'mma', abi = 1;

ALTER TABLE trials ADD COLUMN workspace_bytes INTEGER;
ALTER TABLE trials ADD COLUMN device_index INTEGER;
ALTER TABLE trials ADD COLUMN device TEXT;

CREATE TABLE best_v2 (
	id INTEGER PRIMARY KEY,
	arch TEXT NOT NULL,
	device TEXT NOT NULL,
	space_name TEXT NOT NULL,			-- the space's name: the template's identity
	template_hash TEXT NOT NULL,			-- ... with this hash of the template
	template_name TEXT NOT NULL,			-- the template file's base name
	family TEXT NOT NULL DEFAULT 'mma',
	b INTEGER NOT NULL,
	h INTEGER NOT NULL,
	s INTEGER NOT NULL,
	d INTEGER NOT NULL,
	s_kv INTEGER NOT NULL,
	h_kv INTEGER NOT NULL,
	layout TEXT NOT NULL DEFAULT 'bhsd' CHECK (layout IN ('bhsd', 'bshd')),
	dtype TEXT NOT NULL CHECK (dtype IN ('fp16', 'bf16')),
	causal INTEGER NOT NULL CHECK (causal IN (0, 1)),
	config TEXT NOT NULL,
	compile_key TEXT,
	fatune_version TEXT NOT NULL,
	t_median_us REAL,
	t_min_us REAL,
	t_p90_us REAL,
	rel_err REAL,
	smem_bytes INTEGER,
	threads INTEGER,
	grid_x INTEGER,
	grid_y INTEGER,
	grid_z INTEGER,
	combine_threads INTEGER,
	combine_grid_x INTEGER,
	combine_grid_y INTEGER,
	combine_grid_z INTEGER,
	workspace_bytes INTEGER,
	run_id INTEGER REFERENCES runs (id) ON DELETE SET NULL,
	trial_id INTEGER REFERENCES trials (id) ON DELETE SET NULL,
	updated_at TEXT NOT NULL,
	UNIQUE (arch, device, space_name, template_hash, b, h, s, d, s_kv, h_kv, layout, dtype, causal)
);
INSERT INTO best_v2 (id, arch, device, space_name, template_hash, template_name, family, b, h, s,
	d, s_kv, h_kv, layout, dtype, causal, config, compile_key, fatune_version, t_median_us,
	t_min_us, t_p90_us, rel_err, smem_bytes, threads, grid_x, grid_y, grid_z, combine_threads,
	combine_grid_x, combine_grid_y, combine_grid_z, run_id, trial_id, updated_at)
	SELECT id, arch, device, template_name, coalesce(template_hash, ''), template_name, 'mma', b,
	h, s, d, s, h, 'bhsd', dtype, causal, config, compile_key, fatune_version, t_median_us,
	t_min_us, t_p90_us, rel_err, smem_bytes, threads, grid_x, grid_y, grid_z, combine_threads,
	combine_grid_x, combine_grid_y, combine_grid_z, run_id, trial_id, updated_at FROM best;
DROP TABLE best;
ALTER TABLE best_v2 RENAME TO best;
-- the winner across spaces: per space the latest row, then the fastest
CREATE INDEX best_by_target ON best (arch, device, b, h, s, d, s_kv, h_kv, layout, dtype, causal);
