"""A small training framework (``nnabla.experimental.framework``).

Training is split along its three concerns: :class:`Data` prepares the data (sources,
iterators, batches), :class:`Worker` holds the model (variables, graphs, loss, solver,
monitors, and what to do at each step), and :class:`Trainer` runs the loop that is the
same for every model. A Worker delegates one update to an
:class:`~nnabla.experimental.framework.updater.Updater` and one evaluation to an
:class:`~nnabla.experimental.framework.evaluator.Evaluator`, both driven by callbacks.
"""
from . import data, evaluator, trainer, updater, worker
from .data import Data
from .evaluator import Evaluator
from .trainer import Trainer
from .updater import Updater
from .worker import Worker

__all__ = ["Data", "Evaluator", "Trainer", "Updater", "Worker",
           "data", "evaluator", "trainer", "updater", "worker"]
