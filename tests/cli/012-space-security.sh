# 012-space-security: expressions in a space file cannot read or write files or run anything.
. "$FT_TEST_LIB"
attack() {
	cat >"$T/evil.yaml" <<YAML
fatune_space: 1
name: evil
template:
  file: $FATUNE_SOURCE_DIR/tests/kernels/fault.cu
  kernel: fatune_fault_attention
  shared_memory: static
parameters:
  FAULT: [0]
  ROWS_PER_BLOCK: [1]
constraints:
  evil: "$1"
smem_bytes: 0
launch:
  threads: 32
  grid: [S, H, B]
YAML
	run check --arch sm_89 --shape 1x1x16x64 --space "$T/evil.yaml"
	expect_bad_input "evil.yaml:[0-9]+: "
}
attack "length(readfile('/etc/passwd')) > 0"
attack "writefile('$T/pwned', 'x') > 0"
attack "load_extension('/tmp/x.so') IS NULL"
attack "(SELECT count(*) FROM sqlite_master) >= 0"
attack "1) ; ATTACH DATABASE '$T/pwned.db' AS p; --"
attack "1) UNION SELECT * FROM (SELECT 1"
attack "(WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c) > 0"
attack "randomblob(1000000000) IS NOT NULL"
attack "sqlite_version() != ''"
[ ! -e "$T/pwned" ] && [ ! -e "$T/pwned.db" ] || fail "an expression wrote a file"
echo "ok"
