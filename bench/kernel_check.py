#!/usr/bin/env python3
"""kernel_check.py - the attention template's development harness.

  build  compile every compile-time config of the default space (or a subset)
         with NVRTC, the way fatune does (same options), for one or more
         archs; write CUBINs, ptxas resource reports and compile times under
         --out, and fail on any compile error, spill or stack frame (no GPU)
  sass   summarise the SASS of built CUBINs with cuobjdump: HMMA, LDSM,
         LDGSTS, and local memory (LDL/STL), which must be absent (no GPU)
  check  the correctness grid on the GPU: built configs for every head dim,
         dtype and causal flag over self-attention (S=1, 17, 500, 4097, B*H=1),
         GQA decode (S_q 1 and 4 over long KV), chunked prefill (S_q < S_kv)
         and [B,S,H,D] layouts, with the space's splits, against fp64 torch
         (bottom-right causal), outputs poisoned with NaN first
  time   time the space's candidates per shape with fatune's method next to
         torch SDPA's flash, cuDNN and efficient backends, in the same process

Space formulas are evaluated here as fatune evaluates them (SQLite), from
search_spaces/attention.yaml, so the harness checks the formulas too.

Shapes are written BxHxSxD, with H_kv and S_kv after a slash where they differ
from H and S, and ':bshd' for the [B,S,H,D] layout: 1x32/8x1/8192x128 is one
decode step of 32 query heads over 8 KV heads and 8192 cached keys.
"""

import argparse
import collections
import ctypes
import itertools
import json
import os
import re
import sqlite3
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

try:
    import yaml
except ImportError:  # a machine without PyYAML reads a space converted to JSON (`space-json`)
    yaml = None

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
DEFAULT_SPACE = os.path.join(ROOT, "search_spaces", "attention.yaml")
CUDA_HOME = os.environ.get("CUDA_HOME", "/usr/local/cuda")

# ---- the search space ------------------------------------------------------

# The per-arch limits an expression may name (tuner/base/arch.c, ../shared/design/FACTS.md).
ARCH = {
    "sm_80": dict(CC=80, SMEM_STATIC=49152, SMEM_OPTIN=166912, SMEM_PER_SM=167936,
                  SMEM_RESERVED=1024, REGS_PER_SM=65536, THREADS_PER_BLOCK=1024,
                  THREADS_PER_SM=2048),
    "sm_86": dict(CC=86, SMEM_STATIC=49152, SMEM_OPTIN=101376, SMEM_PER_SM=102400,
                  SMEM_RESERVED=1024, REGS_PER_SM=65536, THREADS_PER_BLOCK=1024,
                  THREADS_PER_SM=1536),
    "sm_89": dict(CC=89, SMEM_STATIC=49152, SMEM_OPTIN=101376, SMEM_PER_SM=102400,
                  SMEM_RESERVED=1024, REGS_PER_SM=65536, THREADS_PER_BLOCK=1024,
                  THREADS_PER_SM=1536),
    "sm_90": dict(CC=90, SMEM_STATIC=49152, SMEM_OPTIN=232448, SMEM_PER_SM=233472,
                  SMEM_RESERVED=1024, REGS_PER_SM=65536, THREADS_PER_BLOCK=1024,
                  THREADS_PER_SM=2048),
}


class SpaceError(ValueError):
    pass


class Shape(collections.namedtuple("Shape", "b h s d h_kv s_kv layout")):
    """One attention problem: b, h query heads, s queries, d, h_kv KV heads,
    s_kv keys, layout 0 (bhsd) or 1 (bshd)."""

    @classmethod
    def parse(cls, text):
        """BxH[/H_KV]xS[/S_KV]xD[:bshd|:bhsd]"""
        body, _, lay = text.lower().partition(":")
        try:
            b, h, s, d = body.split("x")
            h, _, hk = h.partition("/")
            s, _, sk = s.partition("/")
            v = cls(int(b), int(h), int(s), int(d), int(hk or h), int(sk or s),
                    {"": 0, "bhsd": 0, "bshd": 1}[lay])
        except (ValueError, KeyError):
            raise argparse.ArgumentTypeError(
                f"shape '{text}' is not BxH[/H_KV]xS[/S_KV]xD[:bshd] (e.g. 1x32/8x1/8192x128)")
        if min(v.b, v.h, v.s, v.d, v.h_kv, v.s_kv) < 1 or v.h % v.h_kv:
            raise argparse.ArgumentTypeError(f"shape '{text}': sizes must be >= 1 and H_KV divide H")
        return v

    def __str__(self):
        t = f"{self.b}x{self.h}" + (f"/{self.h_kv}" if self.h_kv != self.h else "") + f"x{self.s}" \
            + (f"/{self.s_kv}" if self.s_kv != self.s else "") + f"x{self.d}"
        return t + (":bshd" if self.layout else "")


def self_shape(b, h, s, d, layout=0):
    return Shape(b, h, s, d, h, s, layout)


