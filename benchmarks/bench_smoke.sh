#!/usr/bin/env bash
# bench_smoke — the only benchmark `make test` runs: every workload at 48²
# for a few steps on 1 and 2 threads, then checks the JSON has every field
# the measurements are read from, with positive, finite numbers.
set -u
B=${TALUS_BENCH:?TALUS_BENCH not set}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
"$B" --size 48 --steps 3 --warmup 1 --repeat 2 --threads 1,2 --stream-mib 4 -o "$W/b.json" \
  || exit 1
python3 - "$W/b.json" <<'PY'
import json, math, sys
r = json.load(open(sys.argv[1]))
bad = []
def pos(where, v):
    if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
        bad.append(f"{where} = {v!r}")
workloads = {"heightfield", "heightfield_thermal", "rivers_rain", "chasm_source", "particles",
             "particles_layered"}
droplets = {"particles", "particles_layered"}
for s in r["stream"]:
    for k in ("copy_gbs", "triad_gbs", "read_gbs"):
        pos(f"stream {s['when']} {s['threads']} {k}", s[k])
seen = set()
for run in r["runs"]:
    name = f"{run['workload']}/{run['threads']}/{run['repeat']}"
    seen.add((run["workload"], run["threads"]))
    for k in ("seconds", "ms_per_step", "mcell_steps_per_s", "bytes_per_cell_step", "gbs",
              "stream_triad_gbs", "roofline_fraction", "mean_columns"):
        pos(f"{name} {k}", run[k])
    if not run["stages"]:
        bad.append(f"{name}: no stages")
    total = sum(st["ms_per_step"] for st in run["stages"])
    if total > run["ms_per_step"] * 1.001:
        bad.append(f"{name}: stage times {total} exceed the step time {run['ms_per_step']}")
    for st in run["stages"]:
        for k in ("ms_per_step", "bytes_per_cell_step", "gbs", "calls_per_step"):
            pos(f"{name} {st['name']} {k}", st[k])
    model = run["model"]
    names = {st["name"] for st in run["stages"]}
    want = {"hf_flux", "hf_water"} if model == "heightfield" else {"pipes", "transport"}
    if run["workload"] in droplets:
        want = {"pt_clear", "pt_trace", "pt_apply"} | ({"pipes"} if model == "layered" else set())
        for k in ("droplets", "moves", "droplet_seconds", "droplets_per_s", "moves_per_s"):
            pos(f"{name} {k}", run.get(k))
    if not want <= names:
        bad.append(f"{name}: stages {sorted(names)} lack {sorted(want)}")
if {(w, t) for w in workloads for t in (1, 2)} - seen:
    bad.append(f"missing runs: {sorted({(w, t) for w in workloads for t in (1, 2)} - seen)}")
if "thermal_in" not in {s["name"] for run in r["runs"] if run["workload"] == "heightfield_thermal" for s in run["stages"]}:
    bad.append("heightfield_thermal ran no thermal stage")
for w in workloads:
    pos(f"scaling {w}", r["ratios"]["scaling_1_to_2"][w]["median"])
for t in ("threads_1", "threads_2"):
    for w in workloads - {"heightfield"}:
        pos(f"cost {t} {w}", r["ratios"]["cost_per_cell_step_vs_heightfield"][t][w])
for k in ("cpu", "logical_cpus"):
    if not r["machine"].get(k):
        bad.append(f"machine {k} missing")
for b in bad:
    print("bench_smoke: FAILED:", b)
print(f"bench_smoke: {len(r['runs'])} runs, {len(bad)} problems")
sys.exit(1 if bad else 0)
PY
