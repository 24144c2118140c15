"""The shape of ``nnabla.experimental.framework``'s API as plain data: for each method of
its classes, the parameters' names, kinds and defaults (a callable default is recorded as
``"<callable>"``: nnabla's lambdas have no comparable repr). Shared by
tools/record_framework_api.py (run on nnabla 1.39) and tests/experimental/test_framework_api.py.
"""
import inspect

MODULES = ("data", "evaluator", "trainer", "updater", "worker")
CLASSES = ("Data", "Evaluator", "Trainer", "Updater", "Worker")


def _default(parameter):
    if parameter.default is parameter.empty:
        return None
    return "<callable>" if callable(parameter.default) else repr(parameter.default)


def describe(framework):
    """Return {"module.Class.member": [[name, kind, default], ...] or "class"}."""
    api = {}
    for module_name in MODULES:
        module = getattr(framework, module_name)
        for class_name in CLASSES:
            cls = getattr(module, class_name, None)
            if cls is None or cls.__module__ != module.__name__:
                continue
            for member, value in vars(cls).items():
                key = f"{module_name}.{class_name}.{member}"
                if isinstance(value, type):
                    api[key] = "class"
                elif callable(value):
                    api[key] = [[p.name, p.kind.name, _default(p)]
                                for p in inspect.signature(value).parameters.values()]
    return api
