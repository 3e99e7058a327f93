"""Stop signals while tessera.train runs: Ctrl-C stops after the step with a checkpoint and
raises TrainingStopped; SIGTERM returns the result with the exit status to use."""

import os
import signal

import pytest

import tessera
from conftest import regression_arrays


def signal_at_step(number, step):
    def on_step(metrics):
        if metrics["step"] == step:
            os.kill(os.getpid(), number)
    return on_step


def test_ctrl_c_stops_cleanly_with_a_checkpoint(tiny_config, tmp_path):
    x, y = regression_arrays(64)
    checkpoint = tmp_path / "stopped.ckpt"
    handler = signal.getsignal(signal.SIGINT)
    with pytest.raises(tessera.TrainingStopped, match="stopped by SIGINT after step 4") as stopped:
        tessera.train(tiny_config, data=(x, y), epochs=2, checkpoint=checkpoint, progress=False,
                      on_step=signal_at_step(signal.SIGINT, 3))
    # The signal came during step 3's callback; the ranks agree on it in step 4's reduction.
    assert stopped.value.result.steps == 4
    assert stopped.value.checkpoint == str(checkpoint)
    assert tessera.Model(tiny_config, checkpoint=checkpoint).trained_steps == 4
    assert isinstance(stopped.value, KeyboardInterrupt)
    assert signal.getsignal(signal.SIGINT) is handler  # Python's own handler is back
    resumed = tessera.train(tiny_config, data=(x, y), epochs=2, resume=checkpoint, progress=False)
    assert resumed.steps == 16 and len(resumed.step_losses) == 12
    whole = tessera.train(tiny_config, data=(x, y), epochs=2, progress=False)
    assert stopped.value.result.step_losses + resumed.step_losses == whole.step_losses


def test_sigterm_returns_the_result_and_exit_status(tiny_config):
    x, y = regression_arrays(32)
    handler = signal.getsignal(signal.SIGTERM)
    result = tessera.train(tiny_config, data=(x, y), epochs=2, progress=False,
                           on_step=signal_at_step(signal.SIGTERM, 1))
    assert (result.steps, result.stopped_by, result.exit_status) == (2, "SIGTERM", 143)
    assert signal.getsignal(signal.SIGTERM) is handler
