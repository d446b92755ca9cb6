#!/usr/bin/env python3
"""Runs the manual's examples: every ```sh, ```console and ```python block of README.md and
docs/src/ (docs/src/contributing.md#examples-are-tested says how to write one).

Each file gets a sandbox: a fresh directory (the repository's experiments/, profiles/,
clients/ and bench-daemon/config/ linked in), its own run database ($FRICTIONBENCH_DB) and,
when an example talks to localhost:8080, its own `bench serve --sim` on a free port, which the address in the example is
rewritten to; `cargo run -p bench-cli --` is rewritten to `bench`, the binary under test.
Blocks of one file run in order and share the sandbox, so `bench runs show ID`
after a `bench run` sees that run (ID: the last `run N` a command printed). Every command must
exit 0 (or the status a directive gives); in a ```console block the lines after a `$ command`
must appear, in order, in its output (`...` matches anything).

Directives, an HTML comment on the line before the block (invisible in the book):
  <!-- doctest: skip: REASON -->        not run; the reason is printed
  <!-- doctest: exit N -->              every command of the block exits with N
  <!-- doctest: until-killed SECONDS --> runs until interrupted: must still be running (and have
                                         printed nothing on stderr) after SECONDS, then is stopped

Usage: BENCH_BIN=target/debug/bench CLIENT_PYTHON=target/clientenv/bin/python \\
       scripts/test-docs.py [FILE ...]
"""

import concurrent.futures
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FENCE = re.compile(r"^```(\w*)\s*$")
DIRECTIVE = re.compile(r"^<!--\s*doctest:\s*(.*?)\s*-->\s*$")
ADDRESS = re.compile(r"\b(localhost|127\.0\.0\.1):8080\b")
RUN_ID = re.compile(r"^run (\d+)\b", re.M)
LANGS = ("sh", "bash", "console", "python")
COMMAND_TIMEOUT = 300


class Block:
    def __init__(self, path, line, lang, text, directive):
        self.path, self.line, self.lang, self.text, self.directive = path, line, lang, text, directive

    def where(self):
        return f"{self.path.relative_to(REPO)}:{self.line}"


def blocks(path):
    """The runnable fenced blocks of a Markdown file, each with the directive before it."""
    lines = path.read_text(encoding="utf-8").splitlines()
    out, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m or not m.group(1):
            i += 1
            continue
        lang, start = m.group(1), i
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        directive = ""
        if start > 0:
            d = DIRECTIVE.match(lines[start - 1])
            directive = d.group(1) if d else ""
        if lang in LANGS:
            out.append(Block(path, start + 1, lang, "\n".join(lines[start + 1 : j]), directive))
        i = j + 1
    return out


def commands(block):
    """(command, expected output lines) pairs: continuation lines joined; for ```console, the
    `$ ` lines are commands and the lines after them their expected output."""
    out = []
    pending = ""
    for raw in block.text.splitlines():
        if block.lang == "console":
            if raw.startswith("$ "):
                pending = raw[2:]
                out.append([pending, []])
            elif out and out[-1][0].endswith("\\"):
                out[-1][0] = out[-1][0][:-1] + " " + raw.strip()
            elif out and raw.strip():
                out[-1][1].append(raw.strip())
            continue
        line = raw.rstrip()
        if pending:
            line = pending + " " + line.strip()
            pending = ""
        if line.endswith("\\"):
            pending = line[:-1]
            continue
        if line.strip() and not line.lstrip().startswith("#"):
            out.append([line, []])
    return [(c.strip(), exp) for c, exp in out]


