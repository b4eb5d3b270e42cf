# 104-template-confined: a space's template.file and a campaign's spaces: entries are confined like
# compile.include (issue 18, item 11): under the naming file's directory or fatune's data directory;
# a path leading out (absolute, '..', a symbolic link) is refused at load, exit 2, one line, and the
# named file's content never reaches stderr, stdout or the database (the old loader compiled
# /etc/shadow as the template and NVRTC's errors printed its first line).
. "$FT_TEST_LIB"
mkdir -p "$T/secret" "$T/sp" "$T/camp"
echo "root:SECRET-0b1d6e:19000:0:99999:7:::" >"$T/secret/shadow"
ln -s "$T/secret/shadow" "$T/sp/link.cu"
space() { # TEMPLATE: a space in $T/sp naming it
	sed "s|^  file: .*|  file: $1|" "$TESTSPACES/fault.yaml" >"$T/sp/s.yaml"
	grep -q "file: $1" "$T/sp/s.yaml" || fail "could not write the space"
}
leaked() {
	! grep -rq SECRET-0b1d6e "$T/out" "$T/err" && ! { [ -e "$FATUNE_DB" ] && sql "$FATUNE_DB" "SELECT group_concat(coalesce(log, '') || reason) FROM trials" | grep -q SECRET-0b1d6e; }
}
for tpl in "../secret/shadow" "$T/secret/shadow" "link.cu" "/etc/shadow"; do
	space "$tpl"
	run check --compile --arch sm_89 --shape 1x2x64x64 --space "$T/sp/s.yaml"
	expect_bad_input "template '.*' cannot be read: (it lies outside the directory of the file naming it|there is no such file)"
	leaked || fail "the content of $tpl leaked"
	run search --arch sm_89 --shape 1x2x64x64 --space "$T/sp/s.yaml" --quiet
	expect_rc 2; expect_err "template '.*' cannot be read"
	leaked || fail "the content of $tpl leaked"
done
# a template beside the space (a copy of the shipped one) and a shipped one by absolute path are fine
cp "$FATUNE_SOURCE_DIR/tests/kernels/fault.cu" "$T/sp/mine.cu"
space mine.cu
run check --arch sm_89 --shape 1x2x64x64 --space "$T/sp/s.yaml"; expect_rc 0
space "$FATUNE_SOURCE_DIR/tests/kernels/fault.cu"
run check --arch sm_89 --shape 1x2x64x64 --space "$T/sp/s.yaml"; expect_rc 0
# a campaign's spaces: the same confinement
for sp in "../secret/shadow" "$T/secret/shadow"; do
	printf 'fatune_campaign: 1\nspaces: [%s]\nshapes: [1x2x64x64]\n' "$sp" >"$T/camp/c.yaml"
	run search --arch sm_89 --campaign "$T/camp/c.yaml" --quiet
	expect_bad_input "space file '.*' is not a readable file: it lies outside"
	leaked || fail "the content of $sp leaked through a campaign"
done
printf 'fatune_campaign: 1\nspaces: [%s]\nshapes: [1x2x64x64]\n' "$TESTSPACES/fault.yaml" >"$T/camp/c.yaml"
run search --arch sm_89 --campaign "$T/camp/c.yaml" --quiet; expect_rc 0
echo ok
