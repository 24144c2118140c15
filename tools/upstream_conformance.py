"""Run nnabla's own upstream Python tests against the installed packages; print a per-file table.

nnabla's public repository keeps its Python tests in ``python/test``. This script exports
that folder from a git directory (or copies it from a checkout) into a scratch folder
outside this repository, runs pytest on each group with a JUnit report, and prints, per
test file, how many cases passed, failed, errored and were skipped. Given a baseline (the
outcomes of the same tests on nnabla 1.39 itself, ``tools/data/``), it also prints how
many of the cases that pass there pass here ("conform").

Usage (from the repository root; the interpreter must have our packages and pytest)::

    python tools/upstream_conformance.py NNABLA_GIT_DIR [--groups top function/test_a*.py]
        [--jobs 2] [--out DIR] [--baseline tools/data/upstream_baseline_nnabla-1.39.0.tsv.gz]
        [--exclude tools/data/upstream_exclude_offline.txt] [--python PY] [-- PYTEST_ARGS]

``NNABLA_GIT_DIR`` is a clone of https://github.com/sony/nnabla (bare or not), or any
folder holding its ``python/test``. Groups are paths relative to ``python/test``: a
folder (``function``), a file (``test_graph.py``), a glob (``function/test_[a-c]*.py``)
or ``top`` (the top-level ``test_*.py``). The outcomes are written to
``OUT/outcomes.tsv.gz`` (node id, outcome, seconds): the same format as the baseline, so a
run under nnabla 1.39 (``--python`` naming its interpreter) records a new baseline.
The exit status is 0 once the run finished, whatever the tests did; 2 on a usage error.
"""
from __future__ import annotations

import argparse
import collections
import glob
import gzip
import os
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

DEFAULT_GROUPS = ["top", "core", "solver", "utils", "function", "experimental"]
HERE = os.path.dirname(os.path.abspath(__file__))


def export_tests(source, ref, dest):
    """Put nnabla's ``python/test`` (and ``~/.nnabla`` seed files) under ``dest``; returns
    the tests folder."""
    tests = os.path.join(source, "python", "test")
    if ref is None and os.path.isdir(tests):
        shutil.copytree(tests, os.path.join(dest, "python", "test"))
        return os.path.join(dest, "python", "test")
    git = ["git", "-C", source]
    archive = subprocess.run(git + ["archive", ref or "HEAD", "python/test"],
                             stdout=subprocess.PIPE, check=False)
    if archive.returncode != 0:
        sys.exit(f"upstream_conformance: {source!r} is neither a git directory with commit "
                 f"{ref or 'HEAD'!r} nor a folder holding python/test")
    subprocess.run(["tar", "-x", "-C", dest], input=archive.stdout, check=True)
    return os.path.join(dest, "python", "test")


def seed_function_info(source, home):
    """utils/conversion/test_nnp_to_nnp_with_version.py downloads nnabla 1.12.0's
    functions.yaml into ~/.nnabla; give it the mirror's copy so it runs offline."""
    os.makedirs(os.path.join(home, ".nnabla"), exist_ok=True)
    shown = subprocess.run(["git", "-C", source, "show",
                            "v1.12.0:build-tools/code_generator/functions.yaml"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False)
    if shown.returncode == 0:
        with open(os.path.join(home, ".nnabla", "function_info_1.12.0.yaml"), "wb") as f:
            f.write(shown.stdout)


def targets_of(tests, group):
    """The test files (relative to ``tests``) and pytest targets of one group."""
    if group == "top":
        paths = sorted(glob.glob(os.path.join(tests, "test_*.py")))
    elif any(c in group for c in "*?["):
        paths = sorted(glob.glob(os.path.join(tests, group)))
    else:
        paths = [os.path.join(tests, group)] if os.path.exists(os.path.join(tests, group)) \
            else []
    files = []
    for p in paths:
        if os.path.isdir(p):
            for root, _, names in os.walk(p):
                files += [os.path.join(root, n) for n in names
                          if n.startswith("test_") and n.endswith(".py")]
        else:
            files.append(p)
    return sorted(os.path.relpath(f, tests) for f in files), paths


def has_module(python, name):
    return subprocess.run([python, "-c", f"import {name}"], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL, check=False).returncode == 0


def node_id(case, tests):
    """pytest's node id (relative to ``tests``) of a JUnit (xunit1) test case."""
    parts = case.get("classname", "").split(".")
    for i in range(len(parts), 0, -1):
        path = "/".join(parts[:i]) + ".py"
        if os.path.isfile(os.path.join(tests, path)):
            return "::".join([path] + parts[i:] + [case.get("name", "")])
    return "::".join(p for p in (case.get("classname", ""), case.get("name", "")) if p)


def outcome_of(case):
    for child in case:
        if child.tag == "failure":
            return "failed"
        if child.tag == "error":
            return "error"
        if child.tag == "skipped":
            return "xfailed" if child.get("type") == "pytest.xfail" else "skipped"
    return "passed"


def read_outcomes(path):
    """{node id: outcome} of an outcomes.tsv.gz file."""
    result = {}
    with gzip.open(path, "rt") as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            node, outcome = line.rstrip("\n").split("\t")[:2]
            result[node] = outcome
    return result


def run(args):
    python = args.python or sys.executable
    out = os.path.abspath(args.out or tempfile.mkdtemp(prefix="nnabla-conformance."))
    os.makedirs(out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="nnabla-upstream-tests.")
    try:
        tests = export_tests(args.source, args.ref, work)
        home = os.path.join(work, "home")
        seed_function_info(args.source, home)
        cwd = os.path.join(work, "cwd")
        os.makedirs(cwd)
        ini = os.path.join(work, "pytest.ini")
        with open(ini, "w") as f:
            f.write("[pytest]\njunit_family = xunit1\n")
        common = ["-p", "no:cacheprovider", "-c", ini, "--rootdir", tests, "-q", "--tb=short",
                  "--continue-on-collection-errors"]
        if has_module(python, "pytest_timeout"):
            common += ["--timeout", str(args.timeout)]
        if args.jobs > 1 and has_module(python, "xdist"):
            common += ["-n", str(args.jobs)]
        if args.exclude:
            with open(args.exclude) as f:
                for line in f:
                    node = line.split("#", 1)[0].strip()
                    if node:
                        common += ["--deselect", node]
        env = dict(os.environ, HOME=home, MPLBACKEND="Agg")
        outcomes, targeted = {}, set()
        for group in args.groups:
            files, paths = targets_of(tests, group)
            if not paths:
                print(f"upstream_conformance: {group!r} matches nothing under python/test",
                      file=sys.stderr)
                continue
            targeted.update(files)
            safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in group)
            junit = os.path.join(out, f"junit-{safe}.xml")
            start = time.time()
            with open(os.path.join(out, f"log-{safe}.txt"), "w") as log:
                rc = subprocess.run([python, "-m", "pytest"] + common + ["--junitxml", junit]
                                    + args.pytest_args + paths, cwd=cwd, env=env,
                                    stdout=log, stderr=subprocess.STDOUT,
                                    check=False).returncode
            print(f"== {group}: pytest exit {rc}, {time.time() - start:.0f} s", flush=True)
            if os.path.exists(junit):
                for case in ET.parse(junit).getroot().iter("testcase"):
                    outcomes[node_id(case, tests)] = (outcome_of(case),
                                                      float(case.get("time") or 0))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    with gzip.open(os.path.join(out, "outcomes.tsv.gz"), "wt") as f:
        f.write("# node id\toutcome\tseconds\n")
        for node in sorted(outcomes):
            f.write(f"{node}\t{outcomes[node][0]}\t{outcomes[node][1]:.3f}\n")
    baseline = read_outcomes(args.baseline) if args.baseline else None
    print(table({k: v[0] for k, v in outcomes.items()}, targeted, baseline))
    print(f"results: {out}")


