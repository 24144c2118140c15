"""Maps the ``nnabla_core/`` source folder to the ``nnabla`` import package, and builds the
core's one C module (``nnabla._native_graph``: the auto-forward graph builder)."""
from setuptools import Extension, find_packages, setup

setup(packages=["nnabla" + p[len("nnabla_core"):]
                for p in find_packages(include=["nnabla_core", "nnabla_core.*"])],
      ext_modules=[Extension("nnabla._native_graph", ["nnabla_core/_native_graph.c"],
                             extra_compile_args=["-O2"])])
