"""Importing the per-category modules of a package by name."""
from __future__ import annotations

import importlib


def category_modules(package, names):
    """Yield ``(name, module)`` for each ``package.name`` that exists.

    A category without a module is skipped; a module that exists but fails to
    import raises, so a broken module is never silently ignored.
    """
    for name in names:
        qualified = f"{package}.{name}"
        try:
            module = importlib.import_module(qualified)
        except ModuleNotFoundError as e:
            if e.name != qualified:
                raise
            continue
        yield name, module
