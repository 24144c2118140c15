import pytest
from nnabla import parameter


@pytest.fixture(autouse=True)
def _fresh_parameters():
    """Each test starts and ends with an empty root scope and default no_grad state."""
    parameter.current_scope = parameter.root_scope
    parameter.clear_parameters()
    yield
    parameter.current_scope = parameter.root_scope
    parameter.clear_parameters()
    parameter.current_no_grad = False
