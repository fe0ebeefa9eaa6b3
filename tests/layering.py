#!/usr/bin/env python3
"""layering.py — the layering check of ARCHITECTURE.md §1, run by ctest.

Fails (exit 1, one line per finding) when
  1. a file includes a project header by any path but its own folder's
     ("state.h"), the source root's ("kernels/state.h") or include/'s
     ("talus.h") — no "../", nothing found only through -I;
  2. a file includes a header of a module above its own in the order below,
     or a foreign library's header outside the one module that converts
     that library (ARCHITECTURE.md §9: GDAL in io/raster, zstd in
     io/store, json-c in io/json, MPI in mpi, CUDA in kernels/cuda);
  3. (given a build directory) an object file calls a function defined in a
     module above its own, or two object files call each other, directly or
     round a longer circle.

The order, bottom to top (a module may use only itself and those before it):
  include/talus_status.h, talus_params.h, talus_ledger.h  the leaf public headers
  common < halo/block.h < kernels < halo < io/store < tiler < mpi
    < io/json < io/raster < io/config < io/state < io/export
    < app (and include/talus.h, the API app implements) < cli
tests/ and benchmarks/ sit above everything and may use anything.

halo/block.h is placed below kernels: it is the halo block format alone,
kernels-free, so the GPU backend can pack blocks on the device. The io/
families listed side by side in ARCHITECTURE.md are ordered here by what
they use: json is a leaf wrapper the config writer uses, state is a
GeoTIFF (raster), and export reads states.

Usage: layering.py SOURCE_DIR [BUILD_DIR]
       layering.py --self-test   (a small tree that breaks every rule once)
"""
import os
import re
import subprocess
import sys
from collections import defaultdict

ORDER = [
    ("include/talus_status.h", 0), ("include/talus_params.h", 0), ("include/talus_ledger.h", 0),
    ("common", 1), ("halo/block.h", 1.5), ("kernels", 2), ("halo", 3), ("io/store", 4),
    ("tiler", 5), ("mpi", 6), ("io/json", 7), ("io/raster", 8), ("io/config", 9),
    ("io/state", 10), ("io/export", 11), ("include/talus.h", 12), ("app", 12), ("cli", 13),
    ("tests", 20), ("benchmarks", 20),
]
SOURCES = (".c", ".h", ".cu", ".def")
FOREIGN = [  # (header pattern, the module that owns the library)
    (re.compile(r"^(gdal[a-z_]*|cpl_[a-z_]+|ogr_[a-z_]+)\.h$"), "io/raster"),
    (re.compile(r"^zstd[a-z_]*\.h$"), "io/store"),
    (re.compile(r"^json-c/|^json\.h$"), "io/json"),
    (re.compile(r"^mpi\.h$"), "mpi"),
    (re.compile(r"^cuda[a-z_]*\.h$"), "kernels/cuda"),
]
SYSTEM = re.compile(r'^[ \t]*#[ \t]*include[ \t]+<([^>]+)>', re.M)
INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]+"([^"]+)"', re.M)


def within(path, prefix):
    """path is prefix, prefix with an extension (io/json.c of io/json), or
    lies in the folder prefix."""
    return path == prefix or path.startswith(prefix + "/") or os.path.splitext(path)[0] == prefix


def module_of(path):
    """The longest ORDER entry that is path, path less its extension (io/json
    for io/json.c and io/json.h) or a folder above it."""
    best = None
    for prefix, rank in ORDER:
        if within(path, prefix):
            if best is None or len(prefix) > len(best[0]):
                best = (prefix, rank)
    return best


def project_files(src):
    """The sources git knows (tracked or not ignored); every source file
    under the tree, build folders aside, when src is not a git checkout."""
    out = subprocess.run(["git", "-C", src, "ls-files", "--cached", "--others",
                          "--exclude-standard"], capture_output=True, text=True)
    if out.returncode == 0:
        names = out.stdout.split()
    else:
        names = [os.path.relpath(os.path.join(d, n), src)
                 for d, dirs, files in os.walk(src) for n in files
                 if not os.path.exists(os.path.join(d, "CMakeCache.txt"))]
    return [f for f in names if f.endswith(SOURCES) and os.path.exists(os.path.join(src, f))]


def resolve(src, path, name):
    """Where #include "name" in path lands, and whether by an allowed route."""
    here = os.path.dirname(path)
    if "/" not in name and os.path.exists(os.path.join(src, here, name)):
        return os.path.normpath(os.path.join(here, name)), True
    if "/" not in name and os.path.exists(os.path.join(src, "include", name)):
        return "include/" + name, True
    if not name.startswith("..") and os.path.exists(os.path.join(src, name)):
        return name, True
    for d in (here, "common", "kernels"):
        cand = os.path.normpath(os.path.join(d, name))
        if os.path.exists(os.path.join(src, cand)):
            return cand, False
    return None, True  # not ours (a system or generated header)


def check_includes(src, files):
    bad = []
    for f in files:
        mine = module_of(f)
        if mine is None:
            continue
        text = open(os.path.join(src, f), encoding="utf-8", errors="replace").read()
        for m in INCLUDE.finditer(text):
            target, allowed = resolve(src, f, m.group(1))
            line = text.count("\n", 0, m.start()) + 1
            if target is None:
                continue
            if not allowed:
                bad.append(f'{f}:{line}: #include "{m.group(1)}": write it as "{target}"')
            theirs = module_of(target)
            if theirs and theirs[1] > mine[1]:
                bad.append(f"{f}:{line}: {mine[0]} includes {target} of {theirs[0]}, "
                           "a module above it")
        if mine[1] >= 20:  # tests and benchmarks may reach any library
            continue
        for m in SYSTEM.finditer(text):
            for pattern, owner in FOREIGN:
                if pattern.search(m.group(1)) and not within(f, owner):
                    line = text.count("\n", 0, m.start()) + 1
                    bad.append(f"{f}:{line}: <{m.group(1)}> belongs to {owner}, the one "
                               "module that converts that library")
    return bad


