# 043-readme: the README's examples still print what the README says. Every ```text block right after the
# line "<!-- checked by tests/cli/043-readme.sh -->" is run: each "$ build/fatune ..." line (its "# ..."
# comment dropped) runs in a scratch directory that sees the source tree's search_spaces/, tests/ and
# kernel_templates/, with a fresh database and CUBIN cache shared by the block's commands in order, and
# the lines after it must appear in its output (stdout and stderr), in order. In a README line "..."
# stands for anything (a whole line of it: any number of lines); before comparing, runs of blanks are one
# blank, and every decimal with a fraction (timings) reads as "#". Only GPU-free, compile-free examples
# are marked, so this stays fast.
. "$FT_TEST_LIB"
mkdir -p "$T/w"
for d in search_spaces tests kernel_templates; do ln -s "$FATUNE_SOURCE_DIR/$d" "$T/w/$d"; done
python3 - "$FATUNE_SOURCE_DIR/README.md" "$FATUNE" "$T/w" "$FATUNE_SOURCE_DIR" <<'PY'
import os, re, subprocess, sys
readme, fatune, work, src = sys.argv[1:5]
MARK = "<!-- checked by tests/cli/043-readme.sh -->"
lines = open(readme).read().split("\n")

def norm(s):
    s = s.replace(src + "/", "")
    s = re.sub(r"\d+\.\d+", "#", s)
    return re.sub(r"\s+", " ", s).strip()

def pattern(s):
    return re.compile("^" + ".*".join(re.escape(p) for p in norm(s).split("...")) + "$")

blocks, i = [], 0
while i < len(lines):
    if lines[i].strip() == MARK:
        assert lines[i + 1].startswith("```text"), "line %d: the marker must precede a ```text block" % (i + 2)
        j = i + 2
        while not lines[j].startswith("```"):
            j += 1
        blocks.append((i + 3, lines[i + 2:j]))
        i = j
    i += 1
assert blocks, "no checked block in the README"
failures, ncmd = 0, 0
for bi, (first, body) in enumerate(blocks):
    env_db = "%s/readme%d.db" % (work, bi)
    cmds = []
    for k, line in enumerate(body):
        if line.startswith("$ "):
            assert line.startswith("$ build/fatune "), "line %d: only build/fatune commands can be checked" % (first + k)
            cmds.append((first + k, line[2:].split(" #")[0].strip(), []))
        elif cmds and line.strip():
            cmds[-1][2].append((first + k, line))
    for lineno, cmd, want in cmds:
        ncmd += 1
        env = dict(os.environ, FATUNE_DB=env_db, FATUNE_CACHE_DIR=work + "/cache", FATUNE_SOURCE_DIR=src)
        out = subprocess.run(["bash", "-c", fatune + cmd[len("build/fatune"):]], cwd=work, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300).stdout
        got = [norm(l) for l in out.split("\n")]
        pos = 0
        for wl, w in want:
            if norm(w) == "...":
                continue
            pat = pattern(w)
            while pos < len(got) and not pat.match(got[pos]):
                pos += 1
            if pos == len(got):
                print("README.md:%d: '%s' does not print (in this order) what README.md:%d says:\n  %s\n"
                      "its output:\n%s" % (lineno, cmd, wl, w, out[:3000]))
                failures += 1
                break
            pos += 1
print("%d command(s) of %d block(s) checked" % (ncmd, len(blocks)))
sys.exit(1 if failures else 0)
PY
echo "ok"
