"""Device-less check of the CUDA backend: compile every raw kernel source with NVRTC.

``python -m nnabla_ext.cuda.check`` compiles each ``kernels/cuda/*.cu`` for every target
architecture (``--arch``, default sm_80, sm_90, sm_100, sm_120) with NVRTC through CuPy's
binding (no GPU or driver needed; ``--compiler nvcc`` uses ``nvcc -cubin`` instead), prints
how many kernels and function types it covered and how the table implements each function,
and exits 1 if anything failed to compile.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

from ._host_cuda import kernel_signatures

DEFAULT_ARCHS = ("80", "90", "100", "120")


def compile_nvrtc(source, name, arch, options):
    """Compile ``source`` with NVRTC for ``sm_<arch>``; return the cubin size in bytes."""
    from cupy.cuda import nvrtc
    program = nvrtc.createProgram(source, f"{name}.cu", [], [])
    try:
        try:
            nvrtc.compileProgram(program, [f"-arch=sm_{arch}", *options])
        except nvrtc.NVRTCError as e:
            raise RuntimeError(f"{e}\n{nvrtc.getProgramLog(program)}") from None
        return len(nvrtc.getCUBIN(program))
    finally:
        nvrtc.destroyProgram(program)


def compile_nvcc(source, name, arch, options):
    """Compile ``source`` with ``nvcc -cubin`` for ``sm_<arch>``; return the cubin size."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        raise RuntimeError("nvcc is not on PATH")
    with tempfile.TemporaryDirectory() as folder:
        src, out = os.path.join(folder, f"{name}.cu"), os.path.join(folder, f"{name}.cubin")
        with open(src, "w") as f:
            f.write(source)
        done = subprocess.run([nvcc, "-cubin", f"-arch=sm_{arch}", *options, src, "-o", out],
                              capture_output=True, text=True)
        if done.returncode:
            raise RuntimeError(done.stderr)
        return os.path.getsize(out)


COMPILERS = {"nvrtc": compile_nvrtc, "nvcc": compile_nvcc}


def compile_all(archs=DEFAULT_ARCHS, compiler="nvrtc"):
    """``[(source, kernels, arch, cubin bytes or None, error or '', seconds)]``."""
    from .kernels import raw
    results = []
    for name, source in raw.sources().items():
        kernels = sorted(kernel_signatures(source))
        for arch in archs:
            start = time.perf_counter()
            try:
                size, error = COMPILERS[compiler](source, name, arch, raw.COMPILE_OPTIONS), ""
            except Exception as e:  # noqa: BLE001 - reported per source and architecture
                size, error = None, f"{type(e).__name__}: {e}"
            results.append((name, kernels, arch, size, error, time.perf_counter() - start))
    return results


def coverage():
    """``{function type: how the cuda table implements it}``: raw CUDA, cuTENSOR,
    composite, host setup, host draws (random parameters drawn on the host, applied on the
    device) or generic xp (the CPU plugin's xp code on CuPy)."""
    from .kernels import CUDA_KERNELS, composite, host_setup, raw, sampling, stochastic
    from .kernels import transpose
    kinds = {}
    for name in CUDA_KERNELS:
        kinds[name] = ("raw CUDA" if name in raw.KERNELS or name in sampling.KERNELS else
                       "cuTENSOR" if name in transpose.KERNELS else
                       "composite" if name in composite.KERNELS else
                       "host setup" if name in host_setup.KERNELS else
                       "host draws" if name in stochastic.KERNELS else "generic xp")
    return kinds


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m nnabla_ext.cuda.check",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--arch", nargs="+", default=list(DEFAULT_ARCHS),
                        help="compute capabilities to compile for (default: %(default)s)")
    parser.add_argument("--compiler", choices=sorted(COMPILERS), default="nvrtc")
    args = parser.parse_args(argv)
    results = compile_all(args.arch, args.compiler)
    failed = [r for r in results if r[4]]
    for name, kernels, arch, size, error, seconds in results:
        status = f"ok ({size} bytes)" if not error else "FAILED"
        print(f"{name:<24} sm_{arch:<4} {status:<20} {seconds * 1000:7.1f} ms  "
              f"{', '.join(kernels)}")
        if error:
            print("    " + error.replace("\n", "\n    "))
    kinds = coverage()
    n_kernels = sum(len(r[1]) for r in results if r[2] == args.arch[0])
    counts = {k: sum(1 for v in kinds.values() if v == k) for k in sorted(set(kinds.values()))}
    print(f"{n_kernels} raw kernels in {len({r[0] for r in results})} sources, "
          f"{len(args.arch)} architectures: {len(results) - len(failed)} compiled, "
          f"{len(failed)} failed")
    print(f"{len(kinds)} function types on 'cuda': " +
          ", ".join(f"{n} {k}" for k, n in counts.items()))
    for kind in ("raw CUDA", "cuTENSOR", "host setup", "host draws"):
        print(f"{kind}: " + ", ".join(sorted(n for n, k in kinds.items() if k == kind)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
