"""Writing a model in Python calls instead of a JSON "model" section.

    b = tessera.ModelBuilder(channels=4, size=[16, 16, 16])
    b.conv3d(16, kernel=3, padding=1).batch_norm().leaky_relu(alpha=0.01).max_pool3d(kernel=2)
    b.flatten().dense(64).relu().dense(4)
    config = b.config(loss={"type": "mse"}, optimizer={"type": "adam", "lr": 1e-3})

Each method adds one layer of the type it is named after, with the keys docs/config.md lists
for that type as keyword arguments (checked when the model is built, errors naming
``$.model.layers[i].key``), plus ``name=`` and ``inputs=`` (names of earlier layers) that
every layer takes. The result is the same dict a JSON config would give, so it can be saved
with ``json.dump`` and run by ``tessera train``.
"""

import copy

# The layer types, and the key a first positional argument sets (None: keywords only).
_TYPES = {
    "conv2d": "filters", "conv3d": "filters",
    "conv_transpose2d": "filters", "conv_transpose3d": "filters",
    "max_pool2d": None, "max_pool3d": None, "avg_pool2d": None, "avg_pool3d": None,
    "global_avg_pool2d": None, "global_avg_pool3d": None,
    "batch_norm": None, "dropout": None, "dense": "units", "flatten": None, "bcpnn": None,
    "relu": None, "leaky_relu": None, "elu": None, "tanh": None, "scale": None, "gelu": None, "sigmoid": None,
    "add": "inputs", "concat": "inputs",
}


class ModelBuilder:
    """A model section built layer by layer. ``channels`` and ``size`` ([D, H, W], [H, W] or
    None for feature vectors) describe one input sample; ``model_keys`` are other keys of the
    section ("init", "backend", "distribution", ...)."""

    def __init__(self, channels, size=None, **model_keys):
        self._model = {"input": {"channels": channels}, **model_keys}
        if size is not None:
            self._model["input"]["size"] = list(size)
        self._layers = []

    def layer(self, type, name=None, inputs=None, **keys):
        """Adds a layer of `type` with `keys`; returns the builder, so that calls chain."""
        entry = {"type": type}
        if name is not None:
            entry["name"] = name
        if inputs is not None:
            entry["inputs"] = inputs
        entry.update(keys)
        self._layers.append(entry)
        return self

    @property
    def last(self):
        """The name of the last layer added (its given name, or the default ``<type><index>``)."""
        if not self._layers:
            return "input"
        entry = self._layers[-1]
        return entry.get("name", f"{entry['type']}{len(self._layers) - 1}")

    def model(self):
        """The "model" section: a new dict."""
        return dict(copy.deepcopy(self._model), layers=copy.deepcopy(self._layers))

    def config(self, loss, optimizer, training=None, **sections):
        """A whole run config: this model with the given sections."""
        config = {"model": self.model(), "loss": loss, "optimizer": optimizer, **sections}
        if training is not None:
            config["training"] = training
        return config


def _method(type_name, first_key):
    def add(self, *args, **keys):
        if len(args) > 1 or (args and first_key is None):
            raise TypeError(f"{type_name}() takes keyword arguments"
                            + (f" after its {first_key}" if first_key else ""))
        if args:
            keys[first_key] = args[0]
        return self.layer(type_name, **keys)
    add.__name__ = type_name
    add.__doc__ = (f"Adds a {type_name} layer" + (f" ({first_key} first)" if first_key else "")
                   + "; keys as docs/config.md lists them.")
    return add


for _name, _first in _TYPES.items():
    setattr(ModelBuilder, _name, _method(_name, _first))
