"""The client: one ``httpx.Client`` per ``Client``; every call maps to one REST endpoint."""

from __future__ import annotations

import io
import json
import os
import time
from typing import Any, Dict, Iterator, List, Optional, Tuple, Union

import httpx
import pandas as pd
import pyarrow.parquet as pq

#: Statuses a run never leaves.
ANALYSIS_GRACE_S = 10.0
"""Longest :meth:`Run.wait` waits for a completed run's analysis."""
FINISHED = ("completed", "aborted", "failed", "interrupted")


class FrictionbenchError(Exception):
    """An error answer of the API: HTTP status, the offending field (if any) and the message."""

    def __init__(self, status: int, message: str, field: Optional[str] = None):
        super().__init__(f"HTTP {status}: {message}")
        self.status = status
        self.message = message
        self.field = field


class Client:
    """A ``bench serve`` at ``url``; ``token`` is the bearer token mutating calls need when the
    server listens beyond loopback (default: ``$FRICTIONBENCH_TOKEN``)."""

    def __init__(self, url: str, token: Optional[str] = None, timeout: float = 30.0):
        token = token if token is not None else os.environ.get("FRICTIONBENCH_TOKEN") or None
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.url = url.rstrip("/")
        self._http = httpx.Client(base_url=self.url, headers=headers, timeout=timeout)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Client({self.url!r})"

    # -- plumbing ---------------------------------------------------------------------------

    def _request(self, method: str, path: str, **kw: Any) -> httpx.Response:
        r = self._http.request(method, path, **kw)
        if r.status_code >= 400:
            try:
                body = r.json()
                raise FrictionbenchError(r.status_code, body.get("error", r.text), body.get("field"))
            except ValueError:
                raise FrictionbenchError(r.status_code, r.text) from None
        return r

    def _get(self, path: str, **params: Any) -> Any:
        params = {k: v for k, v in params.items() if v is not None}
        return self._request("GET", path, params=params).json()

    # -- calls ------------------------------------------------------------------------------

    def health(self) -> Dict[str, Any]:
        """``GET /api/health``: ``{"status": "ok", "version": ...}``."""
        return self._get("/api/health")

    def bench(self) -> Dict[str, Any]:
        """``GET /api/bench``: the bench status."""
        return self._get("/api/bench")

    def runs(
        self,
        kind: Optional[str] = None,
        status: Optional[str] = None,
        bench: Optional[str] = None,
        limit: int = 1000,
        tag: Optional[str] = None,
    ) -> List[Dict[str, Any]]:
        """Run summaries, newest first, filtered by experiment kind and status (on the server)
        and by ``bench``: the run's ``bench_id`` (bench.toml ``bench_id``, ``"sim"`` for the
        simulated bench), or any value of its bench snapshot (drive profile, address or port,
        e.g. ``"127.0.0.1:5020"``; fetches the record of each run whose id differs); ``tag``:
        only runs with that tag."""
        out: List[Dict[str, Any]] = []
        offset = 0
        while True:
            page = self._get(
                "/api/runs", kind=kind, status=status, tag=tag, limit=limit, offset=offset
            )
            out.extend(page["runs"])
            offset += len(page["runs"])
            if not page["runs"] or offset >= page["total"]:
                break
        if bench is not None:
            out = [
                r
                for r in out
                if r.get("bench_id") == bench
                or bench in _strings(self._get(f"/api/runs/{r['id']}")["bench_config"])
            ]
        return out

    def run(self, run_id: int) -> "Run":
        """One run (fetched now; ``.status`` and ``.results`` fetch again)."""
        return Run(self, self._get(f"/api/runs/{int(run_id)}"))

    def submit(
        self,
        spec: Union[Dict[str, Any], str, os.PathLike],
        start_now: bool = False,
        priority: int = 0,
    ) -> int:
        """Queues a run of ``spec`` (a dict, JSON text or a path to a spec file); returns its id.
        ``start_now`` starts it at once (refused with 409 when the bench is busy)."""
        body = _spec_document(spec)
        params: Dict[str, Any] = {"priority": priority}
        if start_now:
            params["start"] = "now"
        r = self._request("POST", "/api/runs", params=params, json=body)
        return int(r.json()["id"])

    def check(self, spec: Union[Dict[str, Any], str, os.PathLike]) -> Dict[str, Any]:
        """``POST /api/experiments/check``: the spec's plan against the bench limits."""
        return self._request("POST", "/api/experiments/check", json=_spec_document(spec)).json()

    #: Content types of the formats ``import_run`` sends.
    _FILE_TYPES = {
        "csv": "text/csv",
        "mat": "application/x-matlab-data",
        "parquet": "application/vnd.apache.parquet",
    }

    def import_run(self, path: Union[str, os.PathLike], **options: Any) -> Dict[str, Any]:
        """``POST /api/runs/import``: stores the recording at ``path`` (CSV, MAT-file or
        Parquet, streamed from disk) as a run of kind ``imported``; returns the import report
        (``run_id``, ``source`` with ``sha256``, ``columns``, ``units``, ``stats``, ...).
        ``options`` are the query parameters: ``format``, ``columns`` (``"t=time,x=pos"`` or a
        dict ``{"t": "time", "x": "pos"}``), ``scale`` (``"u=35.15"``, a list of them or a dict),
        ``geometry``, ``name``, ``bench``."""
        path = os.fspath(path)
        params: List[Tuple[str, str]] = [("file", os.path.basename(path))]
        for key, value in options.items():
            if value is None:
                continue
            if isinstance(value, dict):
                items = [f"{k}={v}" for k, v in value.items()]
                value = items if key == "scale" else ",".join(items)
            for v in value if isinstance(value, (list, tuple)) else [value]:
                params.append((key, str(v)))
        fmt = options.get("format") or os.path.splitext(path)[1].lstrip(".").lower()
        ctype = self._FILE_TYPES.get({"pq": "parquet", "tsv": "csv", "txt": "csv"}.get(fmt, fmt),
                                     "application/octet-stream")
        with open(path, "rb") as f:
            r = self._request("POST", "/api/runs/import", params=params, content=f,
                              headers={"Content-Type": ctype},
                              timeout=httpx.Timeout(None, connect=10.0))
        return r.json()

    def parameter_sets(self, model: Optional[str] = None) -> List[Dict[str, Any]]:
        """Stored parameter sets (fitted or given), newest first."""
        return self._get("/api/parameter-sets", model=model)

    def models(self) -> Any:
        """The friction models with parameter docs, units and defaults."""
        return self._get("/api/models")

    def live_events(self) -> Iterator[Tuple[str, Any]]:
        """Every Server-Sent Event of ``/api/live`` as ``(event name, data)``: ``sample``,
        ``status``, ``run``, ``queue`` and ``dropped``."""
        with self._http.stream("GET", "/api/live", timeout=httpx.Timeout(None, connect=10.0)) as r:
            if r.status_code >= 400:
                r.read()
                raise FrictionbenchError(r.status_code, r.text)
            name, data = "message", []
            for line in r.iter_lines():
                if line == "":
                    if data:
                        yield name, json.loads("\n".join(data))
                    name, data = "message", []
                elif line.startswith(":"):
                    continue
                else:
                    key, _, value = line.partition(":")
                    value = value[1:] if value.startswith(" ") else value
                    if key == "event":
                        name = value
                    elif key == "data":
                        data.append(value)

    def live(self) -> Iterator[Dict[str, Any]]:
        """Live samples of the running run (at most 100 per second) as flat dicts: ``idx``, the
        sample columns (SI units) and one entry per lockstep model output, by model id."""
        for name, data in self.live_events():
            if name != "sample":
                continue
            row = {"idx": data["idx"], **data["sample"]}
            row.update(zip(data.get("models") or [], data.get("outputs") or []))
            yield row


