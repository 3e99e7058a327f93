"""tessera.torch: a model exported to PyTorch gives Tessera's outputs; the weights go there
and back bit for bit; a PyTorch-initialised model trains in Tessera."""

import numpy
import pytest

import tessera
from conftest import example_config, regression_arrays, tiny_regression_config

torch = pytest.importorskip("torch")
import tessera.torch as tt  # noqa: E402  (needs torch)


def small(config, size):
    config["model"]["input"]["size"] = [size] * len(config["model"]["input"]["size"])
    return config


MODELS = {
    "cosmoflow": lambda: example_config("cosmoflow_tiny.json"),
    "unet3d (transposed convolutions, concat)": lambda: small(example_config("unet3d_small.json"), 16),
    "resnet (adds, global pooling)": lambda: example_config("resnet/resnet8_fashion_mnist.json"),
}


def perturbed(model, seed):
    """Running statistics and shifts away from their initial values, so that the comparison
    covers them."""
    rng = numpy.random.default_rng(seed)
    state = model.state_dict(copy=True)
    for name, value in state.items():
        if name.endswith("running_mean") or name.endswith(".beta") or name.endswith(".bias"):
            value[...] = rng.normal(scale=0.2, size=value.shape)
        elif name.endswith("running_var"):
            value[...] = rng.uniform(0.5, 2.0, size=value.shape)
    model.load_state_dict(state)
    return state


@pytest.mark.parametrize("name", MODELS)
def test_exported_module_gives_tessera_outputs(name):
    model = tessera.Model(MODELS[name]())
    perturbed(model, 1)
    x = numpy.random.default_rng(2).random((2, *model.sample_shape), dtype=numpy.float32)
    expected = model.predict(x)
    module = tt.export(model)
    with torch.no_grad():
        out = module(torch.from_numpy(numpy.moveaxis(x, -1, 1).copy())).numpy()
    if out.ndim > 2:
        out = numpy.moveaxis(out, 1, -1)  # channels-first back to Tessera's channels-last
    assert out.shape == expected.shape
    numpy.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4 * numpy.abs(expected).max())


@pytest.mark.parametrize("name", MODELS)
def test_round_trip_through_pytorch_is_bit_identical(name):
    config = MODELS[name]()
    model = tessera.Model(config)
    state = perturbed(model, 3)
    back = tt.import_model(tt.export(model), config)
    assert set(back.state_dict()) == set(state)
    for key, value in back.state_dict().items():
        numpy.testing.assert_array_equal(value, state[key])


def test_state_dict_layouts_are_pytorchs():
    model = tessera.Model(MODELS["unet3d (transposed convolutions, concat)"]())
    exported = tt.export_state_dict(model)
    tessera_state = model.state_dict()
    assert tuple(exported["enc1_conv1.weight"].shape) == (16, 1, 3, 3, 3)
    assert tuple(exported["up2.weight"].shape) == (64, 32, 2, 2, 2)  # ConvTranspose3d: [in, out, k...]
    numpy.testing.assert_array_equal(exported["enc1_bn1.weight"].numpy(), tessera_state["enc1_bn1.gamma"])
    assert int(exported["enc1_bn1.num_batches_tracked"]) == 0


def test_a_pytorch_initialised_model_trains_in_tessera():
    config = tiny_regression_config()
    module = tt.reset_like_pytorch(tt.export(tessera.Model(config)), seed=5)
    start = tt.import_state_dict(module, config)
    for key, value in start.items():
        numpy.testing.assert_array_equal(value, tt.import_state_dict(module.state_dict(), config)[key])
    x, y = regression_arrays(64, seed=6)
    result = tessera.train(config, data=(x, y), init=start, epochs=3, progress=False)
    assert result.step_losses[-1] < result.step_losses[0]
    with torch.no_grad():
        linear = module.fc1.weight.numpy()
    numpy.testing.assert_array_equal(start["fc1.weight"], linear)  # what training started from


def test_layers_without_a_pytorch_counterpart_are_refused():
    config = example_config("bcpnn/bcpnn_fashion_mnist.json")
    with pytest.raises(tessera.ConfigError, match="'bcpnn' has no PyTorch counterpart"):
        tt.export(tessera.Model(config))
