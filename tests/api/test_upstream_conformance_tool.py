"""tools/upstream_conformance.py on a miniature python/test folder: it runs the files,
reads the JUnit reports and prints the per-file table, compared with a baseline."""
import gzip
import importlib.util
import os
import textwrap

TOOL = os.path.join(os.path.dirname(__file__), "..", "..", "tools", "upstream_conformance.py")


def _tool():
    spec = importlib.util.spec_from_file_location("upstream_conformance", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_tool_prints_per_file_counts_and_conformance(tmp_path, capsys):
    tests = tmp_path / "src" / "python" / "test"
    (tests / "sub").mkdir(parents=True)
    (tests / "test_a.py").write_text(textwrap.dedent("""
        import pytest

        def test_ok():
            pass

        def test_bad():
            assert False

        @pytest.mark.skip(reason="no GPU")
        def test_gpu():
            pass

        class TestGroup:
            def test_method(self):
                pass
        """))
    (tests / "sub" / "test_b.py").write_text("def test_one():\n    pass\n")
    baseline = tmp_path / "base.tsv.gz"
    with gzip.open(baseline, "wt") as f:
        f.write("# node id\toutcome\tseconds\n")
        for node in ("test_a.py::test_ok", "test_a.py::test_bad",
                     "test_a.py::TestGroup::test_method", "sub/test_b.py::test_one",
                     "sub/test_c.py::test_other"):     # test_c is not asked for: not counted
            f.write(f"{node}\tpassed\t0.0\n")
    out = tmp_path / "out"
    assert _tool().main([str(tmp_path / "src"), "--groups", "top", "sub", "--out", str(out),
                         "--baseline", str(baseline)]) == 0
    text = capsys.readouterr().out
    rows = {line.split()[0]: line.split()[1:] for line in text.splitlines()
            if line.startswith(("test_a.py", "sub/", "TOTAL"))}
    # passed failed error skipped pass% base_ok conform
    assert rows["test_a.py"] == ["2", "1", "0", "1", "66.7%", "3", "66.7%"]
    assert rows["sub/test_b.py"] == ["1", "0", "0", "0", "100.0%", "1", "100.0%"]
    assert rows["TOTAL"] == ["3", "1", "0", "1", "75.0%", "4", "75.0%"]
    with gzip.open(out / "outcomes.tsv.gz", "rt") as f:
        recorded = dict(line.split("\t")[:2] for line in f if not line.startswith("#"))
    assert recorded["test_a.py::TestGroup::test_method"] == "passed"
    assert recorded["test_a.py::test_gpu"] == "skipped"
