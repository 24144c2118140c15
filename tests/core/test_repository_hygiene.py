"""The repository stands on its own: no machine paths in tracked files, no silent conformance skips.

Tests read their data from ``tests/data`` relative to their own file; a path into a folder beside
the checkout, or into one machine's file system, turns into a silent skip on a clean clone.
"""
import os
import pathlib
import re
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCANNED = ("tests", "nnabla_core", "plugins", "noxfile.py", "benchmarks", "README.md")
# A folder beside the checkout (the "shared" folder next to it, however the path is spelt),
# the shared work folder, or an absolute path into the usual machine-specific roots
# (home folders, mounts, scratch space). The [d] and [k] keep this file from matching itself.
MACHINE_PATH = re.compile(
    r"\.\./share[d]"
    r"|parents\[\d+\]\s*/\s*[\"']share[d]"
    r"|[\"']\.\.[\"']\s*,\s*[\"']share[d]"
    r"|/wor[k]/"
    r"|(?<![\w.~])/(?:home|Users|root|mnt|opt|srv|tmp|scratch)/\w"
    r"|\b[A-Za-z]:\\\\?(?:Users|home)\b")
NOT_SOURCE = {".git", ".nox", ".venv", "__pycache__", "build", "dist", "results"}


def _tracked_files():
    if shutil.which("git") and (ROOT / ".git").exists():
        out = subprocess.run(["git", "ls-files", "-z", "--", *SCANNED], cwd=ROOT,
                             capture_output=True, check=True)
        return [ROOT / p for p in out.stdout.decode().split("\0") if p]
    files = []
    for entry in SCANNED:
        path = ROOT / entry
        if path.is_file():
            files.append(path)
        for folder, dirs, names in os.walk(path):
            dirs[:] = [d for d in dirs if d not in NOT_SOURCE and not d.endswith(".egg-info")]
            files += [pathlib.Path(folder) / n for n in names if not n.endswith((".so", ".pyc"))]
    return files


def test_no_tracked_file_names_a_path_outside_the_repository():
    files = [f for f in _tracked_files() if f.is_file()]
    assert any(f.name == "noxfile.py" for f in files) and len(files) > 100
    hits = []
    for path in files:
        text = path.read_bytes().decode("utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), 1):
            if MACHINE_PATH.search(line):
                hits.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert hits == []


def test_conformance_data_is_inside_the_repository():
    data = ROOT / "tests" / "data"
    for name in ("nnabla_1.39_signatures.tsv", "nnabla_1.39_function_names.txt"):
        first = (data / name).read_text().splitlines()[0]
        assert first.startswith("# recorded from nnabla 1.39.0's public API"), name


def test_a_skipped_conformance_test_fails_the_run(tmp_path):
    shutil.copy(ROOT / "tests" / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "test_sample.py").write_text(
        "import pytest\n\n"
        "@pytest.mark.conformance\n"
        "def test_skipped_conformance():\n"
        "    pytest.skip('table missing')\n\n"
        "def test_ordinary_skip():\n"
        "    pytest.skip('fine')\n")
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "-W", "ignore::pytest.PytestUnknownMarkWarning", str(tmp_path)],
                         cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "test_sample.py::test_skipped_conformance: table missing" in out.stdout
    assert "test_ordinary_skip" not in out.stdout.split("conformance tests skipped")[1]


def test_an_ordinary_skip_does_not_fail_the_run(tmp_path):
    shutil.copy(ROOT / "tests" / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "test_sample.py").write_text(
        "import pytest\n\ndef test_ordinary_skip():\n    pytest.skip('fine')\n")
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          str(tmp_path)], cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
