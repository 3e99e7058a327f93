"""The exceptions of the tessera module.

Every error Tessera's C++ library raises reaches Python as one of these, with the message the
`tessera` command would print (it names the JSON path, the file, the layer or the argument).
Each also derives from the built-in exception it resembles, so ``except ValueError`` catches a
bad config as it would elsewhere.
"""


class Error(Exception):
    """Base of every exception Tessera raises."""


class ConfigError(Error, ValueError):
    """A config (or an argument that overrides one) is invalid. ``path`` is its JSON path,
    such as ``$.model.layers[3].filters``."""

    path = ""


class ShapeError(Error, ValueError):
    """Shapes that do not fit a layer, a model or a split over ranks."""


class IoError(Error, OSError):
    """A file could not be read or written; the message names it."""


class DistError(Error, RuntimeError):
    """An MPI operation failed."""


class ArrayError(Error, ValueError):
    """A numpy array of the wrong type, dtype, shape or memory order; the message names the
    argument."""


class TrainingStopped(KeyboardInterrupt):
    """Training stopped at a step boundary on Ctrl-C (SIGINT), after writing its checkpoint
    when one was asked for. ``result`` is the TrainingResult of the steps taken, so a script
    that catches it keeps the model; ``checkpoint`` the file to resume from (or None)."""

    def __init__(self, message, result, checkpoint):
        super().__init__(message)
        self.result = result
        self.checkpoint = checkpoint