def _ceil_div(a, b):
    if b == 0:
        raise SpaceError("ceil_div by zero")
    return -(-a // b)


def _is_pow2(x):
    return 1 if x > 0 and (x & (x - 1)) == 0 else 0


def _grid(items):
    """A YAML flow sequence splits `ceil_div(S, TILE_M)` at its comma; like
    fatune (tuner/space/space_yaml.c), re-join items with ", " while a parenthesis is open."""
    out, cur, depth = [], None, 0
    for it in items:
        it = str(it)
        cur = it if cur is None else cur + ", " + it
        depth += it.count("(") - it.count(")")
        if depth == 0:
            out.append(cur)
            cur = None
    if cur is not None or len(out) != 3:
        raise SpaceError(f"a grid is exactly 3 expressions [x, y, z], got {items}")
    return out


class Space:
    def __init__(self, path):
        self.path = path
        with open(path) as f:
            if path.endswith(".json"):
                doc = json.load(f)
            elif yaml is None:
                raise SpaceError(f"{path}: no PyYAML here: convert the space with `space-json` elsewhere")
            else:
                doc = yaml.safe_load(f)
        if doc.get("fatune_space") != 1:
            raise SpaceError(f"{path}: 'fatune_space' must be 1")
        self.name = doc["name"]
        t = doc["template"]
        self.template = os.path.normpath(os.path.join(os.path.dirname(path), t["file"]))
        self.abi = int(t.get("abi", 1))  # fatune compiles the template with -DFATUNE_ABI=<abi>
        self.family = t.get("family")
        self.kernel = t["kernel"]
        self.combine_kernel = t.get("combine_kernel")
        self.params = []  # (name, values, kind)
        for name, spec in doc["parameters"].items():
            kind = "compile"
            if isinstance(spec, list):
                values = spec
            elif "values" in spec:
                values, kind = spec["values"], spec.get("kind", "compile")
            else:
                r = spec["range"]
                values = list(range(r[0], r[1] + 1, r[2] if len(r) > 2 else 1))
                kind = spec.get("kind", "compile")
            self.params.append((name, [int(v) for v in values], kind))
        self.constraints = [(k, str(v)) for k, v in (doc.get("constraints") or {}).items()]
        self.smem = str(doc["smem_bytes"])
        launch = doc["launch"]
        self.threads = str(launch["threads"])
        self.grid = _grid(launch["grid"])
        self.combine_threads = str(launch.get("combine_threads", 0))
        self.combine_pdl = str(launch.get("combine_pdl", 0))
        self.combine_grid = _grid(launch.get("combine_grid", [0, 0, 0]))
        self.workspace = str((doc.get("workspace") or {}).get("bytes", 0))
        self.db = sqlite3.connect(":memory:", cached_statements=512)
        self.db.create_function("ceil_div", 2, _ceil_div, deterministic=True)
        self.db.create_function("is_pow2", 1, _is_pow2, deterministic=True)

    def compile_params(self):
        return [p[0] for p in self.params if p[2] == "compile"]

    def launch_params(self):
        return [p[0] for p in self.params if p[2] == "launch"]

    def eval(self, expr, names):
        # bound values, so that each expression is parsed once (sqlite3's
        # statement cache) however many candidates it is evaluated for
        cols = ", ".join(f":{k} AS {k}" for k in names)
        try:
            return self.db.execute(f"SELECT ({expr}) FROM (SELECT {cols})",
                                   {k: int(v) for k, v in names.items()}).fetchone()[0]
        except sqlite3.Error as e:
            raise SpaceError(f"{self.path}: expression '{expr}': {e}") from e

    def names(self, shape, causal, arch, values, dtype="fp16"):
        """The names an expression may use (search_spaces/README.md): the shape
        (S the queries, S_KV the keys, H the query heads, H_KV the KV heads,
        LAYOUT 0 bhsd / 1 bshd, DTYPE 0 fp16 / 1 bf16), the arch's limits, the
        parameters."""
        if not isinstance(shape, Shape):
            shape = self_shape(*shape)
        n = dict(B=shape.b, H=shape.h, S=shape.s, D=shape.d, CAUSAL=int(causal), DTYPE_BYTES=2,
                 S_KV=shape.s_kv, H_KV=shape.h_kv, LAYOUT=shape.layout, DTYPE=int(dtype == "bf16"))
        n.update(ARCH[arch])
        n.update(values)
        return n

    def geometry(self, shape, causal, arch, values, dtype="fp16"):
        """smem, threads, grid, combine geometry of one fully specified config."""
        n = self.names(shape, causal, arch, values, dtype)
        return dict(
            smem=self.eval(self.smem, n),
            threads=self.eval(self.threads, n),
            grid=[self.eval(g, n) for g in self.grid],
            combine_threads=self.eval(self.combine_threads, n),
            combine_grid=[self.eval(g, n) for g in self.combine_grid],
            pdl=int(self.eval(self.combine_pdl, n) != 0),
            num_splits=int(values.get("NUM_SPLITS", 1)),
            workspace=self.eval(self.workspace, n),
        )

    def candidates(self, shape, causal, arch, dtype="fp16"):
        """Every config that passes the constraints and fits the arch's opt-in
        shared memory, as (values dict, geometry dict), in fatune's order (the
        first parameter slowest). The constraints run in one query over the
        product of the parameters' values (a table per parameter)."""
        names = [p[0] for p in self.params]
        if not getattr(self, "_tables", False):
            for name, vals, _ in self.params:
                self.db.execute(f"CREATE TEMP TABLE v_{name} (i INTEGER, {name} INTEGER)")
                self.db.executemany(f"INSERT INTO v_{name} VALUES (?, ?)", list(enumerate(vals)))
            self._tables = True
        fixed = self.names(shape, causal, arch, {}, dtype)
        shape_cols = ", ".join(f":{k} AS {k}" for k in fixed)
        where = " AND ".join(f"(({e}) != 0)" for _, e in self.constraints) or "1"
        sql = (f"SELECT {', '.join(f'v_{n}.{n}' for n in names)} FROM "
               + ", ".join(f"v_{n}" for n in names) + f", (SELECT {shape_cols}) WHERE {where} "
               + "ORDER BY " + ", ".join(f"v_{n}.i" for n in names))
        try:
            rows = self.db.execute(sql, {k: int(v) for k, v in fixed.items()}).fetchall()
        except sqlite3.Error as e:
            raise SpaceError(f"{self.path}: constraints: {e}") from e
        out = []
        for combo in rows:
            values = dict(zip(names, combo))
            g = self.geometry(shape, causal, arch, values, dtype)
            if g["smem"] <= ARCH[arch]["SMEM_OPTIN"]:
                out.append((values, g))
        return out


def config_text(values):
    return ",".join(f"{k}={v}" for k, v in values.items())


def parse_config(text):
    out = {}
    for part in text.split(","):
        k, _, v = part.partition("=")
        out[k.strip()] = int(v)
    return out


# ---- NVRTC -------------------------------------------------------------------

_nvrtc = None


def nvrtc():
    global _nvrtc
    if _nvrtc is None:
        for name in ("libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12"):
            for d in (os.path.join(CUDA_HOME, "lib64"), os.path.join(CUDA_HOME, "lib"), ""):
                try:
                    _nvrtc = ctypes.CDLL(os.path.join(d, name) if d else name)
                    break
                except OSError:
                    continue
            if _nvrtc is not None:
                break
        if _nvrtc is None:
            sys.exit(f"kernel_check: cannot load libnvrtc (looked in {CUDA_HOME}/lib64)")
        _nvrtc.nvrtcGetErrorString.restype = ctypes.c_char_p
    return _nvrtc


def _nvrtc_check(res, what):
    if res != 0:
        raise RuntimeError(f"{what} failed: {nvrtc().nvrtcGetErrorString(res).decode()}")


def nvrtc_options(arch, template, defines):
    """fatune's NVRTC options (tuner/compile/nvrtc.h), then -D in the given order
    (FATUNE_ABI among them for an ABI v2 space)."""
    opts = [f"-arch={arch}", "--std=c++17", "-Xptxas=-v", "-default-device",
            f"-I{os.path.dirname(template)}", f"-I{os.path.join(CUDA_HOME, 'include')}"]
    return opts + [f"-D{k}={v}" for k, v in defines.items()]


def nvrtc_compile(template, arch, defines):
    """Returns (cubin bytes or None, log text, milliseconds)."""
    lib = nvrtc()
    with open(template, "rb") as f:
        src = f.read()
    prog = ctypes.c_void_p()
    t0 = time.perf_counter()
    _nvrtc_check(lib.nvrtcCreateProgram(ctypes.byref(prog), src, os.path.basename(template).encode(),
                                        0, None, None), "nvrtcCreateProgram")
    try:
        opts = [o.encode() for o in nvrtc_options(arch, template, defines)]
        res = lib.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
        ms = (time.perf_counter() - t0) * 1000.0
        size = ctypes.c_size_t()
        _nvrtc_check(lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size)), "nvrtcGetProgramLogSize")
        buf = ctypes.create_string_buffer(size.value)
        _nvrtc_check(lib.nvrtcGetProgramLog(prog, buf), "nvrtcGetProgramLog")
        log = buf.value.decode(errors="replace")
        if res != 0:
            return None, log, ms
        _nvrtc_check(lib.nvrtcGetCUBINSize(prog, ctypes.byref(size)), "nvrtcGetCUBINSize")
        cubin = ctypes.create_string_buffer(size.value)
        _nvrtc_check(lib.nvrtcGetCUBIN(prog, cubin), "nvrtcGetCUBIN")
        return cubin.raw, log, ms
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(prog))


