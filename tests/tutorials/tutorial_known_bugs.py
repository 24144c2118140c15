"""Reasons of the tutorial tests marked ``xfail``: framework bugs and missing features."""


def missing(module):
    """The reason of a test that needs ``module``, which our framework does not have yet."""
    return f"{module} is missing (ModuleNotFoundError: No module named '{module}')"