def objects(src, build):
    """Object files of the library, the command and the benchmark whose
    sources exist (a build folder may keep objects of removed files):
    {source path: object}."""
    out = {}
    for d in ("CMakeFiles/talus_lib.dir", "CMakeFiles/talus.dir",
              "benchmarks/CMakeFiles/talus_bench.dir"):
        root = os.path.join(build, d)
        for dirpath, _, names in os.walk(root):
            for n in names:
                if n.endswith(".o"):
                    rel = os.path.relpath(os.path.join(dirpath, n), root)
                    if d.startswith("benchmarks"):
                        rel = "benchmarks/" + rel
                    if os.path.exists(os.path.join(src, rel[:-2])):
                        out[rel[:-2]] = os.path.join(dirpath, n)
    return out


def symbols(obj):
    out = subprocess.run(["nm", "-P", obj], capture_output=True, text=True, check=True)
    defined, undefined = set(), set()
    for line in out.stdout.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        name, kind = parts[0], parts[1]
        if kind == "U":
            undefined.add(name)
        elif kind in "TDBRVWGSC":  # global definitions; lower case is file-local
            defined.add(name)
    return defined, undefined


def check_calls(src, build):
    objs = objects(src, build)
    syms = {src: symbols(o) for src, o in objs.items()}
    owner = {}
    for src, (defined, _) in syms.items():
        for s in defined:
            owner.setdefault(s, src)
    edges = defaultdict(set)
    bad = []
    for src, (_, undefined) in syms.items():
        for s in undefined:
            dst = owner.get(s)
            if dst and dst != src:
                edges[src].add(dst)
    for src, dsts in edges.items():
        mine = module_of(src)
        for dst in sorted(dsts):
            theirs = module_of(dst)
            if mine and theirs and theirs[1] > mine[1]:
                used = sorted(s for s in syms[src][1] if owner.get(s) == dst)
                bad.append(f"{src} ({mine[0]}) calls {', '.join(used[:3])} of {dst} "
                           f"({theirs[0]}), a module above it")
    for cycle in circles(edges):
        bad.append("call circle: " + " -> ".join(cycle + [cycle[0]]))
    return bad


def circles(edges):
    """Strongly connected components of more than one file (Tarjan)."""
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
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
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def self_test():
    """Builds a tree with one breach of each rule, and a clean one, in a
    temporary folder, and checks that each breach, and only it, is found."""
    import tempfile
    files = {
        "include/talus_status.h": "",
        "common/common.h": '#include "talus_status.h"\n',
        "kernels/up.h": '#include "common/common.h"\n#include "app/app.h"\n',
        "kernels/path.h": '#include "../common/common.h"\n',
        "kernels/gdal.c": "#include <gdal.h>\n",
        "app/app.h": '#include "kernels/up.h"\n',
        "app/p.c": "void q(void);\nvoid p(void) { q(); }\n",
        "app/q.c": "void p(void);\nvoid q(void) { p(); }\n",
        "kernels/k.c": "void p(void);\nvoid k(void) { p(); }\n",
        "io/raster/ok.c": '#include <gdal.h>\n#include "kernels/up.h"\n',
        "io/json.c": '#include <json-c/json.h>\n#include "app/app.h"\n',
    }
    with tempfile.TemporaryDirectory() as src:
        build = os.path.join(src, "build")
        for name, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(src, name)), exist_ok=True)
            with open(os.path.join(src, name), "w") as f:
                f.write(text)
            if name.endswith(".c") and "#include" not in text:
                obj = os.path.join(build, "CMakeFiles/talus_lib.dir", name + ".o")
                os.makedirs(os.path.dirname(obj), exist_ok=True)
                subprocess.run(["cc", "-c", "-o", obj, os.path.join(src, name)], check=True)
        found = check_includes(src, list(files)) + check_calls(src, build)
    expect = ["kernels/up.h:2: kernels includes app/app.h of app",
              "io/json.c:2: io/json includes app/app.h of app",
              'kernels/path.h:1: #include "../common/common.h": write it as "common/common.h"',
              "kernels/gdal.c:1: <gdal.h> belongs to io/raster",
              "kernels/k.c (kernels) calls p of app/p.c (app), a module above it",
              "call circle: app/p.c -> app/q.c -> app/p.c"]
    missing = [e for e in expect if not any(f.startswith(e) for f in found)]
    extra = [f for f in found if not any(f.startswith(e) for e in expect)]
    for m in missing:
        print("layering self-test: not found: " + m)
    for x in extra:
        print("layering self-test: found wrongly: " + x)
    print(f"layering self-test: {len(expect) - len(missing)} of {len(expect)} breaches found, "
          f"{len(extra)} false findings")
    return 1 if missing or extra else 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    if len(sys.argv) < 2:
        print(__doc__.strip().splitlines()[-1])
        return 2
    src = sys.argv[1]
    files = project_files(src)
    bad = check_includes(src, files)
    if len(sys.argv) > 2:
        bad += check_calls(src, sys.argv[2])
    for b in bad:
        print("layering: " + b)
    print(f"layering: {len(files)} files checked, {len(bad)} findings")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