def ptxas_resources(log, kernel):
    """registers, stack frame, spill stores, spill loads of one kernel, from a ptxas -v log."""
    parts = re.split(r"Compiling entry function '", log)
    for p in parts[1:]:
        if not p.startswith(kernel + "'"):
            continue
        r = dict(regs=-1, stack=-1, spill_st=-1, spill_ld=-1)
        m = re.search(r"Used (\d+) registers", p)
        if m:
            r["regs"] = int(m.group(1))
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", p)
        if m:
            r["stack"], r["spill_st"], r["spill_ld"] = (int(x) for x in m.groups())
        return r
    return None


# ---- build -----------------------------------------------------------------

DTYPES = ("fp16", "bf16")


def config_key(d, causal, dtype, values):
    return f"d{d}_c{int(causal)}_{dtype}_" + "_".join(f"{k}{v}" for k, v in values.items())


def coverage_shapes(d):
    """Shapes whose candidates, together, hold every compile-time config of
    the space: self-attention and GQA (32 over 8 heads), bhsd and bshd, long
    sequences (a short one only prunes more)."""
    return [Shape(1, 8, 8192, d, 8, 8192, lay) for lay in (0, 1)] + \
           [Shape(1, 32, 8192, d, 8, 8192, lay) for lay in (0, 1)]


def compile_configs(space, d, arch, causal=0):
    """Distinct compile-time configs of the space for head dim d, as (values,
    a shape that has them)."""
    seen = []
    for shape in coverage_shapes(d):
        for values, g in space.candidates(shape, causal, arch):
            cv = {k: values[k] for k in space.compile_params()}
            if cv not in [c for c, _ in seen]:
                seen.append((cv, shape))
    return seen


