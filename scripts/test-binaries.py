#!/usr/bin/env python3
"""Runs the test binaries that `cargo test --no-run --message-format=json` built, as `cargo
test` would (each from its package's directory, the arguments passed through), but only those
of the packages asked for: so the test command can run the daemon's long real-time suite and
the other crates' suites side by side, without a second cargo resolution that could build the
dependencies again with other features.

Usage: scripts/test-binaries.py BUILD_JSON (--only PKG... | --except PKG...) [-- TEST_ARGS...]
Every binary runs even when one fails; the exit status is 1 if any failed, naming them.
"""

import argparse
import json
import os
import subprocess
import sys
import tomllib


def test_binaries(build_json):
    """(package, target, kind, executable, package directory) of each test binary built."""
    seen = set()
    with open(build_json, encoding="utf-8") as f:
        for line in f:
            if not line.startswith("{"):
                continue
            msg = json.loads(line)
            if msg.get("reason") != "compiler-artifact" or not msg.get("executable"):
                continue
            if not msg["profile"]["test"] or msg["executable"] in seen:
                continue
            seen.add(msg["executable"])
            name = msg["target"]["name"]
            kind = msg["target"]["kind"][0]
            directory = os.path.dirname(msg["manifest_path"])
            yield package_name(msg), name, kind, msg["executable"], directory


def package_name(msg):
    """The package's name, from its manifest (cargo's package id spells it in more than one
    way)."""
    with open(msg["manifest_path"], "rb") as f:
        return tomllib.load(f)["package"]["name"]


def main():
    args = sys.argv[1:]
    test_args = []
    if "--" in args:
        i = args.index("--")
        args, test_args = args[:i], args[i + 1 :]
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("build_json")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--only", nargs="+", metavar="PKG")
    which.add_argument("--except", dest="exclude", nargs="+", metavar="PKG")
    a = p.parse_args(args)
    failed = []
    ran = 0
    for package, name, kind, exe, directory in test_binaries(a.build_json):
        if a.only is not None and package not in a.only:
            continue
        if a.exclude is not None and package in a.exclude:
            continue
        print(f"     Running {kind} {name} of {package} ({os.path.relpath(exe)})", flush=True)
        ran += 1
        if subprocess.call([exe, *test_args], cwd=directory) != 0:
            failed.append(f"{package} {kind} {name}")
    if ran == 0:
        sys.exit(f"test-binaries: no test binary of the packages asked for in {a.build_json}")
    if failed:
        sys.exit("test-binaries: failed: " + "; ".join(failed))


if __name__ == "__main__":
    main()