def table(outcomes, targeted, baseline):
    """The per-file table (and a total row) as text."""
    rows = collections.defaultdict(collections.Counter)
    for node, outcome in outcomes.items():
        rows[node.split("::", 1)[0]][outcome] += 1
    base_ok = collections.Counter()
    conform = collections.Counter()
    if baseline is not None:
        for node, outcome in baseline.items():
            path = node.split("::", 1)[0]
            if outcome == "passed" and path in targeted:
                base_ok[path] += 1
                conform[path] += outcomes.get(node) == "passed"
                rows[path]      # a file whose cases are all missing here still gets a row
    cols = ["passed", "failed", "error", "skipped"]
    head = f"{'file':<58}" + "".join(f"{c:>9}" for c in cols) + f"{'pass%':>8}"
    if baseline is not None:
        head += f"{'base_ok':>9}{'conform':>9}"
    lines = [head, "-" * len(head)]
    total, total_base, total_conf = collections.Counter(), 0, 0
    for path in sorted(rows) + ["TOTAL"]:
        c = total if path == "TOTAL" else rows[path]
        if path != "TOTAL":
            total.update(c)
            total_base += base_ok[path]
            total_conf += conform[path]
        ran = c["passed"] + c["failed"] + c["error"]
        line = f"{path:<58}" + "".join(f"{c[k]:>9}" for k in cols)
        line += f"{100 * c['passed'] / ran:>7.1f}%" if ran else f"{'-':>8}"
        if baseline is not None:
            b, k = (total_base, total_conf) if path == "TOTAL" else (base_ok[path],
                                                                     conform[path])
            line += f"{b:>9}" + (f"{100 * k / b:>8.1f}%" if b else f"{'-':>9}")
        if path == "TOTAL":
            lines.append("-" * len(head))
        lines.append(line)
    lines.append("pass% = passed / (passed + failed + error); conform = passed here among "
                 "the cases that pass in the baseline")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Run nnabla's upstream python/test against the installed packages.")
    parser.add_argument("source", help="git directory (or checkout) of sony/nnabla")
    parser.add_argument("--ref", help="commit or tag to export (default HEAD, or the "
                        "checkout's files as they are)")
    parser.add_argument("--groups", nargs="+", default=DEFAULT_GROUPS,
                        help=f"paths under python/test, globs or 'top' (default "
                        f"{' '.join(DEFAULT_GROUPS)})")
    parser.add_argument("--python", help="interpreter to test (default: this one)")
    parser.add_argument("--jobs", type=int, default=1, help="pytest-xdist workers")
    parser.add_argument("--timeout", type=int, default=300, help="seconds per test")
    parser.add_argument("--out", help="results folder (default: a new temporary one)")
    parser.add_argument("--baseline", help="outcomes.tsv.gz of a reference run, e.g. "
                        "tools/data/upstream_baseline_nnabla-1.39.0.tsv.gz")
    parser.add_argument("--exclude", help="file of node ids to deselect (e.g. "
                        "tools/data/upstream_exclude_offline.txt)")
    parser.add_argument("pytest_args", nargs="*", help="after --: passed to pytest")
    args = parser.parse_args(argv)
    run(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