class Sandbox:
    """One file's directory, database and (when asked for) daemon."""

    def __init__(self, bench, client_python):
        self.dir = Path(tempfile.mkdtemp(prefix="doctest-"))
        for name in ("experiments", "profiles", "clients", "packaging"):
            (self.dir / name).symlink_to(REPO / name)
        # The shipped bench configurations (bench-daemon/config/*.toml) at their paths.
        (self.dir / "bench-daemon").mkdir()
        (self.dir / "bench-daemon" / "config").symlink_to(REPO / "bench-daemon" / "config")
        self.bin = self.dir / ".bin"
        self.bin.mkdir()
        (self.bin / "bench").symlink_to(bench)
        self.env = dict(os.environ)
        # The client's venv by its own bin directory (a symlink to its python would not be
        # the venv's).
        venv = f"{Path(client_python).parent}:" if client_python else ""
        self.env["PATH"] = f"{self.bin}:{venv}{self.env['PATH']}"
        self.env.pop("PYTHONHOME", None)
        self.env["FRICTIONBENCH_DB"] = str(self.dir / "frictionbench.db")
        self.env.pop("FRICTIONBENCH_URL", None)
        self.env.pop("FRICTIONBENCH_TOKEN", None)
        self.daemon = None
        self.address = None
        self.last_run = None
        self.session = None

    def python(self):
        if self.session is None:
            self.session = PythonSession(self)
        return self.session

    def serve(self):
        """`bench serve --sim` on a free port (its own database), started once."""
        if self.daemon:
            return self.address
        self.daemon = subprocess.Popen(
            ["bench", "serve", "--sim", "--listen", "127.0.0.1:0", "--web", "/nonexistent",
             "--db", str(self.dir / "serve.db")],
            cwd=self.dir, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            text=True)
        line = self.daemon.stdout.readline()
        m = re.search(r"http://([^/\s]+)", line)
        if not m:
            raise RuntimeError(f"bench serve --sim did not start: {line!r}")
        self.address = m.group(1)
        return self.address

    def close(self):
        if self.session:
            self.session.close()
        if self.daemon:
            self.daemon.send_signal(signal.SIGTERM)
            try:
                self.daemon.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.daemon.kill()
        shutil.rmtree(self.dir, ignore_errors=True)

    def rewrite(self, command):
        # `cargo run -p bench-cli --` is `bench` built from this clone: the binary under test.
        command = re.sub(r"\bcargo run (--locked )?-p bench-(cli|daemon) --", "bench", command)
        if ADDRESS.search(command):
            command = ADDRESS.sub(self.serve(), command)
        code, comment = split_comment(command)
        if re.search(r"\bID\b", code):
            if self.last_run is None:
                raise RuntimeError(f"'{command}' names ID, but no earlier command printed a run id")
            code = re.sub(r"\bID\b", self.last_run, code)
        return code + comment


def split_comment(command):
    """(code, `# comment`) of a shell line: a `#` after a blank, outside quotes."""
    quote = None
    for i, c in enumerate(command):
        if quote:
            quote = None if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or command[i - 1].isspace()):
            return command[:i], command[i:]
    return command, ""


def expect_output(expected, output):
    """Whether the expected lines appear in order in `output` (`...` matches anything)."""
    lines = output.splitlines()
    at = 0
    for want in expected:
        if want == "...":
            continue
        while at < len(lines) and want not in lines[at]:
            at += 1
        if at == len(lines):
            return f"expected a line containing {want!r}"
        at += 1
    return None


# The Python blocks of one file run in one interpreter, one after another, as in a session:
# the second block uses the `client` the first made. A block that runs until interrupted gets
# KeyboardInterrupt after its time.
PYTHON_DRIVER = r"""
import contextlib, io, json, signal, sys, threading, traceback, _thread
# Started in the background, a process may inherit SIGINT ignored; then interrupt_main() does
# nothing and a block that runs until interrupted never ends. Python's own handler, always.
signal.signal(signal.SIGINT, signal.default_int_handler)
scope = {"__name__": "__main__"}
for line in sys.stdin:
    block = json.loads(line)
    out = io.StringIO()
    timer = None
    if block["until"]:
        timer = threading.Timer(block["until"], _thread.interrupt_main)
        timer.start()
    result = {"ok": True, "output": ""}
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(block["code"], block["where"], "exec"), scope)
        if block["until"]:
            result = {"ok": False, "error": "ended before it was stopped"}
    except KeyboardInterrupt:
        if not block["until"]:
            result = {"ok": False, "error": "interrupted"}
    except BaseException:
        result = {"ok": False, "error": traceback.format_exc()}
    finally:
        if timer:
            timer.cancel()
    result["output"] = out.getvalue()[-2000:]
    print(json.dumps(result), flush=True)
"""


class PythonSession:
    """One interpreter (the client's venv) for a file's Python blocks."""

    def __init__(self, sandbox):
        self.proc = subprocess.Popen(["python", "-c", PYTHON_DRIVER], cwd=sandbox.dir,
                                     env=sandbox.env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)

    def run(self, block, code, until):
        import json
        msg = {"code": code, "until": until, "where": block.where()}
        self.proc.stdin.write(json.dumps(msg) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            return "the Python session ended"
        result = json.loads(line)
        return None if result["ok"] else result["error"]

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=20)


# `curl` exits 0 on an HTTP error; in an example it must not.
CURL = re.compile(r"(^|[|;&(]\s*)curl ")


