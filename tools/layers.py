#!/usr/bin/env python3
"""tools/layers.py: the include graph of tuner/, by module and by folder, checked for cycles.

A module is a file stem inside its folder (run/worker.c and run/worker.h are the module run/worker;
a private header X_internal.h belongs to module X, e.g. db/db_internal.h to db/db);
a folder is one pipeline step (tuner/README.md). The script reads every `#include "..."` of
tuner/**/*.{c,h}, prints the modules floor by floor (floor 0 includes nothing of ours; a module
sits one floor above the highest module it includes) and the folders likewise, and exits 1 when

  - two modules include each other, directly or through others (a module cycle),
  - two folders do (a folder cycle), or
  - a folder includes a folder that tuner/README.md's folder table lists below it (the table
    lists the folders bottom-up: a row may include only rows above it).

Usage: tools/layers.py [--root DIR] [--quiet]    (DIR defaults to the repository holding this script)
Exit: 0 clean, 1 a cycle or an upward include, 2 bad usage or an unreadable tree.
"""
import argparse
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
ROW = re.compile(r'^\|\s*`([a-z_]+)/`\s*\|')


def module(folder, stem):
    """The module a file stem of folder belongs to (X_internal is X's private half)."""
    if stem.endswith('_internal'):
        stem = stem[:-len('_internal')]
    return folder + '/' + stem


def modules_of(tuner):
    """Map every module (folder/stem) to the set of modules its .c and .h include."""
    graph = {}
    for folder in sorted(os.listdir(tuner)):
        path = os.path.join(tuner, folder)
        if not os.path.isdir(path):
            continue
        for name in sorted(os.listdir(path)):
            stem, ext = os.path.splitext(name)
            if ext not in ('.c', '.h'):
                continue
            mod = module(folder, stem)
            deps = graph.setdefault(mod, set())
            with open(os.path.join(path, name), encoding='utf-8') as f:
                text = f.read()
            for inc in INCLUDE.findall(text):
                rel = inc if '/' in inc else folder + '/' + inc  # bare: same folder
                if not os.path.isfile(os.path.join(tuner, rel)):
                    continue  # not ours: config.h, fatune_abi.h, a system header
                f_, name_ = rel.split('/', 1)
                target = module(f_, os.path.splitext(name_)[0])
                if target != mod:
                    deps.add(target)
    return graph


def cycles(graph):
    """Strongly connected components of more than one node (Tarjan), each sorted."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def floors(graph):
    """Floor of each node: 0 for no dependencies, else 1 + the highest dependency (cycles cut)."""
    memo = {}

    def floor(v, seen):
        if v in memo:
            return memo[v]
        if v in seen:
            return 0
        seen.add(v)
        f = 0
        for w in graph.get(v, ()):
            f = max(f, floor(w, seen) + 1)
        seen.discard(v)
        memo[v] = f
        return f

    for v in graph:
        floor(v, set())
    return memo


def print_floors(title, graph, quiet):
    fl = floors(graph)
    if quiet:
        return
    top = max(fl.values()) if fl else -1
    print('%s: %d on %d floors, %d includes' %
          (title, len(graph), top + 1, sum(len(d) for d in graph.values())))
    for f in range(top, -1, -1):
        names = sorted(v for v in fl if fl[v] == f)
        print('  %2d  %s' % (f, ' '.join(names)))


def readme_order(path):
    """The folders of tuner/README.md's table, top row first (the lowest layer)."""
    order = []
    with open(path, encoding='utf-8') as f:
        for line in f:
            m = ROW.match(line)
            if m:
                order.append(m.group(1))
    return order


def main():
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description='check the include layering of tuner/')
    ap.add_argument('--root', default=here, help='repository root (default: this checkout)')
    ap.add_argument('--quiet', action='store_true', help='print only problems')
    args = ap.parse_args()
    tuner = os.path.join(args.root, 'tuner')
    readme = os.path.join(tuner, 'README.md')
    if not os.path.isdir(tuner) or not os.path.isfile(readme):
        print('layers: no tuner/ or tuner/README.md under %s: pass --root REPO' % args.root,
              file=sys.stderr)
        return 2

    mods = modules_of(tuner)
    folders = {}
    for m, deps in mods.items():
        fo = m.split('/')[0]
        folders.setdefault(fo, set()).update(d.split('/')[0] for d in deps if d.split('/')[0] != fo)

    print_floors('modules', mods, args.quiet)
    print_floors('folders', folders, args.quiet)

    bad = 0
    for comp in cycles(mods):
        print('layers: module cycle: %s' % ' <-> '.join(comp))
        bad += 1
    for comp in cycles(folders):
        print('layers: folder cycle: %s' % ' <-> '.join(comp))
        bad += 1

    order = readme_order(readme)
    rank = {fo: i for i, fo in enumerate(order)}
    for fo in sorted(folders):
        if fo not in rank:
            print('layers: folder %s/ is not in tuner/README.md\'s table: add its row' % fo)
            bad += 1
    for fo in order:
        if fo not in folders:
            print('layers: tuner/README.md lists %s/, which does not exist: remove its row' % fo)
            bad += 1
    for m in sorted(mods):
        fo = m.split('/')[0]
        for d in sorted(mods[m]):
            dfo = d.split('/')[0]
            if fo in rank and dfo in rank and rank[dfo] > rank[fo]:
                print('layers: %s includes %s, but %s/ sits below %s/ in tuner/README.md' %
                      (m, d, dfo, fo))
                bad += 1
    if bad:
        print('layers: %d problem(s)' % bad)
        return 1
    if not args.quiet:
        print('layers: no cycles, no upward includes')
    return 0


if __name__ == '__main__':
    sys.exit(main())
