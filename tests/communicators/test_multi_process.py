"""Real 2-process MPI jobs (mpiexec -n 2), each with a time limit; see workers/."""
import time

import pytest


def test_collectives_and_groups_match_numpy(run_mpi):
    run_mpi("collectives")


def test_all_reduce_callback_and_data_parallel_training_match_one_process(run_mpi):
    run_mpi("training")


@pytest.mark.parametrize("backend", ["cpu", "toy", "boxed"])
def test_sync_batch_normalization_equals_batch_normalization_of_the_whole_batch(run_mpi,
                                                                                backend):
    # toy: the kernel falls back to the cpu backend's; boxed: the cpu kernel runs on boxed
    # arrays (no numpy conversion), its exchange handing the communicator boxed arrays
    run_mpi("sync_bn", env={"NNABLA_TEST_BACKEND": backend})


def test_mismatched_shapes_dtypes_or_roots_raise_on_every_rank(run_mpi):
    run_mpi("mismatch")


def test_watchdog_times_out_on_a_hung_peer_and_aborts_the_job(run_mpi):
    start = time.monotonic()
    out = run_mpi("hang", env={"NNABLA_MPI_WATCH_DOG_ENABLE": "1",
                               "NNABLA_MPI_WATCH_DOG_TIMEOUT": "2"}, check=False)
    elapsed = time.monotonic() - start
    assert out.returncode != 0, out.stdout + out.stderr
    assert ("TIMEOUT MultiProcessDataParallelCommunicatorMpi.all_reduce on group 'world' "
            "(ranks [0, 1]) did not complete within 2 s on rank 0") in out.stdout, out.stdout
    assert "peer process is hung or dead" in out.stdout
    assert elapsed < 60, elapsed           # rank 1 sleeps 600 s: the abort ended it


def test_a_rank_dying_mid_training_aborts_the_job_instead_of_hanging(run_mpi):
    out = run_mpi("dying_rank", check=False)
    assert out.returncode != 0
    assert "rank 1 fails before the all_reduce" in out.stderr
    assert "returned without its peer" not in out.stdout


def test_large_arrays_travel_in_their_own_buffers_and_small_ones_packed(run_mpi):
    run_mpi("messages")


def test_packs_are_kept_and_hold_their_arrays_results_without_overwriting_held_views(run_mpi):
    run_mpi("resident_packs")


def test_all_reduce_of_arrays_zeroed_on_every_rank_is_skipped_as_in_nnabla(run_mpi):
    run_mpi("zeroing")


def test_a_forecast_layout_is_checked_in_its_data_message_and_deviations_raise(run_mpi):
    run_mpi("forecast")


def test_float16_in_a_half_communicator_rounds_as_nnabla_s_nccl_half_path(run_mpi):
    run_mpi("half")


# under the watchdog every collective is non-blocking and polled (MpiCommunicator._wait)
WATCHDOG = pytest.mark.parametrize("watchdog", ["0", "1"], ids=["blocking", "watchdog"])


@WATCHDOG
def test_the_steady_state_path_of_a_repeated_packed_all_reduce_sums_whatever_the_arrays_did(
        run_mpi, watchdog):
    run_mpi("steady", env={"NNABLA_MPI_WATCH_DOG_ENABLE": watchdog})


@WATCHDOG
def test_the_steady_path_without_the_layout_check_sums_whatever_the_arrays_did(run_mpi,
                                                                               watchdog):
    run_mpi("steady_unchecked", env={"NNABLA_MPI_CHECK_LAYOUT": "0",
                                     "NNABLA_MPI_WATCH_DOG_ENABLE": watchdog})
