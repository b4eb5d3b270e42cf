-- 004_claims.sql - schema version 4: candidates claimed by the search evaluating them.
--
-- Two searches of one search key writing one database (two shells, two SLURM
-- steps on one node) must not compile and time one candidate twice. Before a
-- search compiles a candidate it claims (search_key, config) here, in the
-- same BEGIN IMMEDIATE transaction that checks no trial of it is stored yet;
-- another search that meets a live claim leaves the candidate to its owner
-- and counts the owner's trial once it is stored. A claim is live while its
-- run is unfinished and its process runs: same host, that pid, that process
-- start time (so a reused pid is not mistaken for it); a claim from another
-- host is trusted for an hour after it was taken. A dead owner's claim is
-- taken over. A run's claims are deleted when it ends. See db/README.md.

CREATE TABLE claims (
	search_key TEXT NOT NULL,
	config TEXT NOT NULL,
	run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	host TEXT NOT NULL,				-- gethostname() of the owner
	pid INTEGER NOT NULL,
	pid_start INTEGER NOT NULL,			-- the owner's start time (/proc/PID/stat field 22), 0 unknown
	claimed_at TEXT NOT NULL,
	PRIMARY KEY (search_key, config)
);
CREATE INDEX claims_by_run ON claims (run_id);
