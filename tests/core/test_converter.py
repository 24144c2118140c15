"""nnabla.utils.converter: function tables in the layout of nnabla's functions.yaml."""
from nnabla._spec import SPECS
from nnabla.utils.converter import get_category_info, get_function_info


def test_every_spec_function_is_listed_under_its_category():
    categories = get_category_info()
    for spec in SPECS.values():
        assert categories[spec.category][spec.name]["snake_name"] == spec.snake


def test_argument_types_come_from_the_nnp_schema():
    convolution = get_function_info()["Convolution"]
    assert convolution["arguments"]["pad"]["type"] == "Shape"
    assert convolution["arguments"]["group"] == {"type": "int64", "default": "1"}
    assert convolution["inputs"]["weight"] == {"parameter": True}
    assert convolution["inputs"]["bias"] == {"optional": True, "parameter": True}


def test_variadic_inputs_are_flagged():
    assert get_function_info()["Concatenate"]["inputs"]["x"] == {"variadic": True}
