"""Every data file inside the core's package folders is declared as package data, so
built wheels carry it (an editable install would hide the omission)."""
import fnmatch
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
CORE = ROOT / "nnabla_core"


@pytest.mark.skipif(sys.version_info < (3, 11), reason="reads pyproject.toml with tomllib "
                    "(Python 3.11+)")
def test_data_files_of_the_core_are_package_data():
    import tomllib
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"]
    missing = []
    for path in CORE.rglob("*"):
        # C sources are built into extension modules (setup.py), whose builds are not data
        if (not path.is_file() or path.suffix in (".py", ".pyc", ".c", ".so")
                or "__pycache__" in path.parts):
            continue
        package = ".".join(("nnabla",) + path.parent.relative_to(CORE).parts)
        patterns = declared.get(package, []) + declared.get("*", [])
        if not any(fnmatch.fnmatch(path.name, p) for p in patterns):
            missing.append(str(path.relative_to(ROOT)))
    assert missing == []
