"""Tessera from Python: train, evaluate and run Tessera's models on numpy arrays, and move
their weights to and from PyTorch.

    import numpy, tessera
    config = tessera.read_config("examples/cosmoflow/cosmoflow_tiny.json")
    result = tessera.train(config, data=(x, y), validation=(x_val, y_val), epochs=2)
    predictions = result.model.predict(x_val)

Arrays are channels-last, as in Tessera's configs: a 3D sample is [D, H, W, C] and a batch
[N, D, H, W, C]; they must be C-contiguous float32 (nothing is converted behind your back).
Under ``mpirun -np N python3 script.py`` every rank runs the script; training splits the work as
the config's distributions say, and only rank 0 prints. docs/python.md has the whole guide.
"""

import atexit as _atexit
import itertools as _itertools
import json as _json
import os as _os


def _default_openmp_binding():
    """Threads that stay on their CPUs keep the pages they first touched local, so the `tessera`
    command runs with OMP_PROC_BIND=spread and OMP_PLACES=threads where the user set neither and
    the process has its CPUs to itself (bound to a subset by a launcher, or the only rank of its
    node). The OpenMP runtime reads them when it is loaded, which is when the compiled module
    is imported below, unless something (torch) loaded it before; TESSERA_OMP_DEFAULTS=0 turns
    this off."""
    env = _os.environ
    if "OMP_PROC_BIND" in env or "OMP_PLACES" in env or env.get("TESSERA_OMP_DEFAULTS") == "0":
        return
    owns_cpus = len(_os.sched_getaffinity(0)) < (_os.cpu_count() or 1) if hasattr(_os, "sched_getaffinity") else False
    if not owns_cpus:
        local = env.get("OMPI_COMM_WORLD_LOCAL_SIZE", env.get("MPI_LOCALNRANKS"))
        if local is not None:
            owns_cpus = local == "1"
        else:
            owns_cpus = not any(v in env for v in ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "SLURM_STEP_ID"))
    if owns_cpus:
        env["OMP_PROC_BIND"] = "spread"
        env["OMP_PLACES"] = "threads"


_default_openmp_binding()
from . import _tessera  # noqa: E402  (after the binding defaults, which its OpenMP runtime reads)
from .builder import ModelBuilder  # noqa: F401,E402
from .errors import (ArrayError, ConfigError, DistError, Error, IoError, ShapeError,  # noqa: F401,E402
                     TrainingStopped)
from .metrics import MetricsLog, read_metrics  # noqa: F401,E402

__version__ = _tessera.version
_atexit.register(_tessera._shutdown)


def rank():
    """This process's MPI rank (0 without a launcher)."""
    return _tessera.rank()


def ranks():
    """The number of MPI ranks (1 without a launcher)."""
    return _tessera.ranks()