def run_command(sandbox, block, command, expected, exit_code, until_killed):
    command = sandbox.rewrite(command)
    if block.lang == "python":
        return sandbox.python().run(block, command, until_killed)
    command = CURL.sub(r"\1curl --fail-with-body ", command)
    argv = ["bash", "-o", "pipefail", "-c", command]
    proc = subprocess.Popen(argv, cwd=sandbox.dir, env=sandbox.env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    if until_killed:
        time.sleep(until_killed)
        if proc.poll() is not None:
            out, err = proc.communicate()
            return f"ended with {proc.returncode} before it was stopped:\n{out}{err}"
        os.killpg(proc.pid, signal.SIGINT)
        try:
            out, err = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
        if err.strip() and "Traceback" in err and "KeyboardInterrupt" not in err:
            return f"printed an error while running:\n{err}"
        return None
    try:
        out, err = proc.communicate(timeout=COMMAND_TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        return f"still running after {COMMAND_TIMEOUT} s"
    for m in RUN_ID.finditer(out):
        sandbox.last_run = m.group(1)
    if proc.returncode != exit_code:
        return f"exit {proc.returncode}, expected {exit_code}:\n{out[-2000:]}{err[-2000:]}"
    problem = expect_output(expected, out)
    return f"{problem}; the output was:\n{out[-2000:]}" if problem else None


def run_file(path, bench, client_python):
    """Runs the blocks of one file; returns (ran, skipped, failures, log lines)."""
    todo = blocks(path)
    ran, skipped, failures, log = 0, 0, [], []
    if not todo:
        return ran, skipped, failures, log
    sandbox = Sandbox(bench, client_python)
    try:
        for block in todo:
            d = block.directive
            if d.startswith("skip"):
                reason = d.partition(":")[2].strip()
                if not reason:
                    failures.append(f"{block.where()}: 'doctest: skip' needs a reason after a colon")
                skipped += 1
                log.append(f"skip {block.where()}: {reason}")
                continue
            exit_code = int(d.split()[1]) if d.startswith("exit ") else 0
            until = float(d.split()[1]) if d.startswith("until-killed ") else 0.0
            if d and not (d.startswith("exit ") or d.startswith("until-killed ")):
                failures.append(f"{block.where()}: unknown directive 'doctest: {d}'")
                continue
            cmds = [(block.text, [])] if block.lang == "python" else commands(block)
            for command, expected in cmds:
                t0 = time.monotonic()
                try:
                    problem = run_command(sandbox, block, command, expected, exit_code, until)
                except RuntimeError as e:
                    problem = str(e)
                first = command.splitlines()[0] if command else ""
                log.append(f"{'FAIL' if problem else 'ok  '} {block.where()} "
                           f"({time.monotonic() - t0:.1f} s): {first}")
                if problem:
                    failures.append(f"{block.where()}: {first}\n  {problem}")
                    break
                ran += 1
    finally:
        sandbox.close()
    return ran, skipped, failures, log


def self_test(bench):
    """A wrong example must fail: a failing command, a wrong output, a bad directive."""
    cases = {
        "fails": "```sh\nbench no-such-command\n```\n",
        "wrong output": "```console\n$ bench models\nno such line\n```\n",
        "wrong exit": "<!-- doctest: exit 2 -->\n```sh\nbench models\n```\n",
        "no reason": "<!-- doctest: skip -->\n```sh\nbench models\n```\n",
        "unknown directive": "<!-- doctest: sometimes -->\n```sh\nbench models\n```\n",
        "no run for ID": "```sh\nbench runs show ID\n```\n",
    }
    with tempfile.TemporaryDirectory(dir=REPO / "target") as d:
        for name, text in cases.items():
            path = Path(d) / "case.md"
            path.write_text(text)
            _, _, failures, _ = run_file(path, bench, None)
            if not failures:
                sys.exit(f"self-test: the example that {name} did not fail")
        path = Path(d) / "case.md"
        path.write_text("```console\n$ bench models\n...\nlugre\n```\n")
        _, _, failures, _ = run_file(path, bench, None)
        if failures:
            sys.exit(f"self-test: a right example failed: {failures}")
    print("doc examples: self-test passed (wrong examples fail)")


def main():
    bench = os.environ.get("BENCH_BIN", str(REPO / "target/debug/bench"))
    bench = str(Path(bench).resolve())
    if sys.argv[1:] == ["--self-test"]:
        return self_test(bench)
    client_python = os.environ.get("CLIENT_PYTHON")
    client_python = os.path.abspath(client_python) if client_python else None
    files = [Path(f).resolve() for f in sys.argv[1:]] or (
        [REPO / "README.md"] + sorted((REPO / "docs/src").rglob("*.md")))
    jobs = int(os.environ.get("DOCTEST_JOBS", "2"))
    ran = skipped = 0
    failures = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        results = pool.map(lambda f: run_file(f, bench, client_python), files)
        for r, s, f, log in results:
            ran, skipped = ran + r, skipped + s
            failures += f
            for line in log:
                print(line)
    print(f"doc examples: {ran} commands ran, {skipped} blocks skipped, {len(failures)} failed")
    for f in failures:
        print(f"FAILED {f}", file=sys.stderr)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
