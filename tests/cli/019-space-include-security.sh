# 019-space-include-security: compile.include cannot put arbitrary directories on the compiler's
# include path: only directories under the space file's or the template's directory, or
# '{cuda}/...' under the CUDA toolkit's include directory; '..' and symbolic links are resolved
# before the check, and compile.options cannot smuggle in -I, -include or an output file.
. "$FT_TEST_LIB"
mkdir -p "$T/space/inc"
cp "$FATUNE_SOURCE_DIR/tests/kernels/fault.cu" "$T/space/fault.cu"
ln -s /etc "$T/space/etc_link"
space() {
	cat >"$T/space/s.yaml" <<YAML
fatune_space: 1
name: include_test
template: {file: fault.cu, kernel: fatune_fault_attention, shared_memory: static}
parameters:
  FAULT: [0]
  ROWS_PER_BLOCK: [1]
compile:
  $1
smem_bytes: 0
launch:
  threads: 32
  grid: [S, H, B]
YAML
}
refused() {
	space "$1"
	run check --arch sm_89 --shape 1x1x16x64 --space "$T/space/s.yaml"
	expect_bad_input "s.yaml:[0-9]+: key 'compile.(include|options)': "
	expect_err "$2"
}
refused "include: [/etc]" "it is an absolute path"
refused "include: [/usr/include]" "it is an absolute path"
refused "include: [../../../../../../etc]" "leads out of the space file's and the template's directories"
refused "include: [etc_link]" "leads out of the space file's and the template's directories"
refused "include: [\"{cuda}/../../../etc\"]" "leads out of the CUDA toolkit's include directory"
refused "include: [\"{cuda}etc\"]" "must be followed by '/'"
refused "include: [missing]" "there is no such directory"
refused "options: [-I/etc]" "is not allowed"
refused "options: [-include, /etc/passwd]" "is not allowed"
refused "options: [\"--pre-include=/etc/passwd\"]" "is not allowed"
refused "options: [-o/tmp/x]" "is not allowed"
refused "options: [\"-arch=sm_52\"]" "is not allowed"
# what a space may use
space "include: [inc, ., \"{cuda}/cccl\"]"
run check --arch sm_89 --shape 1x1x16x64 --space "$T/space/s.yaml"
cat "$T/err"
expect_rc 0
echo "ok"
