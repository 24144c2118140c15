"""nnabla.utils.progress (state file, callbacks) and nnabla.utils.communicator_util."""
import nnabla.utils.communicator_util as cu
import nnabla.utils.progress as P


def test_progress_writes_the_state_line_and_calls_back(tmp_path, monkeypatch):
    seen = []
    path = tmp_path / "progress.txt"
    monkeypatch.setattr(P, "_WRITE_INTERVAL", 0.0)
    P.configure_progress(str(path), cb=lambda s, p: seen.append((s, p)))
    try:
        assert path.read_text() == ""
        P.progress("Training", 0.25)
        assert path.read_text() == "Training (25.00%)"
        P.progress(None)
        assert path.read_text() == ""
        assert seen == [(None, 0.0), ("Training", 0.25), (None, 0.0)]
        assert [p.name for p in tmp_path.iterdir()] == ["progress.txt"]   # no temp file left
    finally:
        monkeypatch.setattr(P, "state_file_name", "")
        monkeypatch.setattr(P, "state_callback", None)


def test_progress_is_rate_limited(tmp_path, monkeypatch):
    path = tmp_path / "p.txt"
    monkeypatch.setattr(P, "_WRITE_INTERVAL", 3600.0)
    P.configure_progress(str(path))
    try:
        P.progress("first", 0.5)         # within the interval of the clearing write
        assert path.read_text() == ""
    finally:
        monkeypatch.setattr(P, "state_file_name", "")


def test_no_communicator_outside_mpiexec(monkeypatch):
    monkeypatch.delenv("OMPI_COMM_WORLD_SIZE", raising=False)
    assert cu.create_communicator() is None
    assert cu.current_communicator() is None
    assert cu.single_or_rankzero() is True


def test_a_failing_communicator_is_ignored_only_when_asked(monkeypatch):
    monkeypatch.setenv("OMPI_COMM_WORLD_SIZE", "2")
    import nnabla.communicators as C

    def broken(ctx):
        raise RuntimeError("no MPI here")
    monkeypatch.setattr(C, "MultiProcessCommunicator", broken)
    assert cu.create_communicator(ignore_error=True, extension_module="cpu") is None
    try:
        cu.create_communicator(extension_module="cpu")
    except RuntimeError as e:
        assert "no MPI here" in str(e)
    else:
        raise AssertionError("the failure was swallowed")