def cmd_build(args):
    space = Space(args.space)
    jobs = []
    for arch in args.arch:
        for d in args.dims:
            for causal in args.causal:
                for dtype in args.dtype:
                    for cv, shape in compile_configs(space, d, arch, causal):
                        values = dict(cv)
                        if args.where and not space.eval(args.where, dict(
                                values, D=d, CAUSAL=int(causal), DTYPE=int(dtype == "bf16"),
                                CC=ARCH[arch]["CC"])):
                            continue
                        g = space.geometry(shape, causal, arch, dict(values, NUM_SPLITS=1))
                        defines = dict(values, HEAD_DIM=d, IS_CAUSAL=int(causal),
                                       FATUNE_BF16=int(dtype == "bf16"), FATUNE_SMEM_BYTES=g["smem"])
                        if space.abi != 1:
                            defines["FATUNE_ABI"] = space.abi
                        jobs.append((arch, d, causal, dtype, values, defines, g["smem"]))
    if args.limit:
        jobs = jobs[:args.limit]
    os.makedirs(args.out, exist_ok=True)
    # every finished compile is appended to progress.jsonl at once, so a long
    # build can be watched, and --resume reuses what an earlier run finished
    progress = os.path.join(args.out, "progress.jsonl")
    done = {}
    if args.resume and os.path.exists(progress):
        with open(progress) as f:
            for line in f:
                try:
                    e = json.loads(line)
                except ValueError:
                    continue  # a line cut by a kill
                done[(e["arch"], e["key"])] = e
    lock = threading.Lock()
    pf = open(progress, "a" if args.resume else "w")

    def run(job):
        arch, d, causal, dtype, values, defines, smem = job
        key = config_key(d, causal, dtype, values)
        if (arch, key) in done:
            return done[(arch, key)]
        ent = compile_one(job, key)
        with lock:
            pf.write(json.dumps(ent) + "\n")
            pf.flush()
        return ent

    def compile_one(job, key):
        arch, d, causal, dtype, values, defines, smem = job
        cubin, log, ms = nvrtc_compile(space.template, arch, defines)
        ent = dict(key=key, arch=arch, d=d, causal=causal, dtype=dtype, values=values, smem=smem,
                   ms=round(ms, 1), ok=cubin is not None)
        if cubin is None:
            ent["log"] = log[-4000:]
            return ent
        path = os.path.join(args.out, arch, key + ".cubin")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(cubin)
        ent["cubin"] = os.path.relpath(path, args.out)
        ent["fwd"] = ptxas_resources(log, space.kernel)
        ent["combine"] = ptxas_resources(log, space.combine_kernel) if space.combine_kernel else None
        return ent

    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=args.jobs) as ex:
        entries = list(ex.map(run, jobs))
    wall = time.perf_counter() - t0
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump(dict(space=os.path.relpath(args.space, ROOT), entries=entries), f, indent=1)

    bad = 0
    for e in entries:
        why = None
        if not e["ok"]:
            why = "compile failed:\n" + e["log"]
        else:
            for kname in ("fwd", "combine"):
                r = e[kname]
                if r is None and kname == "fwd":
                    why = "no ptxas report for the main kernel"
                elif r and (r["stack"] != 0 or r["spill_st"] != 0 or r["spill_ld"] != 0):
                    why = f"{kname}: {r['stack']} B stack, {r['spill_st']}/{r['spill_ld']} B spilled"
        if why:
            bad += 1
            print(f"FAIL {e['arch']} {e['key']}: {why}")
    ms = sorted(e["ms"] for e in entries)
    regs = sorted(e["fwd"]["regs"] for e in entries if e["ok"] and e["fwd"])
    print(f"built {len(entries)} configs for {','.join(args.arch)} in {wall:.1f} s wall "
          f"({args.jobs} threads); NVRTC per config: median {ms[len(ms) // 2]:.0f} ms, "
          f"min {ms[0]:.0f}, max {ms[-1]:.0f}; registers {regs[0] if regs else '-'}.."
          f"{regs[-1] if regs else '-'}; {bad} failed or spilled")
    return 1 if bad else 0


def load_manifest(builds):
    """Entries of one or more build directories (later ones win on equal keys);
    a build that was stopped before writing manifest.json is read from its
    progress.jsonl."""
    by_key = {}
    for build in ([builds] if isinstance(builds, str) else builds):
        path = os.path.join(build, "manifest.json")
        if os.path.exists(path):
            with open(path) as f:
                ents = json.load(f)["entries"]
        else:
            ents = []
            with open(os.path.join(build, "progress.jsonl")) as f:
                for line in f:
                    try:
                        ents.append(json.loads(line))
                    except ValueError:
                        pass
        for e in ents:
            if e.get("cubin"):
                e["cubin"] = os.path.join(build, e["cubin"])
            by_key[(e["arch"], e["key"])] = e
    return list(by_key.values())


# ---- sass --------------------------------------------------------------------

def cmd_sass(args):
    entries = [e for e in load_manifest(args.build) if e["ok"]]
    entries = [e for e in entries if e["arch"] in args.arch and e["dtype"] in args.dtype]
    tool = os.path.join(CUDA_HOME, "bin", "cuobjdump")

    def one(e):
        out = subprocess.run([tool, "-sass", e["cubin"]], capture_output=True, text=True)
        if out.returncode != 0:
            return e, None, out.stderr.strip()
        fwd = out.stdout
        i = fwd.find("Function : fatune_attention_fwd")
        fwd = fwd[i:] if i >= 0 else fwd
        j = fwd.find("Function : ", 10)
        fwd = fwd[:j] if j > 0 else fwd
        c = {op: len(re.findall(r"\b" + op + r"[\s.]", fwd)) for op in
             ("HMMA", "LDSM", "LDGSTS", "LDL", "STL", "MUFU", "BAR", "STG", "LDS", "STS")}
        return e, c, None

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as ex:
        res = list(ex.map(one, entries))
    bad = 0
    print(f"{'config':58s} {'regs':>4s} HMMA LDSM LDGSTS MUFU  LDL STL")
    for e, c, err in res:
        if c is None:
            print(f"{e['key']}: cuobjdump failed: {err}")
            bad += 1
            continue
        local = c["LDL"] + c["STL"]
        bad += local > 0 or c["HMMA"] == 0
        print(f"{e['arch']} {e['key']:52s} {e['fwd']['regs']:4d} {c['HMMA']:4d} {c['LDSM']:4d} "
              f"{c['LDGSTS']:6d} {c['MUFU']:4d} {c['LDL']:4d} {c['STL']:3d}"
              + ("  <-- local memory" if local else ""))
    print(f"sass: {len(res)} cubins, {bad} with local memory, no HMMA or unreadable")
    return 1 if bad else 0


