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
