# 073-report: `fatune report` writes one self-contained HTML file (no script, nothing fetched, text from
# the database escaped) with the campaign's table and a heatmap per search; headless Chromium renders
# it to a screenshot that is not blank and shows the heatmap's colours. Skips (77) the render where
# Chromium is missing or cannot start.
. "$FT_TEST_LIB"
REC="$T/recorded.db"
sql_load "$REC" "$FATUNE_SOURCE_DIR/tests/data/recorded_h200.sql"
run search --arch sm_90 --campaign "$FATUNE_SOURCE_DIR/tests/campaigns/replayed.yaml" --replay "$REC" --quiet
expect_rc 0
run search --arch sm_89 --shape 1x2x64x64 --space "$TESTSPACES/fault.yaml" --quiet; expect_rc 0	# no GPU: untimed
# hostile text in the database: it must come out escaped
sql "$FATUNE_DB" "UPDATE trials SET reason = '<script>alert(1)</script> & \"x\"' WHERE status = 'rejected_constraint';
  UPDATE runs SET campaign = '<img src=x onerror=alert(2)>' WHERE campaign = 'replayed';"
run report -o "$T/report.html"; expect_rc 0; expect_err "wrote .*report.html \(3 searches\)"
H="$T/report.html"
# FT_KEEP_REPORT=DIR keeps the HTML and the screenshot there, to look at them
[ -z "${FT_KEEP_REPORT:-}" ] || trap 'cp "$H" "$T/shot.png" "$FT_KEEP_REPORT"; rm -rf "$T"' EXIT
grep -qi "<script" "$H" && fail "the report holds a script (or unescaped text from the database)"
grep -q "<img" "$H" && fail "the report holds unescaped text from the database"
grep -q "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;x&quot;" "$H" || fail "the hostile reason was not escaped"
grep -Eq "(src|href)=\"(https?:)?//" "$H" && fail "the report fetches something"
[ "$(grep -c "<svg" "$H")" -eq 3 ] || fail "expected 3 heatmaps"
best=$(sql "$FATUNE_DB" "SELECT printf('%.2f', min(t_median_us)) FROM trials t JOIN runs r ON r.id = t.run_id WHERE t.status = 'ok' AND r.causal = 0")
grep -q "<td>best</td><td class=n>$best</td>" "$H" || fail "the best config ($best us) is not in the report"
grep -q "<td>runner-up</td>" "$H" || fail "no runner-up"
grep -q "constraint</b> (rejected_constraint)" "$H" || fail "the rejected region's reasons are missing"
grep -q ">untimed</text>" "$H" || fail "the untimed search's cells are not marked"
run report -o "$T/x.html" --arch sm_80; expect_bad_input "no search in .* for sm_80"
run report -o "$T/x.html" --rows NOPE; expect_bad_input "has a parameter 'NOPE'"
run report; expect_bad_input "-o FILE is required"
run report --help; expect_rc 0; expect_out "usage: fatune report -o report.html"; expect_out "--rows PARAM"
run report -o "$T/tm.html" --rows TILE_M --cols TILE_N --campaign '<img src=x onerror=alert(2)>'; expect_rc 0
grep -q "font-weight=\"bold\">TILE_N</text>" "$T/tm.html" || fail "--cols TILE_N was not the column axis"
[ "$(grep -c "<svg" "$T/tm.html")" -eq 2 ] || fail "--campaign did not keep the campaign's 2 searches"

# the render: a screenshot in headless Chromium, decoded with zlib (no PIL needed)
chrome=$(command -v chromium || command -v chromium-browser || true)
[ -n "$chrome" ] || { echo "SKIP: render: chromium is missing (tools/deps.sh installs it); the HTML checks passed"; exit 77; }
timeout 120 "$chrome" --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$T/chrome" \
	--screenshot="$T/shot.png" --window-size=1100,1700 "file://$H" >"$T/chrome.log" 2>&1
[ -s "$T/shot.png" ] || { echo "SKIP: render: chromium could not take a screenshot: $(grep -v dbus "$T/chrome.log" | tail -1)"; exit 77; }
python3 - "$T/shot.png" <<'PY' || fail "the screenshot looks blank or lacks the heatmap"
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat, w = 8, b"", 0
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
        assert depth == 8 and ctype in (2, 6) and not interlace, (depth, ctype, interlace)
        bpp = 3 if ctype == 2 else 4
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
raw, stride = zlib.decompress(idat), w * bpp
prev, rows, i = bytearray(stride), [], 0
for _ in range(h):
    f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
    i += 1 + stride
    for x in range(stride):
        a = line[x - bpp] if x >= bpp else 0
        b, c = prev[x], prev[x - bpp] if x >= bpp else 0
        if f == 1: line[x] = (line[x] + a) & 255
        elif f == 2: line[x] = (line[x] + b) & 255
        elif f == 3: line[x] = (line[x] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    rows.append(line)
    prev = line
colours, ink, green = set(), 0, 0
for line in rows:
    for x in range(0, stride, bpp):
        r, g, b = line[x], line[x + 1], line[x + 2]
        colours.add((r, g, b))
        ink += (r, g, b) != (255, 255, 255)
        green += abs(r - 26) < 12 and abs(g - 152) < 12 and abs(b - 80) < 12
total = w * h
print(f"{w}x{h}: {len(colours)} colours, {100 * ink / total:.1f}% not white, {green} fastest-green pixels")
assert len(colours) > 50 and ink > total * 0.03, "blank"
assert green > 500, "no heatmap colours (the fastest cells are green)"
PY
echo "ok"
