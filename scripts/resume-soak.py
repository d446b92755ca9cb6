#!/usr/bin/env python3
"""SIGKILL soak of `bench runs resume`, outside the test command (the test kills 20 times).

Runs a 64-trial Stribeck sweep (16 velocities, both directions, twice) on the real-time simulated bench (`bench run --sim`), kills it
with SIGKILL after a random number of committed samples, resumes it (`bench runs resume ID
--sim`), kills the continuation, and so on KILLS times; the last continuation runs to its end.
Prints the kill table (kill → run → samples committed → segments measured whole so far → the
continuation), the time from starting `bench runs resume` to the continuation's first committed
sample (p50/max: the issue's <= 2 s), and checks the final table against an uninterrupted run of
the same spec: 0 segments missing, 0 measured twice, every Stribeck point within 0.5 %.

Usage: scripts/resume-soak.py [--kills 100] [--bench target/debug/bench] [--seed 2026] [--json]
"""

import argparse
import csv
import io
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SPEC = {
    "kind": "constant_velocity_sweep",
    "name": "resume soak",
    "params": {
        "velocities": [round(0.5 + 0.1 * k, 1) for k in range(16)],
        "directions": "both",
        "settle_s": 0.2,
        "measure_s": 0.2,
        "repeats": 2,
    },
}


def bench(b, *args):
    return subprocess.run([b, *args], capture_output=True, text=True)


def show(b, db, run_id):
    o = bench(b, "runs", "show", str(run_id), "--db", db, "--json")
    return json.loads(o.stdout)


def spawn(b, args):
    err = tempfile.TemporaryFile(mode="w+")
    p = subprocess.Popen([b, *args], stdout=subprocess.PIPE, stderr=err, text=True)
    line = p.stdout.readline()
    if not line.startswith("run "):
        p.wait()
        err.seek(0)
        sys.exit(f"bench {' '.join(args)}: exit {p.returncode}: {err.read()}")
    return p, int(line.split()[1])


def segments(b, db, run_id):
    """(segment, idx) of every sample of one run."""
    o = bench(b, "runs", "export", str(run_id), "--format", "csv", "--db", db)
    rows = csv.DictReader(io.StringIO(o.stdout))
    return [(int(r["segment"]), int(r["idx"])) for r in rows]


def whole(samples, completed):
    """Segments measured whole: no gap, and the run went on past them (or completed)."""
    out, i, n = set(), 0, len(samples)
    while i < n:
        seg = samples[i][0]
        j = i
        while j < n and samples[j][0] == seg:
            j += 1
        if samples[j - 1][1] - samples[i][1] == j - i - 1 and (j < n or completed):
            out.add(seg)
        i = j
    return out


def points(results):
    return [(p["setpoint_rad_s"], p["mean_torque_nm"]) for s in ("positive", "negative") for p in results[s]]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kills", type=int, default=100)
    ap.add_argument("--bench", default="target/debug/bench")
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    with tempfile.TemporaryDirectory() as tmp:
        # A copy: a rebuild of the binary during the soak does not swap it under the soak.
        a.bench = shutil.copy(a.bench, Path(tmp) / "bench")
        db = str(Path(tmp) / "runs.db")
        spec = Path(tmp) / "sweep.json"
        spec.write_text(json.dumps(SPEC))
        ref = bench(a.bench, "run", str(spec), "--sim", "--db", db, "--json")
        want = points(json.loads(ref.stdout.splitlines()[-1])["results"])
        args = ["run", str(spec), "--sim", "--db", db]
        kills, latencies, done = [], [], set()
        while True:
            t_start = time.monotonic()
            p, run_id = spawn(a.bench, args)
            first = None
            n = rng.randint(60, 530)
            while True:
                r = show(a.bench, db, run_id)
                c = r["sample_count"]
                if c > 0 and first is None:
                    first = time.monotonic() - t_start
                if c >= n or r["status"] not in ("running", "queued"):
                    break
                time.sleep(0.01)
            if args[0] == "runs" and first is not None:
                latencies.append(first)
            if len(kills) == a.kills or r["status"] not in ("running", "queued"):
                p.wait()
                break
            p.kill()
            p.wait()
            r = show(a.bench, db, run_id)
            done |= whole(segments(a.bench, db, run_id), False)
            kills.append({"run": run_id, "kill_after_samples": n, "committed": r["sample_count"],
                          "segments_done": len(done)})
            args = ["runs", "resume", str(run_id), "--sim", "--db", db]
        final = show(a.bench, db, run_id)
        chain = final["chain"]
        # Each segment from the last run of the chain that measured it whole.
        source = {}
        for rid in chain:
            st = show(a.bench, db, rid)["status"]
            for s in whole(segments(a.bench, db, rid), st == "completed"):
                source[s] = rid
        n_seg = 8 * len(SPEC["params"]["velocities"])
        got = points(final["results"])
        worst = max(abs(t - t0) / abs(t0) for (_, t), (_, t0) in zip(got, want))
        for k in kills:
            print(f"kill after {k['kill_after_samples']:4d} samples: run {k['run']:4d} "
                  f"({k['committed']:5d} committed), {k['segments_done']:3d}/{n_seg} segments measured whole",
                  file=sys.stderr)
        lat = sorted(latencies)
        report = {
            "kills": len(kills),
            "chain_runs": len(chain),
            "final_status": final["status"],
            "segments": n_seg,
            "segments_missing": n_seg - len(source),
            "points": len(got),
            "points_expected": len(want),
            "worst_point_deviation": worst,
            "resume_to_first_sample_s": {"p50": lat[len(lat) // 2], "max": lat[-1]} if lat else None,
        }
        print(json.dumps(report, indent=None if a.json else 2))
        ok = (final["status"] == "completed" and report["segments_missing"] == 0
              and len(got) == len(want) and worst <= 0.005)
        sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
