#!/usr/bin/env python3
"""timeline.py - runs a command and prints each line it writes (stdout and stderr, a progress
line ended by \r too) with the milliseconds since the spawn, then its exit: where a fatune
process spends its wall before its first result, between its searches and after its output.
The process's exit is its own line, apart from the pipes' end of file: a child it leaves
running (a GPU worker tearing its context down) holds its stderr open after it.

    python3 bench/timeline.py build/fatune search --shape 1x8x512x64 --db FRESH.db --json
"""
import os, selectors, subprocess, sys, time
t0 = time.monotonic()
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
sel = selectors.DefaultSelector()
sel.register(p.stdout, selectors.EVENT_READ, "out")
sel.register(p.stderr, selectors.EVENT_READ, "err")
bufs = {"out": b"", "err": b""}
open_ = 2
exited = None
def check_exit():
    global exited
    if exited is None and p.poll() is not None:
        exited = p.returncode
        print(f"{(time.monotonic()-t0)*1e3:9.1f} ms exit {exited}", flush=True)
while open_:
    check_exit()
    for key, _ in sel.select(timeout=0.002):
        data = os.read(key.fileobj.fileno(), 65536)
        now = time.monotonic() - t0
        if not data:
            sel.unregister(key.fileobj); open_ -= 1
            print(f"{now*1e3:9.1f} ms {key.data} EOF", flush=True)
            continue
        bufs[key.data] += data
        while b"\n" in bufs[key.data] or b"\r" in bufs[key.data]:
            i = min(x for x in (bufs[key.data].find(b"\n"), bufs[key.data].find(b"\r")) if x >= 0)
            line, bufs[key.data] = bufs[key.data][:i], bufs[key.data][i+1:]
            if line.strip():
                print(f"{now*1e3:9.1f} ms {key.data} {line.decode(errors='replace')}", flush=True)
while exited is None:
    time.sleep(0.001)
    check_exit()
