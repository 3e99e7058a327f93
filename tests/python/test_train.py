"""tessera.train on numpy arrays: equal to the same data read from HDF5, callbacks, init,
metrics logs."""

import numpy
import pytest

import tessera
from conftest import regression_arrays


def test_training_from_arrays_equals_training_from_hdf5(tiny_config, tmp_path):
    h5py = pytest.importorskip("h5py")
    x, y = regression_arrays(48, seed=3)
    x_val, y_val = regression_arrays(16, seed=4)
    for name, (inputs, targets) in {"train": (x, y), "validation": (x_val, y_val)}.items():
        with h5py.File(tmp_path / f"{name}.h5", "w") as f:
            f["inputs"] = inputs
            f["targets"] = targets
    options = dict(epochs=2, progress=False)
    from_arrays = tessera.train(tiny_config, data=(x, y), validation=(x_val, y_val), **options)
    files = dict(tiny_config, data={"source": "hdf5", "files": str(tmp_path / "train.h5"),
                                    "validation": {"files": str(tmp_path / "validation.h5")}})
    from_files = tessera.train(files, **options)
    assert from_arrays.steps == from_files.steps == 12
    assert from_arrays.step_losses == from_files.step_losses  # step for step, bit for bit
    assert from_arrays.validation_loss == from_files.validation_loss
    for name, value in from_arrays.model.state_dict().items():
        numpy.testing.assert_array_equal(value, from_files.model.state_dict()[name])


def test_training_lowers_the_loss_and_the_model_predicts(tiny_config):
    x, y = regression_arrays(64, seed=1)
    result = tessera.train(tiny_config, data=(x, y), validation=(x[:16], y[:16]), epochs=3, progress=False)
    assert result.steps == 24 and result.stopped_by is None and result.exit_status == 0
    assert result.step_losses[-1] < result.step_losses[0]
    # The returned model is the trained one: its loss on the validation arrays is the run's.
    assert result.model.evaluate(x[:16], y[:16])["loss"] == pytest.approx(result.validation_loss, rel=1e-6)
    assert result.model.trained_steps == 24


def test_callbacks_see_every_step_and_epoch(tiny_config):
    x, y = regression_arrays(32)
    steps, epochs = [], []
    result = tessera.train(tiny_config, data=(x, y), validation=(x[:8], y[:8]), epochs=2, progress=False,
                           on_step=steps.append, on_epoch=epochs.append)
    assert [s["step"] for s in steps] == list(range(1, 9))
    assert [s["loss"] for s in steps] == result.step_losses
    assert [(e["epoch"], e["step"]) for e in epochs] == [(0, 4), (1, 8)]
    assert epochs[-1]["validation_loss"] == result.validation_loss


def test_init_starts_from_given_weights(tiny_config):
    x, y = regression_arrays(16)
    start = tessera.Model(tiny_config)
    state = {k: v * 0.5 for k, v in start.state_dict(copy=True).items()}
    start.load_state_dict(state)
    # No steps: the trained model is the initial one.
    result = tessera.train(tiny_config, data=(x, y), init=start, max_steps=1, progress=False)
    other = tessera.train(tiny_config, data=(x, y), max_steps=1, progress=False)
    assert result.step_losses != other.step_losses
    again = tessera.train(tiny_config, data=(x, y), init=state, max_steps=1, progress=False)
    assert again.step_losses == result.step_losses


def test_checkpoint_resume_and_metrics_log(tiny_config, tmp_path):
    x, y = regression_arrays(32)
    checkpoint, metrics = tmp_path / "run.ckpt", tmp_path / "run.jsonl"
    whole = tessera.train(tiny_config, data=(x, y), epochs=2, progress=False)
    first = tessera.train(tiny_config, data=(x, y), epochs=2, max_steps=3, checkpoint=checkpoint, metrics=metrics,
                          progress=False)
    assert first.checkpoint == str(checkpoint) and checkpoint.exists()
    assert tessera.Model(tiny_config, checkpoint=checkpoint).trained_steps == 3
    rest = tessera.train(tiny_config, data=(x, y), epochs=2, resume=checkpoint, progress=False)
    assert first.step_losses + rest.step_losses == whole.step_losses
    log = tessera.read_metrics(metrics)
    assert log.start["batch_size"] == 8 and log.start["ranks"] == 1
    steps, losses = log.series("train", "loss")
    assert steps and steps[-1] == 3 and all(numpy.isfinite(losses))
    assert log.end is not None


def test_an_iterable_of_batches_trains_as_arrays_do(tiny_config):
    x, y = regression_arrays(8, seed=9)  # one batch: an epoch of arrays is that batch, shuffled
    from_arrays = tessera.train(tiny_config, data=(x, y), epochs=3, progress=False)
    from_list = tessera.train(tiny_config, data=[(x, y)], epochs=3, progress=False)
    assert from_list.steps == from_arrays.steps == 3
    numpy.testing.assert_allclose(from_list.step_losses, from_arrays.step_losses, rtol=1e-5)


def test_a_generator_gives_one_epoch_of_batches(tiny_config):
    x, y = regression_arrays(32, seed=2)
    batches = ((x[i:i + 8], y[i:i + 8]) for i in range(0, 32, 8))
    result = tessera.train(tiny_config, data=batches, steps_per_epoch=4, progress=False)
    assert result.steps == 4
    again = ((x[i:i + 8], y[i:i + 8]) for i in range(0, 32, 8))
    with pytest.raises(tessera.Error, match="ended after 0 batches of epoch 2; an epoch takes 4"):
        tessera.train(tiny_config, data=again, steps_per_epoch=4, epochs=2, progress=False)
    with pytest.raises(tessera.ConfigError, match="needs steps_per_epoch="):
        tessera.train(tiny_config, data=iter([(x[:8], y[:8])]), progress=False)
    with pytest.raises(tessera.ArrayError, match="batch 1 x: holds 4 samples; the run's batch_size is 8"):
        tessera.train(tiny_config, data=[(x[:4], y[:4])], progress=False)


def test_the_builder_writes_the_config_a_file_holds(tiny_config):
    b = tessera.ModelBuilder(channels=4, size=[16, 16, 16])
    for i, filters in enumerate((16, 32, 64), 1):
        b.conv3d(filters, name=f"conv{i}", kernel=3, padding=1).batch_norm(name=f"bn{i}")
        b.leaky_relu(name=f"act{i}", alpha=0.01).max_pool3d(name=f"pool{i}", kernel=2)
    b.flatten(name="flatten").dense(64, name="fc1").leaky_relu(name="act4", alpha=0.01).dense(4, name="out")
    assert b.last == "out"
    assert b.model() == tiny_config["model"]
    built = b.config(loss=tiny_config["loss"], optimizer=tiny_config["optimizer"], training=tiny_config["training"])
    x, _ = regression_arrays(2)
    numpy.testing.assert_array_equal(tessera.Model(built).predict(x), tessera.Model(tiny_config).predict(x))
    with pytest.raises(tessera.ConfigError, match=r"\$\.model\.layers\[0\]"):
        tessera.Model(tessera.ModelBuilder(4, [16, 16, 16]).conv3d(8, kernal=3).dense(1).config({"type": "mse"}, {}))