# ---- check (GPU) -------------------------------------------------------------

# relative L2 error vs fp64: fp16 attention lands near 3e-4, bf16 near 2e-3
# (../shared/design/FACTS.md); the bounds leave ~6x / 5x headroom
TOLERANCE = {"fp16": 2e-3, "bf16": 1e-2}


def torch_dtype(torch, name):
    return {"fp16": torch.float16, "bf16": torch.bfloat16}[name]


def check_shapes(d):
    """(shape, causal flags, splits to try) for head dim d.

    Self-attention: S=1, a tile-odd S with odd B and H, a non-multiple of every
    tile with 8 heads, and one past a power of two with B*H = 1. GQA 32/8
    decode (1 and 4 queries over 1000 and 8192 keys, splits up to 32), chunked
    prefill (512 queries over 4096 keys), more queries than keys (causal rows
    that see no key must be 0), and the bshd layout of several of them."""
    self_splits = (1, 2, 3, 4)
    dec_splits = (1, 2, 5, 8, 13, 32)
    shapes = [
        (self_shape(1, 1, 1, d), self_splits),
        (self_shape(2, 3, 17, d), self_splits),
        (self_shape(1, 8, 500, d), self_splits),
        (self_shape(1, 1, 4097, d), self_splits),
        (Shape(1, 32, 1, d, 8, 1000, 0), dec_splits),
        (Shape(1, 32, 1, d, 8, 8192, 0), dec_splits),
        (Shape(2, 32, 4, d, 8, 1000, 0), dec_splits),
        (Shape(1, 32, 4, d, 8, 8192, 0), dec_splits),
        (Shape(1, 32, 512, d, 8, 4096, 0), (1, 3)),
        (Shape(1, 4, 512, d, 4, 4096, 0), (1, 2)),
        (Shape(2, 6, 100, d, 2, 37, 0), (1, 2)),
        (Shape(2, 3, 17, d, 3, 17, 1), self_splits),
        (Shape(1, 32, 1, d, 8, 8192, 1), dec_splits),
        (Shape(2, 32, 4, d, 8, 1000, 1), dec_splits),
        (Shape(1, 32, 512, d, 8, 4096, 1), (1, 3)),
        (Shape(1, 8, 500, d, 1, 500, 1), (1, 2)),
    ]
    return shapes


def make_inputs(torch, shape, dtype):
    """q, k, v (logical [B,H,S,D] views, bshd storage when shape.layout) with
    fresh values in [-1, 1] (never all zero), and a NaN-poisoned o."""
    b, h, s, d, hk, sk, lay = shape

    def t(heads, rows, fill=None):
        x = (torch.full((b, rows, heads, d), fill, device="cuda", dtype=dtype) if fill is not None
             else torch.rand((b, rows, heads, d), device="cuda", dtype=dtype) * 2 - 1)
        if lay:
            return x.transpose(1, 2)
        return x.transpose(1, 2).contiguous()
    return t(h, s), t(hk, sk), t(hk, sk), t(h, s, float("nan"))


def cmd_check(args):
    import random
    import torch
    import ftkernel as fk

    space = Space(args.space)
    entries = [e for e in load_manifest(args.build) if e["ok"] and e["arch"] == args.run_arch]
    log = open(args.log, "w") if args.log else None
    torch.manual_seed(args.seed)
    rnd = random.Random(args.seed)
    fails = runs = errors = skipped = 0
    worst = {}
    t0 = time.perf_counter()
    groups = sorted({(e["d"], e["causal"], e["dtype"]) for e in entries})
    # every group gets an equal share of the budget; within it, each shape an
    # equal share, configs in a random order, each with one of the shape's
    # splits in turn (so a short budget still covers every code path a little)
    per_group = args.budget / max(1, len(groups))
    for gi, (d, causal, dtype) in enumerate(groups):
        group = [e for e in entries if (e["d"], e["causal"], e["dtype"]) == (d, causal, dtype)]
        mods = {}
        tol = TOLERANCE[dtype]
        g_end = t0 + per_group * (gi + 1)
        shapes = [(sh, sp) for sh, sp in check_shapes(d) if not (args.quick and sh.s_kv > 4096)]
        for si, (shape, splits_list) in enumerate(shapes):
            s_end = time.perf_counter() + (g_end - time.perf_counter()) / (len(shapes) - si)
            dt = torch_dtype(torch, dtype)
            q, k, v, o = make_inputs(torch, shape, dt)
            ref = fk.reference(q, k, v, causal)
            dense = shape.layout == 0 or shape.h_kv == 1
            todo = [e for e in group if dense or not e["values"].get("DENSE_KV", 0)]
            rnd.shuffle(todo)
            for n, e in enumerate(todo):
                if time.perf_counter() > s_end:
                    skipped += len(todo) - n
                    break
                splits = splits_list[n % len(splits_list)] if not args.all_splits else None
                for sp in ([splits] if splits else splits_list):
                    if e["key"] not in mods:
                        mods[e["key"]] = fk.Module(e["cubin"])
                    values = dict(e["values"], NUM_SPLITS=sp)
                    g = space.geometry(shape, causal, args.run_arch, values)
                    att = fk.Attention(mods[e["key"]], g, shape.b, shape.h, shape.s, d, shape.h_kv,
                                       shape.s_kv)
                    o.fill_(float("nan"))
                    att.poison_partials()
                    try:
                        # a workspace (zeroed once, zero_once) must be left zero:
                        # a second call relies on it (the in-kernel combine's counters)
                        for _ in range(2 if att.workspace is not None else 1):
                            att(q, k, v, o)
                        torch.cuda.synchronize()
                        err, nonfinite = fk.rel_l2(o, ref)
                        if att.workspace is not None and bool(att.workspace.any()):
                            nonfinite = -2  # reported as a failure below
                            print(f"FAIL {e['key']} {shape} splits={sp}: the workspace is not "
                                  f"zero after the calls")
                    except Exception as ex:  # a launch failure or a fault: report and go on
                        err, nonfinite = float("inf"), -1
                        errors += 1
                        print(f"ERROR {e['key']} {shape} splits={sp}: {ex}")
                        if errors >= 10:  # a fault loses the context: nothing after it can run
                            print("check: stopping after 10 errors")
                            return 1
                    runs += 1
                    ok = nonfinite == 0 and err <= tol
                    wk = (d, causal, dtype)
                    worst[wk] = max(worst.get(wk, 0.0), err)
                    line = (f"{'ok  ' if ok else 'FAIL'} {e['key']:60s} {str(shape):24s} c={causal} "
                            f"splits={sp} rel_l2={err:.2e} nonfinite={nonfinite}")
                    if log:
                        log.write(line + "\n")
                    if not ok:
                        fails += 1
                        if fails <= 40:
                            print(line)
            del q, k, v, o, ref
        for m in mods.values():
            m.unload()
        print(f"  d={d:3d} causal={causal} {dtype}: {len(group)} configs, worst rel_l2 "
              f"{worst.get((d, causal, dtype), 0):.2e} (tolerance {tol:.0e}), "
              f"{runs} runs so far, {time.perf_counter() - t0:.0f} s")
        sys.stdout.flush()
    print(f"check: {runs} runs over {len(entries)} configs, {fails} failed, {skipped} (config, shape) "
          f"pairs left out by the budget ({time.perf_counter() - t0:.0f} s)")
    return 1 if fails or errors else 0