class Run:
    """A stored run: its record as fetched, with calls for status, results and samples."""

    def __init__(self, client: Client, record: Dict[str, Any]):
        self._client = client
        self.record = record
        self.id = int(record["id"])

    def __repr__(self) -> str:
        return f"Run(id={self.id}, kind={self.record['kind']!r}, status={self.record['status']!r})"

    def refresh(self) -> "Run":
        self.record = self._client._get(f"/api/runs/{self.id}")
        return self

    @property
    def status(self) -> str:
        """The current status (fetched): queued, running, completed, aborted, failed or interrupted."""
        return self.refresh().record["status"]

    @property
    def spec(self) -> Dict[str, Any]:
        """The experiment spec the run executes."""
        return self.record["spec"]

    @property
    def tags(self) -> List[str]:
        """The run's tags (fetched; edited after the run with ``bench runs tag``)."""
        return list(self.refresh().record.get("tags") or [])

    @property
    def notes(self) -> Optional[str]:
        """The run's notes (fetched; ``bench runs note``)."""
        return self.refresh().record.get("notes")

    def tag(self, *tags: str, replace: Optional[List[str]] = None) -> List[str]:
        """Edits the run's tags (``PATCH /api/runs/{id}``, an operator's token with users):
        ``run.tag("+good", "-suspect")`` adds and removes (a bare name adds); ``replace=[...]``
        sets the whole list first. Returns the tags after the edit; the audit log keeps the old
        ones."""
        body: Dict[str, Any] = {
            "add": [t[1:] if t.startswith("+") else t for t in tags if not t.startswith("-")],
            "remove": [t[1:] for t in tags if t.startswith("-")],
        }
        if replace is not None:
            body["tags"] = list(replace)
        return self._client._request("PATCH", f"/api/runs/{self.id}", json=body).json()["tags"]

    def note(self, text: str) -> Optional[str]:
        """Replaces the run's notes (``PATCH /api/runs/{id}``; ``""`` clears them); returns
        them after the edit."""
        r = self._client._request("PATCH", f"/api/runs/{self.id}", json={"notes": text})
        return r.json()["notes"]

    @property
    def results(self) -> Optional[Dict[str, Any]]:
        """The run's analysis (fetched; ``None`` until it is stored)."""
        return self.refresh().record.get("results")

    def wait(self, timeout: Optional[float] = None, poll: float = 0.5) -> "Run":
        """Blocks until the run has finished (any final status); ``TimeoutError`` after
        ``timeout`` seconds. A completed run's analysis is stored just after its status: the
        wait gives it up to ``ANALYSIS_GRACE_S`` more, so ``results`` is there when it returns."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.status not in FINISHED:
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"run {self.id} still {self.record['status']} after {timeout} s")
            time.sleep(poll)
        grace = time.monotonic() + ANALYSIS_GRACE_S
        while self.record["status"] == "completed" and self.record.get("results") is None:
            if time.monotonic() > grace:
                break
            time.sleep(min(poll, 0.1))
            self.refresh()
        return self

    def samples(self) -> pd.DataFrame:
        """Every sample with every model output, columns as the CSV export (``idx, t, x, v,
        u_cmd, torque_motor, torque_sensor, segment, flags``, then one per model output);
        ``df.attrs["units"]`` maps column → unit, ``df.attrs["run"]`` is the run record."""
        r = self._client._request("GET", f"/api/runs/{self.id}/export", params={"format": "parquet"})
        f = pq.ParquetFile(io.BytesIO(r.content))
        table = f.read()
        # The file's key-value metadata (footer), where the run record and spec are.
        meta = {k.decode(): v.decode() for k, v in (f.metadata.metadata or {}).items()}
        df = table.to_pandas()
        df.attrs["units"] = {
            f.name: (f.metadata or {}).get(b"unit", b"").decode() for f in table.schema
        }
        df.attrs["run"] = json.loads(meta["frictionbench.run"])
        return df

    def to_xarray(self):
        """The samples as an ``xarray.Dataset`` along ``t`` (needs the ``xarray`` extra): one
        variable per column with its ``units`` attribute; the run id, kind and spec as
        dataset attributes."""
        import xarray as xr

        df = self.samples()
        units = df.attrs["units"]
        run = df.attrs["run"]
        ds = xr.Dataset(
            {c: ("t", df[c].to_numpy(), {"units": units.get(c, "")}) for c in df.columns if c != "t"},
            coords={"t": ("t", df["t"].to_numpy(), {"units": units.get("t", "s")})},
        )
        ds.attrs.update(
            run_id=run["id"],
            kind=run["kind"],
            name=run.get("name", ""),
            spec=json.dumps(run["spec"]),
            software_version=run.get("software_version", ""),
        )
        return ds


def _spec_document(spec: Union[Dict[str, Any], str, os.PathLike]) -> Dict[str, Any]:
    if isinstance(spec, dict):
        return spec
    text = str(spec)
    if isinstance(spec, os.PathLike) or not text.lstrip().startswith("{"):
        with open(spec, encoding="utf-8") as f:
            return json.load(f)
    return json.loads(text)


def _strings(v: Any) -> List[str]:
    """Every string (and number, as text) in a JSON value."""
    if isinstance(v, dict):
        return [s for x in v.values() for s in _strings(x)]
    if isinstance(v, list):
        return [s for x in v for s in _strings(x)]
    return [] if v is None else [str(v)]