def read_config(path):
    """The run config in the JSON file `path`, as a dict (IoError names a missing or
    unreadable file, ConfigError a file that is not JSON)."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise IoError(f"{path}: cannot read the config: {e.strerror}") from None
    try:
        return _json.loads(text)
    except ValueError as e:
        raise ConfigError(f"{path}: not valid JSON: {e}") from None


def _config_dict(config, argument="config"):
    """A config given as a dict or as the path of a JSON file, as a dict."""
    if isinstance(config, (str, _os.PathLike)):
        return read_config(_os.fspath(config))
    if not isinstance(config, dict):
        raise ConfigError(f"{argument}: expected a dict or the path of a JSON file, got {type(config).__name__}")
    return config


def _to_json(config):
    try:
        return _json.dumps(config, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise ConfigError(f"config: cannot be written as JSON: {e}") from None


def _single_rank(config):
    """The config with its distributions dropped: a Model runs on this process alone."""
    config = _json.loads(_json.dumps(config))
    model = config.get("model")
    if isinstance(model, dict):
        model.pop("distribution", None)
        for layer in model.get("layers", []) if isinstance(model.get("layers"), list) else []:
            if isinstance(layer, dict):
                layer.pop("distribution", None)
    return config


class Model:
    """A run config's model on this process, for inference, evaluation and weights.

    ``Model(config, checkpoint=None, backend="auto")``: `config` is a dict or a JSON file; its
    "model" section is built without its distributions (every rank holds the whole model), with
    the parameters of `checkpoint` (a file ``tessera train --checkpoint`` or
    :meth:`save_checkpoint` wrote) or, without one, those the config's seed initialises.
    """

    def __init__(self, config, checkpoint=None, backend="auto"):
        self.config = _config_dict(config)
        self._model = _tessera.Model(_to_json(_single_rank(self.config)),
                                     "" if checkpoint is None else _os.fspath(checkpoint), backend)

    @property
    def sample_shape(self):
        """The shape of one input sample, channels-last ((D, H, W, C), (H, W, C) or (F,))."""
        return self._model.sample_shape

    @property
    def trained_steps(self):
        """Optimizer steps the parameters were trained for (from the checkpoint or the run)."""
        return self._model.trained_steps

    def layers(self):
        """One dict per layer: name, type, output shape (one sample), parameters, backend,
        precision."""
        return self._model.layers()

    def _batch_size(self, batch_size):
        if batch_size is None:
            batch_size = self.config.get("training", {}).get("batch_size", 8)
        return batch_size

    def predict(self, x, batch_size=None):
        """The model's output for inputs `x` ([N, *sample_shape], float32, C-contiguous), as a
        new float32 array [N, ...] (channels-last). Runs in batches of `batch_size` (default:
        the config's training.batch_size)."""
        return self._model.predict(x, self._batch_size(batch_size))

    def evaluate(self, x, y, batch_size=None):
        """The config's loss of the model on inputs `x` and targets `y` (float32 arrays as for
        training): a dict with "loss" (the mean per-sample loss), "samples" and, for
        classification losses, "accuracy"."""
        return self._model.evaluate(x, y, self._batch_size(batch_size))

    def state_dict(self, copy=False):
        """Every parameter and buffer by name ("conv1.weight", "bn1.running_mean", ...), in
        Tessera's layouts (docs/python.md): conv weights [O, kD, kH, kW, I], dense weights
        [out, in]. Without `copy` the arrays are views of the model's memory (CPU builds), which
        change as the model does and must not be used after the model is gone."""
        return self._model.state_dict(copy)

    def load_state_dict(self, values, strict=True):
        """Sets parameters and buffers from `values` (name → float32 array of the parameter's
        shape). With `strict` every parameter must be given and nothing else; a dict that is
        refused changes nothing."""
        self._model.load_state_dict(values, strict)

    def save_checkpoint(self, path):
        """Writes a checkpoint (atomically) that ``tessera predict``, ``tessera train --resume``
        and ``Model(config, checkpoint=path)`` read: the weights, `trained_steps`, and the
        optimizer state the model was loaded with (none for a model a run returned: to
        continue a run exactly, resume from the checkpoint it wrote itself)."""
        self._model.save_checkpoint(_os.fspath(path))


class TrainingResult:
    """What :func:`train` returns: the trained `model` (a :class:`Model`), the `steps` taken,
    every step's loss (`step_losses`), the losses of the logging windows (`logged_losses`),
    the last validation's `validation_loss`, `validation_baseline` (the loss of predicting the
    mean) and `validation_accuracy` where they apply, `validation_metrics`, the throughput
    `samples_per_second`, the `checkpoint` written (or None), and `stopped_by` ("SIGTERM",
    ...) and `exit_status` (128 + the signal) when a stop signal ended the run early."""

    def __init__(self, report, config):
        self._config = config
        self._state = report.pop("state")
        self._model = None
        self.steps = report["steps"]
        self.step_losses = report["step_losses"]
        self.logged_losses = report["logged_losses"]
        self.samples_per_second = report["samples_per_second"]
        self.peak_rss_mb = report["peak_rss_mb_max_rank"]
        self.validation_loss = report.get("validation_loss")
        self.validation_baseline = report.get("validation_baseline")
        self.validation_accuracy = report.get("validation_accuracy")
        self.validation_metrics = _json.loads(report["validation_metrics_json"])
        self.checkpoint = report["checkpoint"]
        self.stopped_by = report["stop_signal"]
        self.exit_status = report["exit_status"]

    @property
    def model(self):
        """The trained model on this process (built on first use)."""
        if self._model is None:
            self._model = Model(self._config)
            self._model._model.load_state_dict(self._state, True)
            self._model._model.trained_steps = self.steps
            self._state = None
        return self._model

    def __repr__(self):
        parts = [f"steps={self.steps}"]
        if self.logged_losses:
            parts.append(f"loss {self.logged_losses[0]:.4g} -> {self.logged_losses[-1]:.4g}")
        if self.validation_loss is not None:
            parts.append(f"validation_loss={self.validation_loss:.4g}")
        if self.stopped_by:
            parts.append(f"stopped_by={self.stopped_by}")
        return "TrainingResult(" + ", ".join(parts) + ")"


def _is_array_pair(data):
    import numpy
    return (isinstance(data, (tuple, list)) and len(data) == 2
            and all(isinstance(a, numpy.ndarray) for a in data))


def _pair(data, argument):
    if data is None:
        return None, None
    if not _is_array_pair(data):
        raise ArrayError(f"{argument}: expected a pair (inputs, targets) of numpy arrays, got {type(data).__name__}")
    return data[0], data[1]


def _stream(data, steps_per_epoch, accumulate):
    """(iterable, first x, first y, steps per epoch) of an iterable of batches."""
    try:
        iterator = iter(data)
    except TypeError:
        raise ArrayError(f"data: expected a pair (x, y) of numpy arrays or an iterable of such pairs, "
                         f"got {type(data).__name__}") from None
    try:
        first = next(iterator)
    except StopIteration:
        raise ArrayError("data: the iterable of batches is empty") from None
    if not _is_array_pair(first):
        raise ArrayError(f"data: batch 1: expected a pair (x, y) of numpy arrays, got {type(first).__name__}")
    if iterator is data:  # an iterator: what was read to learn the shapes is trained on too
        data = _itertools.chain([first], iterator)
    if steps_per_epoch is None:
        if not hasattr(data, "__len__"):
            raise ConfigError("steps_per_epoch: an iterable of batches without a length needs steps_per_epoch=")
        steps_per_epoch = len(data) // (accumulate or 1)
    return (data, first[0], first[1], steps_per_epoch)


def train(config, data=None, validation=None, *, init=None, epochs=None, batch_size=None, accumulate=None,
          max_steps=None, seed=None, precision=None, backend="auto", checkpoint=None, checkpoint_every=None,
          resume=None, metrics=None, progress=True, profile=False, on_step=None, on_epoch=None,
          steps_per_epoch=None):
    """Trains the model of `config` (a dict or a JSON file) as ``tessera train`` does.

    data: (inputs, targets) numpy arrays to train on, shuffled every epoch as a data set is; or
        an iterable of (x, y) batches of the global batch size, trained on in the order given
        (every rank iterates its own and takes its part of each batch; the iterable is
        started again every epoch, so a generator gives one epoch). Then the config has no
        "data" section; without `data` that section is read.
    validation: (inputs, targets) numpy arrays to validate on after every epoch.
    steps_per_epoch: optimizer steps in an epoch of an iterable of batches; default
        ``len(data) // accumulate``.
    init: a :class:`Model` or a state dict whose parameters training starts from (for example
        weights imported from PyTorch); by default the config's seed initialises them.
    epochs ... profile: as the command's flags of those names (``--epochs`` ...); `progress`
        False is ``--no-progress``; `resume` is a checkpoint file or "auto".
    on_step, on_epoch: called on every rank after each step / at the end of each epoch (after
        validation) with a dict of metrics (step, epoch, loss, lr, ...). If one raises, every
        rank stops after that step and the exception is raised again on the rank it came from.

    Returns a :class:`TrainingResult`. Ctrl-C stops every rank after the current step, writes
    the checkpoint when one was asked for, and raises :class:`TrainingStopped` (a
    KeyboardInterrupt) carrying the result; a second Ctrl-C ends the process at once. SIGTERM
    and SIGUSR1 (a batch system's notice) stop the same way but return the result, with
    `stopped_by` and `exit_status` set for the script to exit with.
    """
    config = _config_dict(config)
    stream = None
    if data is not None and not _is_array_pair(data):
        stream = _stream(data, steps_per_epoch, accumulate or config.get("training", {}).get("accumulate", 1))
        data = None
    elif steps_per_epoch is not None:
        raise ConfigError("steps_per_epoch: only an iterable of batches takes it (arrays have their own length)")
    x, y = _pair(data, "data")
    x_val, y_val = _pair(validation, "validation")
    if x is None and stream is None and x_val is not None:
        raise ArrayError("validation: arrays to validate on need data= to train on")
    if x is not None or stream is not None:
        if "data" in config:
            raise ConfigError("$.data: the config has a data section and data= gives the data; drop one")
        config = dict(config, data={})
    if init is not None and resume is not None:
        raise ConfigError("init: training starts from init= or from resume=, not both")
    initial_state = init.state_dict() if isinstance(init, Model) else init
    if initial_state is not None and not isinstance(initial_state, dict):
        raise ConfigError(f"init: expected a tessera.Model or a state dict, got {type(init).__name__}")
    options = dict(epochs=epochs, batch_size=batch_size, accumulate=accumulate, max_steps=max_steps, seed=seed,
                   precision=precision, backend=backend, checkpoint=checkpoint, checkpoint_every=checkpoint_every,
                   resume=resume, metrics=metrics, progress=progress, profile=profile)
    for key in ("checkpoint", "resume", "metrics"):
        if options[key] is not None:
            options[key] = _os.fspath(options[key])
    report = _tessera.train(_to_json(config), x, y, x_val, y_val, stream, options, initial_state, on_step, on_epoch)
    # The model a later .model builds has the trained run's seed: the seed= override included.
    trained_config = config if seed is None else dict(config, training=dict(config.get("training", {}), seed=seed))
    result = TrainingResult(report, trained_config)
    if result.stopped_by == "SIGINT":
        where = f"; checkpoint written to {result.checkpoint}" if result.checkpoint else ""
        raise TrainingStopped(f"training stopped by SIGINT after step {result.steps}{where}", result,
                              result.checkpoint)
    return result
