"""tessera.Model: predict, evaluate, state dicts and checkpoints on numpy arrays."""

import numpy
import pytest

import tessera
from conftest import regression_arrays


def test_predict_is_the_same_whatever_the_batch_size(tiny_config):
    model = tessera.Model(tiny_config)
    x, _ = regression_arrays(10)
    whole = model.predict(x, batch_size=10)
    assert whole.shape == (10, 4) and whole.dtype == numpy.float32
    # Inference takes batch norm's running statistics: rows are independent of their batch.
    numpy.testing.assert_allclose(model.predict(x, batch_size=3), whole, rtol=1e-5, atol=1e-6)
    numpy.testing.assert_allclose(model.predict(x[4:5]), whole[4:5], rtol=1e-5, atol=1e-6)


def test_evaluate_is_the_mean_squared_error_of_predict(tiny_config):
    model = tessera.Model(tiny_config)
    x, y = regression_arrays(12)
    expected = float(((model.predict(x).astype(numpy.float64) - y) ** 2).mean())
    result = model.evaluate(x, y, batch_size=5)
    assert result["samples"] == 12
    assert result["loss"] == pytest.approx(expected, rel=1e-5)


def test_state_dict_views_follow_load_state_dict(tiny_config):
    model = tessera.Model(tiny_config)
    view = model.state_dict()
    assert list(view)[:3] == ["conv1.weight", "conv1.bias", "bn1.gamma"]
    assert view["conv1.weight"].shape == (16, 3, 3, 3, 4)  # [O, kD, kH, kW, I]
    assert "bn1.running_var" in view  # buffers too, as in PyTorch
    snapshot = model.state_dict(copy=True)
    changed = {k: v + 1.0 for k, v in snapshot.items()}
    model.load_state_dict(changed)
    numpy.testing.assert_array_equal(view["conv1.weight"], changed["conv1.weight"])
    numpy.testing.assert_array_equal(model.state_dict(copy=True)["out.bias"], changed["out.bias"])


def test_a_refused_state_dict_changes_nothing(tiny_config):
    model = tessera.Model(tiny_config)
    before = model.state_dict(copy=True)
    bad = {k: v + 1.0 for k, v in before.items()}
    bad["out.weight"] = numpy.zeros((3, 3), numpy.float32)
    with pytest.raises(tessera.ArrayError, match=r"state_dict\['out.weight'\]: shape \[3, 3\]"):
        model.load_state_dict(bad)
    for name, value in model.state_dict().items():
        numpy.testing.assert_array_equal(value, before[name])
    missing = dict(before)
    del missing["bn2.beta"]
    with pytest.raises(tessera.Error, match="missing bn2.beta"):
        model.load_state_dict(missing)
    model.load_state_dict(missing, strict=False)  # what matches


def test_a_saved_checkpoint_loads_into_an_equal_model(tiny_config, tmp_path):
    model = tessera.Model(tiny_config)
    state = {k: v * 0.5 for k, v in model.state_dict(copy=True).items()}
    model.load_state_dict(state)
    path = tmp_path / "model.ckpt"
    model.save_checkpoint(path)
    loaded = tessera.Model(tiny_config, checkpoint=path)
    for name, value in loaded.state_dict().items():
        numpy.testing.assert_array_equal(value, state[name])
    x, _ = regression_arrays(3)
    numpy.testing.assert_array_equal(loaded.predict(x), model.predict(x))


def test_layers_and_sample_shape(tiny_config):
    model = tessera.Model(tiny_config)
    assert model.sample_shape == (16, 16, 16, 4)
    layers = model.layers()
    assert layers[0]["name"] == "conv1" and layers[0]["type"] == "conv3d"
    assert layers[0]["output"] == (16, 16, 16, 16)
    assert layers[-1]["output"] == (4,)
