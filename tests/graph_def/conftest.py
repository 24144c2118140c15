import sys
import os

import pytest

import nnabla as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(autouse=True)
def fresh_graph_state():
    """Each test starts with no parameters and an empty default graph."""
    nn.clear_parameters()
    nn.graph_def.reset_default_graph()
    yield
    nn.clear_parameters()
    nn.graph_def.reset_default_graph()
