"""The Python client against a real `bench serve --sim` (the simulated bench behind real Modbus,
a real SQLite store): submit the quick sweep, wait for it, read its samples as a DataFrame.

Needs $BENCH_BIN (the `bench` binary; scripts/test.sh sets it) and the client installed in the
interpreter running pytest (scripts/test.sh makes a fresh venv under target/).
"""

import io
import json
import os
import pathlib
import subprocess

import pyarrow.parquet as pq
import pytest

import frictionbench
from frictionbench import Client, FrictionbenchError

ROOT = pathlib.Path(__file__).resolve().parents[3]
SWEEP = ROOT / "experiments" / "specs" / "constant_velocity_sweep.json"


@pytest.fixture(scope="module")
def daemon(tmp_path_factory):
    """`bench serve --sim` on a free loopback port with a fresh database: (URL, database)."""
    binary = os.environ.get("BENCH_BIN")
    if not binary:
        pytest.fail("set BENCH_BIN to the bench binary (scripts/test.sh does)")
    db = tmp_path_factory.mktemp("db") / "runs.sqlite"
    env = {k: v for k, v in os.environ.items() if k != "FRICTIONBENCH_TOKEN"}
    proc = subprocess.Popen(
        [binary, "serve", "--sim", "--listen", "127.0.0.1:0", "--db", str(db)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    line = proc.stdout.readline()
    if "http://" not in line:
        proc.kill()
        pytest.fail(f"bench serve did not start: {line} {proc.stderr.read()}")
    url = "http://" + line.split("http://")[1].split("/")[0]
    yield url, db
    proc.terminate()
    proc.wait(timeout=30)


@pytest.fixture(scope="module")
def server(daemon):
    """The daemon's URL."""
    return daemon[0]


@pytest.fixture(scope="module")
def sweep(server):
    """The quick sweep, submitted through the client and finished."""
    client = Client(server)
    run_id = client.submit(SWEEP)
    # Generous bound: the sweep lasts about 40 s of bench time.
    run = client.run(run_id).wait(timeout=300)
    return client, run


def test_the_sweep_completes_with_its_spec_and_results(sweep):
    client, run = sweep
    assert run.status == "completed"
    assert run.spec == json.loads(SWEEP.read_text())
    assert run.results["kind"] == "constant_velocity_sweep"
    listed = client.runs(kind="constant_velocity_sweep", status="completed")
    assert [r["id"] for r in listed] == [run.id]
    assert client.runs(kind="prbs") == []
    assert client.runs(status="aborted") == []


def test_samples_are_a_dataframe_with_units_and_the_run(sweep):
    client, run = sweep
    df = run.samples()
    models = run.record["models"]
    csv_header = client._request("GET", f"/api/runs/{run.id}/export").text.splitlines()[0]
    assert list(df.columns) == csv_header.split(","), "columns as the CSV export"
    assert len(df) == run.record["sample_count"] > 1000
    units = df.attrs["units"]
    assert units["t"] == "s" and units["x"] == "rad" and units["v"] == "rad/s"
    assert units["torque_motor"] == units["torque_sensor"] == "N m"
    for m in models:
        assert units[m] == ("rad" if m.endswith(":x_plant") else "N m"), m
    assert df.attrs["run"]["id"] == run.id
    assert df.attrs["run"]["spec"]["kind"] == "constant_velocity_sweep"
    assert df["t"].is_monotonic_increasing
    # The Parquet file itself: units as field metadata, run, spec and units as file metadata.
    raw = client._request("GET", f"/api/runs/{run.id}/export", params={"format": "parquet"})
    f = pq.ParquetFile(io.BytesIO(raw.content))
    schema = f.schema_arrow
    assert schema.field("v").metadata == {b"unit": b"rad/s"}
    assert schema.field("torque_sensor").metadata == {b"unit": b"N m"}
    kv = {k.decode(): v.decode() for k, v in f.metadata.metadata.items()}
    assert json.loads(kv["frictionbench.spec"]) == run.spec
    assert json.loads(kv["frictionbench.units"]) == units
    assert json.loads(kv["frictionbench.run"])["id"] == run.id
    assert kv["frictionbench.software_version"] == run.record["software_version"]
    assert schema.metadata[b"frictionbench.spec"] == kv["frictionbench.spec"].encode()
    # Physics: on each segment's last half the mean measured velocity sits at one set point of
    # the sweep, and every set point is reached in both directions. In gross sliding
    # (|v| >= 0.2 rad/s) the simulated bench tracks within 1 %; at 0.05 and 0.1 rad/s its
    # Stribeck friction makes the velocity loop stick-slip, so only the mean holds (30 %).
    spec = run.spec["params"]
    targets = [s * v for v in spec["velocities"] for s in (1, -1)]
    reached = set()
    for _, seg in df.groupby("segment"):
        v = float(seg.iloc[len(seg) // 2 :]["v"].mean())
        for tv in targets:
            if abs(v - tv) <= (0.01 if abs(tv) >= 0.2 else 0.3) * abs(tv):
                reached.add(tv)
    assert reached == set(targets), f"set points reached: {sorted(reached)}"
    # The friction that holds those velocities opposes them: sensor torque sign follows v.
    fast = df[df["v"].abs() > 0.9]
    assert ((fast["torque_sensor"] * fast["v"]) > 0).mean() > 0.95


def test_to_xarray_keeps_units(sweep):
    pytest.importorskip("xarray")
    _, run = sweep
    ds = run.to_xarray()
    assert ds["v"].attrs["units"] == "rad/s"
    assert ds["t"].attrs["units"] == "s"
    assert ds.attrs["run_id"] == run.id
    assert ds.sizes["t"] == run.record["sample_count"]


def test_parameter_sets_and_errors(server):
    client = Client(server)
    assert isinstance(client.parameter_sets(), list)
    with pytest.raises(FrictionbenchError) as e:
        client.run(999999)
    assert e.value.status == 404
    with pytest.raises(FrictionbenchError) as e:
        client.submit({"kind": "constant_velocity_sweep", "params": {"velocities": [1e6]}})
    assert e.value.status in (400, 422)
    assert e.value.field


def test_live_streams_samples_of_a_running_run(server):
    client = Client(server)
    spec = {"kind": "constant_velocity_sweep", "name": "live", "params": {
        "velocities": [0.5], "directions": "positive", "settle_s": 0.5, "measure_s": 2.0,
        "repeats": 1}}
    stream = client.live()
    run_id = client.submit(spec)
    got = []
    for s in stream:
        got.append(s)
        if len(got) >= 20:
            break
    stream.close()
    assert all({"idx", "t", "x", "v", "u_cmd", "torque_sensor"} <= s.keys() for s in got)
    assert [s["idx"] for s in got] == sorted(s["idx"] for s in got)
    client.run(run_id).wait(timeout=120)


def test_the_version_is_the_package_version():
    assert frictionbench.__version__ == "0.1.0"


def test_import_run_streams_a_recording_and_reads_it_back(server, tmp_path):
    client = Client(server)
    csv = tmp_path / "joint.csv"
    rows = ["t,pos,force", "s,rad,N m"] + [f"{k / 1000},{k * 1e-4},{0.1 * (k % 7)}" for k in range(3000)]
    csv.write_text("\n".join(rows) + "\n")
    report = client.import_run(csv, columns={"t": "t", "x": "pos", "u": "force"}, scale=["x=2"], name="joint")
    assert report["stats"]["samples"] == 3000
    assert report["scales"] == {"x": 2.0}
    run = client.run(report["run_id"])
    assert run.record["kind"] == "imported" and run.record["name"] == "joint"
    df = run.samples()
    assert len(df) == 3000 and df["x"].iloc[10] == 10 * 1e-4 * 2
    with pytest.raises(FrictionbenchError) as bad:
        client.import_run(csv, columns="t=t,x=position")
    assert bad.value.status == 422 and bad.value.field == "columns"


def test_tags_and_notes_written_after_the_run(sweep, daemon):
    """Tags and notes edited after the run (issue 28) come back through the client and the
    tag filter."""
    client, run = sweep
    db = daemon[1]
    binary = os.environ["BENCH_BIN"]
    rid = str(run.record["id"])
    subprocess.run([binary, "runs", "tag", rid, "+good", "--db", str(db)], check=True)
    subprocess.run([binary, "runs", "note", rid, "re-greased", "--db", str(db)], check=True)
    assert run.tags == ["good"]
    assert run.notes == "re-greased"
    assert [r["id"] for r in client.runs(tag="good")] == [run.record["id"]]
    assert client.runs(tag="absent") == []
    # Over REST: PATCH /api/runs/{id}.
    assert run.tag("+checked", "-good") == ["checked"]
    assert run.tag(replace=["night"]) == ["night"]
    assert run.note("bearing re-greased before this run") == "bearing re-greased before this run"
    assert run.tags == ["night"] and run.notes == "bearing re-greased before this run"
    with pytest.raises(FrictionbenchError) as bad:
        run.tag("+two words")
    assert bad.value.status == 400
