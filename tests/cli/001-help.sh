# 001-help: every command has --help from its option table; bare and unknown commands are usage errors.
. "$FT_TEST_LIB"

run --help; expect_rc 0; expect_out "usage: fatune <command>"
for c in check search bench query export cache devices; do
	run "$c" --help; expect_rc 0 "$c --help"; expect_out "usage: fatune $c"; expect_out "--help"
	run help "$c"; expect_rc 0 "help $c"; expect_out "usage: fatune $c"
done
# the help text lists exactly the options the parser takes
run search --help; expect_out "--budget"; expect_out "--strategy"; expect_out "--replay"
run search --budget 3 --help; expect_rc 0
run --version; expect_rc 0; expect_out "^fatune [0-9]+\.[0-9]+\.[0-9]+ \(NVRTC [0-9]+\.[0-9]+\)"
run; expect_rc 2
run frobnicate; expect_bad_input "no command 'frobnicate'"
run help frobnicate; expect_bad_input "no command 'frobnicate'"
echo "ok"
