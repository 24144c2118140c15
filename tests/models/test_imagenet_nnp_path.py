"""The published-file path of the ImageNet classes, offline: a file shaped like nnabla's
(see nnc_files.py) loads as if downloaded, and every use_up_to key, training mode and
auxiliary tower gives what nnabla 1.39 gives from the same file (recorded by
tools/record_imagenet_nnp_paths.py) and what pretrained=False builds."""
import os

import pytest

import nnabla as nn
import nnabla.models.imagenet as imagenet
import nnc_files

RECORDED = nnc_files.load_recorded(os.path.join(
    os.path.dirname(__file__), "..", "data", "models", "imagenet_nnp_paths.json"))

# nnabla 1.39 answers 'pool' in inference with the classifier when a dropout follows the
# pooling: it removes the dropout by renaming its output to the pooling's, and its
# use_up_to never sees the renamed variable. We stop at the pooling, as documented.
DIVERGENCES = {("GoogLeNet", "pool", False): [["AveragePooling_3", [1, 1024, 1, 1]]],
               ("InceptionV3", "pool", False): [["AveragePooling_2", [1, 2048, 1, 1]]]}


@pytest.fixture(autouse=True)
def model_home(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("NNABLA_MODELS_URL_BASE", "http://127.0.0.1:9/")
    monkeypatch.delenv("NNABLA_MODELS_PRETRAINED", raising=False)
    nn.clear_parameters()
    yield tmp_path / "nnabla_data" / "nnp_models" / "imagenet"
    nn.clear_parameters()


@pytest.mark.parametrize("name", nnc_files.CLASSES)
def test_published_file_path_answers_as_nnabla_and_as_the_builder(name, model_home,
                                                                   zero_initial_values):
    model_class = getattr(imagenet, name)
    model_home.mkdir(parents=True)
    nnc_files.write_nnc_style_nnp(model_class, str(model_home / model_class(False)._rel_name))
    from_file, built = model_class(), model_class(pretrained=False)
    assert from_file.nnp is not None
    for record in RECORDED[name]:
        call = record["call"]
        answer = nnc_files.describe(from_file(**call))
        expected = dict(record, outputs=DIVERGENCES.get(
            (name, call.get("use_up_to"), call["training"]), record["outputs"]))
        assert answer == {"outputs": expected["outputs"],
                          "trainable": expected["trainable"]}, call
        assert nnc_files.describe(built(**call))["outputs"] == expected["outputs"], call


def test_every_recorded_class_is_checked():
    assert sorted(RECORDED) == sorted(nnc_files.CLASSES)