# ---- time (GPU) --------------------------------------------------------------

# >= 8 shapes: B*H from 8 to 256, S from 256 to 8192, D 64 and 128
SUITE = ["1x8x512x64", "1x8x2048x64", "16x16x256x64", "4x16x2048x64", "2x16x4096x64",
         "1x8x8192x64", "8x16x1024x128", "4x16x2048x128", "2x8x2048x128", "1x32x8192x128"]


def parse_shape(text):
    return Shape.parse(text)


def flops(shape, causal):
    """4 B H D x (query, key) pairs seen: S_q S_kv, less the masked ones when
    causal (bottom-right: query i sees min(S_kv, max(0, i + 1 + S_kv - S_q)))"""
    b, h, s, d, hk, sk, _ = shape
    if not causal:
        pairs = s * sk
    else:
        off = sk - s
        lo = max(0, -off)  # the first query that sees a key
        pairs = sum(min(sk, i + 1 + off) for i in range(lo, s))
    return 4.0 * b * h * d * pairs


def kv_bytes(shape):
    """bytes of K and V, each read once: what bounds a decode step"""
    return 2 * 2 * shape.b * shape.h_kv * shape.s_kv * shape.d


def time_sdpa(torch, fk, q, k, v, causal, backend):
    """torch SDPA on the same inputs. Its is_causal aligns top-left, so with
    S_q != S_kv a causal problem becomes an explicit bottom-right mask (no
    mask at all for one query: it sees every key)."""
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    be = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION,
          "efficient": SDPBackend.EFFICIENT_ATTENTION}[backend]
    s, sk = q.shape[2], k.shape[2]
    kw = dict(enable_gqa=True) if k.shape[1] != q.shape[1] else {}
    if causal and s == sk:
        kw["is_causal"] = True
    elif causal and s > 1:
        i = torch.arange(s, device=q.device).view(s, 1)
        j = torch.arange(sk, device=q.device).view(1, sk)
        kw["attn_mask"] = j <= i + (sk - s)
    try:
        with sdpa_kernel([be]):
            def fn():
                return F.scaled_dot_product_attention(q, k, v, **kw)
            out = fn()
            torch.cuda.synchronize()
            one = fk.quick_time(fn)
            kk, rr = fk.plan_timing(one)
            t = fk.time_graph(fn, kk, rr)
            return t, out
    except RuntimeError as ex:
        return {"error": str(ex).splitlines()[0][:120]}, None


