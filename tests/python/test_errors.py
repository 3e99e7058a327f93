"""Bad input raises a tessera.Error subclass naming the problem; nothing aborts the
interpreter."""

import numpy
import pytest

import tessera
from conftest import regression_arrays


def test_config_errors_name_the_json_path(tiny_config):
    tiny_config["model"]["layers"][0]["filters"] = 0
    with pytest.raises(tessera.ConfigError, match=r"\$\.model\.layers\[0\]\.filters") as error:
        tessera.Model(tiny_config)
    assert error.value.path == "$.model.layers[0].filters"
    assert isinstance(error.value, ValueError)


def test_a_missing_config_file_is_an_io_error(tmp_path):
    with pytest.raises(tessera.IoError, match="absent.json"):
        tessera.Model(str(tmp_path / "absent.json"))


def test_a_checkpoint_of_another_file_is_refused(tiny_config, tmp_path):
    path = tmp_path / "not_a_checkpoint.ckpt"
    path.write_bytes(b"hello")
    with pytest.raises(tessera.IoError, match="not_a_checkpoint.ckpt"):
        tessera.Model(tiny_config, checkpoint=path)


@pytest.mark.parametrize(
    "x, message",
    [
        (numpy.zeros((2, 16, 16, 16, 4), numpy.float64), "x: dtype float64, expected float32"),
        (numpy.zeros((2, 4, 16, 16, 16), numpy.float32).transpose(0, 2, 3, 4, 1), "x: not C-contiguous"),
        (numpy.zeros((2, 16, 16, 16, 3), numpy.float32),
         r"x: shape \[2, 16, 16, 16, 3\], the model takes \[N, 16, 16, 16, 4\]"),
        ([[1.0]], "x: expected a numpy array, got <class 'list'>"),
    ],
)
def test_predict_refuses_arrays_naming_the_argument(tiny_config, x, message):
    model = tessera.Model(tiny_config)
    with pytest.raises(tessera.ArrayError, match=message):
        model.predict(x)


def test_training_arrays_are_checked(tiny_config):
    x, y = regression_arrays(16)
    with pytest.raises(tessera.ArrayError, match=r"y: shape \[15, 4\] does not start with the 16 samples"):
        tessera.train(tiny_config, data=(x, y[:15]), progress=False)
    with pytest.raises(tessera.ArrayError, match="y: dtype int64"):
        tessera.train(tiny_config, data=(x, y.astype(numpy.int64)), progress=False)
    bad = x.copy()
    bad[5, 0, 0, 0, 0] = numpy.nan
    with pytest.raises(tessera.ArrayError, match="x: 1 values are not finite .* in sample 5"):
        tessera.train(tiny_config, data=(bad, y), progress=False)
    # Each batch of a stream too, where it is read.
    with pytest.raises(tessera.ArrayError, match="data: batch 2 of epoch 1 x: 1 values are not finite .* in sample 5"):
        tessera.train(tiny_config, data=[(x[:8], y[:8]), (bad[:8], y[:8])], progress=False)
    with pytest.raises(tessera.ConfigError,
                       match=r"samples have shape \[8, 8, 8, 4\] .* model input is \[16, 16, 16, 4\]"):
        tessera.train(tiny_config, data=(numpy.ascontiguousarray(x[:, :8, :8, :8]), y), progress=False)


def test_training_options_are_checked(tiny_config):
    x, y = regression_arrays(16)
    with pytest.raises(tessera.ConfigError, match="epochs: expected an integer"):
        tessera.train(tiny_config, data=(x, y), epochs="2", progress=False)
    with pytest.raises(tessera.ConfigError, match=r"batch_size: expected an integer from 1 to"):
        tessera.train(tiny_config, data=(x, y), batch_size=0, progress=False)
    with pytest.raises(tessera.ConfigError, match=r"\$\.data: the config has a data section"):
        tessera.train(dict(tiny_config, data={"source": "synthetic_fields"}), data=(x, y), progress=False)


def test_a_callback_that_raises_stops_training_and_raises_again(tiny_config):
    x, y = regression_arrays(32)
    seen = []

    def on_step(metrics):
        seen.append(metrics["step"])
        if metrics["step"] == 2:
            raise RuntimeError("enough")

    with pytest.raises(RuntimeError, match="enough"):
        tessera.train(tiny_config, data=(x, y), on_step=on_step, progress=False)
    assert seen == [1, 2]  # the run stopped after the step whose callback raised
