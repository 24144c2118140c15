"""Maps the ``nnabla_core/`` source folder to the ``nnabla`` import package."""
from setuptools import find_packages, setup

setup(packages=["nnabla" + p[len("nnabla_core"):]
                for p in find_packages(include=["nnabla_core", "nnabla_core.*"])])