def cmd_time(args):
    import torch
    import ftkernel as fk

    space = Space(args.space)
    by_key = {(e["arch"], e["key"]): e for e in load_manifest(args.build) if e["ok"]}
    torch.manual_seed(args.seed)
    rows = []
    jl = open(args.jsonl, "a") if args.jsonl else None
    shapes = [(parse_shape(s), c) for s in args.shape for c in args.causal]
    t_start = time.perf_counter()
    for idx, (shape, causal) in enumerate(shapes):
        b, h, s, d = shape.b, shape.h, shape.s, shape.d
        dt = torch_dtype(torch, args.dtype)
        q, k, v, o = make_inputs(torch, shape, dt)
        ref = fk.reference(q, k, v, causal)
        left = args.budget - (time.perf_counter() - t_start)
        deadline = time.perf_counter() + left / (len(shapes) - idx)
        peers = {}
        for be in ("flash", "cudnn", "efficient"):
            t, out = time_sdpa(torch, fk, q, k, v, causal, be)
            if out is not None:
                t["rel_l2"] = fk.rel_l2(out, ref)[0]
            peers[be] = t
        cands = space.candidates(shape, causal, args.run_arch, args.dtype)
        if args.only:
            cands = [c for c in cands if all(c[0].get(k2) == v2 for k2, v2 in args.only.items())]
        if args.shuffle:  # a budget that cannot cover them all then samples the whole space
            import random
            random.Random(args.seed).shuffle(cands)
        results = []
        mods = {}
        launch = {}
        skipped = 0
        for values, g in cands:
            if time.perf_counter() > deadline:
                skipped += 1
                continue
            cv = {k2: values[k2] for k2 in space.compile_params()}
            e = by_key.get((args.run_arch, config_key(d, causal, args.dtype, cv)))
            if e is None:
                skipped += 1
                continue
            if e["key"] not in mods:
                mods[e["key"]] = fk.Module(e["cubin"])
            att = fk.Attention(mods[e["key"]], g, b, h, s, d, shape.h_kv, shape.s_kv)
            o.fill_(float("nan"))
            try:
                att(q, k, v, o)
                torch.cuda.synchronize()
                err, nonfinite = fk.rel_l2(o, ref)
                one = fk.quick_time(lambda: att(q, k, v, o))
                kk, rr = fk.plan_timing(one, samples=args.samples)
                t = fk.time_graph(lambda: att(q, k, v, o), kk, rr)
            except Exception as ex:
                print(f"ERROR {shape} {config_text(values)}: {ex}")
                continue
            r = dict(shape=str(shape), causal=causal, dtype=args.dtype,
                     config=config_text(values), us=t["median"], us_min=t["min"], us_p90=t["p90"],
                     rel_l2=err, nonfinite=nonfinite, calls=kk, samples=rr)
            results.append(r)
            launch[r["config"]] = (e["key"], g)
            if jl:
                jl.write(json.dumps(r) + "\n")
        good = [r for r in results if r["nonfinite"] == 0 and r["rel_l2"] <= TOLERANCE[args.dtype]]
        good.sort(key=lambda r: r["us"])
        best = good[0] if good else None
        if best:
            # the same two timings again, last: their drift is the run's noise
            key, g = launch[best["config"]]
            att = fk.Attention(mods[key], g, b, h, s, d, shape.h_kv, shape.s_kv)
            best["us_again"] = fk.time_graph(lambda: att(q, k, v, o), best["calls"],
                                             best["samples"])["median"]
            again, _ = time_sdpa(torch, fk, q, k, v, causal, "flash")
            if "median" in again and "median" in peers["flash"]:
                peers["flash"]["again"] = again["median"]
        for m in mods.values():
            m.unload()
        row = dict(shape=str(shape), causal=causal, candidates=len(cands),
                   timed=len(results), wrong=len(results) - len(good), skipped=skipped, best=best,
                   top=good[:5], peers=peers, gflop=flops(shape, causal) / 1e9,
                   kv_mb=kv_bytes(shape) / 1e6)
        rows.append(row)
        if jl:
            jl.write(json.dumps(dict(summary=row)) + "\n")
        print_row(row)
        sys.stdout.flush()
    print()
    print_table(rows)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


def _us(p):
    return p.get("median") if p and "median" in p else None


def print_row(r):
    best = r["best"]
    msg = f"{r['shape']} causal={r['causal']}: {r['timed']}/{r['candidates']} timed"
    if r["wrong"]:
        msg += f", {r['wrong']} WRONG"
    if best:
        msg += (f"; best {best['us']:.2f} us (again {best.get('us_again', 0):.2f}) {best['config']} "
                f"(rel_l2 {best['rel_l2']:.1e})")
    for be, p in r["peers"].items():
        msg += f"; {be} " + (f"{p['median']:.2f}" if "median" in p else "n/a")
        if "again" in p:
            msg += f" (again {p['again']:.2f})"
    print(msg)
    for t in r["top"][1:]:
        print(f"    {t['us']:.2f} us {t['config']}")


def print_table(rows):
    print(f"{'shape':>22s} {'c':>1s} {'fatune us':>9s} {'flash':>8s} {'cudnn':>8s} {'effic':>8s} "
          f"{'/flash':>6s} {'/cudnn':>6s} {'/best':>6s} {'TFLOP/s':>7s} {'KV GB/s':>7s}  best config")
    for r in rows:
        best = r["best"]
        f, c, e = (_us(r["peers"].get(k)) for k in ("flash", "cudnn", "efficient"))
        ours = best["us"] if best else None
        peer_best = min([x for x in (f, c, e) if x] or [None]) if any((f, c, e)) else None

        def ratio(x):
            return f"{ours / x:6.2f}" if ours and x else "   n/a"

        def cell(x):
            return f"{x:8.2f}" if x else "     n/a"
        print(f"{r['shape']:>22s} {r['causal']:1d} {(f'{ours:9.2f}' if ours else '      n/a')} "
              f"{cell(f)} {cell(c)} {cell(e)} {ratio(f)} {ratio(c)} {ratio(peer_best)} "
              f"{(r['gflop'] * 1e3 / ours if ours else 0):7.1f} "
              f"{(r['kv_mb'] * 1e-3 / (ours * 1e-6) if ours else 0):7.0f}  {best['config'] if best else '-'}")


# ---- fakedb ------------------------------------------------------------------

def cmd_fakedb(args):
    """A tuning DB with hand-made `best` rows (fatune's db/schema.sql) and a cache
    holding their CUBINs, to exercise compare_torch.py before the tuner stores any."""
    space = Space(args.space)
    entries = {e["key"]: e for e in load_manifest(args.build) if e["ok"] and e["arch"] == args.arch}
    os.makedirs(os.path.join(args.out, "cache", "cubin"), exist_ok=True)
    path = os.path.join(args.out, "fatune.db")
    if os.path.exists(path):
        os.remove(path)
    db = sqlite3.connect(path)
    db.executescript(open(os.path.join(ROOT, "db", "schema.sql")).read())
    for item in args.row:
        shape_text, causal, dtype, cfg = item.split(":")
        shape, causal, values = parse_shape(shape_text), int(causal), parse_config(cfg)
        cv = {k: values[k] for k in space.compile_params()}
        e = entries[config_key(shape[3], causal, dtype, cv)]
        g = space.geometry(shape, causal, args.arch, values)
        key = "handmade-" + e["key"]
        with open(e["cubin"], "rb") as f, open(os.path.join(args.out, "cache", "cubin", key + ".cubin"),
                                                "wb") as o:
            o.write(f.read())
        db.execute("INSERT INTO best (arch, device, template_name, b, h, s, d, dtype, causal, config, "
                   "compile_key, fatune_version, smem_bytes, threads, grid_x, grid_y, grid_z, "
                   "combine_threads, combine_grid_x, combine_grid_y, combine_grid_z, updated_at) "
                   "VALUES (?, 'hand-made', 'attention', ?, ?, ?, ?, ?, ?, ?, ?, 'hand-made', ?, ?, ?, ?, ?, "
                   "?, ?, ?, ?, datetime('now'))",
                   (args.arch, *shape, dtype, causal, config_text(values), key, g["smem"], g["threads"],
                    *g["grid"], g["combine_threads"], *g["combine_grid"]))
    db.commit()
    print(f"wrote {path} ({len(args.row)} rows) and {args.out}/cache/cubin")
    return 0


# ---- space-json ----------------------------------------------------------------

def cmd_space_json(args):
    """The space as JSON (template path made absolute-free: relative to the output's directory)."""
    with open(args.space) as f:
        doc = yaml.safe_load(f)
    tpl = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(args.space)), doc["template"]["file"]))
    doc["template"]["file"] = os.path.relpath(tpl, os.path.dirname(os.path.abspath(args.out)))
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)
    return 0


# ---- main --------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)

    def common(p, gpu):
        p.add_argument("--space", default=DEFAULT_SPACE)
        p.add_argument("--build", nargs="+", default=[os.path.join(ROOT, ".ftbuild")],
                       help="build directories (see build --out)")
        if gpu:
            p.add_argument("--run-arch", default="sm_90", help="which built arch to run")
            p.add_argument("--seed", type=int, default=int(time.time()))

    p = sub.add_parser("build")
    p.add_argument("--space", default=DEFAULT_SPACE)
    p.add_argument("--out", default=os.path.join(ROOT, ".ftbuild"))
    p.add_argument("--arch", nargs="+", default=["sm_90"])
    p.add_argument("--dims", nargs="+", type=int, default=[32, 64, 128])
    p.add_argument("--causal", nargs="+", type=int, default=[0, 1])
    p.add_argument("--dtype", nargs="+", default=list(DTYPES))
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    p.add_argument("--limit", type=int, default=0, help="build only the first N (for timing NVRTC)")
    p.add_argument("--resume", action="store_true",
                   help="reuse the configs an earlier build into --out finished (progress.jsonl)")
    p.add_argument("--where", help="build only configs where this space expression holds, "
                   "e.g. 'TILE_M == 32 * NUM_WARPS_PER_BLOCK'")

    p = sub.add_parser("sass")
    common(p, False)
    p.add_argument("--arch", nargs="+", default=["sm_90"])
    p.add_argument("--dtype", nargs="+", default=["fp16"])

    p = sub.add_parser("check")
    common(p, True)
    p.add_argument("--all-splits", action="store_true",
                   help="run every config with each of a shape's splits (default: one, in turn)")
    p.add_argument("--budget", type=float, default=1e9, help="seconds for the whole grid")
    p.add_argument("--quick", action="store_true", help="leave out the shapes with more than 4096 keys")
    p.add_argument("--log", help="write every run's line here")

    p = sub.add_parser("time")
    common(p, True)
    p.add_argument("--shape", nargs="+", default=SUITE)
    p.add_argument("--causal", nargs="+", type=int, default=[0, 1])
    p.add_argument("--dtype", default="fp16", choices=DTYPES)
    p.add_argument("--budget", type=float, default=240.0, help="seconds for all shapes")
    p.add_argument("--only", type=lambda t: parse_config(t), default=None,
                   help="restrict to configs with these values, e.g. NUM_WARPS_PER_BLOCK=4")
    p.add_argument("--json", help="write the summary rows here")
    p.add_argument("--samples", type=int, default=30, help="timed samples per candidate (fatune: 30)")
    p.add_argument("--shuffle", action="store_true", help="time the candidates in a random order")
    p.add_argument("--jsonl", help="append every timed candidate here")

    p = sub.add_parser("fakedb")
    common(p, False)
    p.add_argument("--arch", default="sm_90")
    p.add_argument("--out", required=True)
    p.add_argument("--row", action="append", required=True,
                   help="SHAPE:CAUSAL:DTYPE:CONFIG, e.g. 1x8x512x64:0:fp16:NUM_WARPS_PER_BLOCK=4,...")

    p = sub.add_parser("space-json", help="write the space as JSON, for a machine without PyYAML")
    p.add_argument("--space", default=DEFAULT_SPACE)
    p.add_argument("--out", required=True)

    args = ap.parse_args()
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    return {"build": cmd_build, "sass": cmd_sass, "check": cmd_check, "time": cmd_time,
            "fakedb": cmd_fakedb, "space-json": cmd_space_json}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
