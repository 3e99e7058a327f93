"""Tessera models in PyTorch and back.

``export(model)`` builds a ``torch.nn.Module`` with the layers of the model's config and the
model's weights: a model trained in Tessera then runs in PyTorch with the same outputs.
``import_state_dict(source, config)`` turns a PyTorch state dict (of such a module, or of any
module whose parameters have the same names and shapes) into Tessera's, for
``Model.load_state_dict`` or ``tessera.train(..., init=...)``; ``import_model`` makes the
Model at once.

Conventions of the exported module (PyTorch's own): inputs and outputs are channels-first,
[N, C, D, H, W] (or [N, C, H, W], or [N, F]) where Tessera's are channels-last. Weights are
permuted accordingly: a convolution's [O, kD, kH, kW, I] becomes [O, I, kD, kH, kW], a
transposed convolution's [I, kD, kH, kW, O] becomes [I, O, kD, kH, kW]. A ``flatten`` flattens
in Tessera's channels-last order (it moves the channels last first), so the weights of a
``dense`` after it need no change. Batch norm's statistics and momentum are PyTorch's already
(docs/config.md). Parameter names are kept: ``conv1.weight`` is ``conv1.weight`` in both; the
exported batch norms add PyTorch's ``num_batches_tracked``. ``bcpnn`` layers have no PyTorch
counterpart and are refused.
"""


import numpy
import torch
from torch import nn

from . import Model, _config_dict
from .errors import ConfigError


def _per_axis(value, rank, default, where):
    if value is None:
        value = default
    if isinstance(value, int):
        return (value,) * rank
    if isinstance(value, list) and len(value) == rank and all(isinstance(v, int) for v in value):
        return tuple(value)
    raise ConfigError(f"{where}: expected an integer or a list of {rank}, got {value!r}")


class _Scale(nn.Module):
    def __init__(self, factor):
        super().__init__()
        self.factor = factor

    def forward(self, x):
        return x * self.factor


class _GlobalAvgPool(nn.Module):
    def forward(self, x):
        return x.mean(dim=tuple(range(2, x.dim())))


class _ChannelsLastFlatten(nn.Module):
    """Tessera's flatten: [N, C, *space] flattened as [N, *space, C] is."""

    def forward(self, x):
        return x.movedim(1, -1).flatten(1) if x.dim() > 2 else x


class _Sum(nn.Module):
    def forward(self, *xs):
        out = xs[0]
        for x in xs[1:]:
            out = out + x
        return out


class _Concat(nn.Module):
    def forward(self, *xs):
        return torch.cat(xs, dim=1)


class TesseraGraph(nn.Module):
    """A Tessera model spec as a PyTorch module: one submodule per layer, named as the layer,
    run in the spec's order with each layer reading the outputs its "inputs" name."""

    def __init__(self, layers, inputs):
        super().__init__()
        self._order = []
        for name, module in layers:
            try:
                self.add_module(name, module)
            except KeyError as e:
                raise ConfigError(f"layer {name!r}: cannot be a PyTorch submodule name ({e})") from None
            self._order.append(name)
        self._inputs = inputs
        # The last read of each output, so that intermediate results are dropped early.
        self._last_use = {}
        for i, name in enumerate(self._order):
            for source in inputs[name]:
                self._last_use[source] = i

    def forward(self, x):
        outputs = {"input": x}
        for i, name in enumerate(self._order):
            args = [outputs[source] for source in self._inputs[name]]
            outputs[name] = getattr(self, name)(*args)
            for source in self._inputs[name]:
                if self._last_use.get(source) == i and source != self._order[-1]:
                    outputs.pop(source, None)
        return outputs[self._order[-1]]


def _layer_list(config):
    model = config.get("model")
    if not isinstance(model, dict) or not isinstance(model.get("layers"), list) or not model["layers"]:
        raise ConfigError("$.model.layers: the config has no layers")
    size = model.get("input", {}).get("size")
    input_rank = len(size) if isinstance(size, list) else 0
    layers, inputs, ranks = [], {}, {"input": input_rank}
    previous = "input"
    for index, layer in enumerate(model["layers"]):
        kind = layer.get("type")
        name = layer.get("name", f"{kind}{index}")
        sources = layer.get("inputs", [previous])
        if isinstance(sources, str):
            sources = [sources]
        inputs[name] = sources
        rank = ranks[sources[0]]
        if kind in ("conv2d", "conv3d", "conv_transpose2d", "conv_transpose3d", "max_pool2d", "max_pool3d",
                    "avg_pool2d", "avg_pool3d"):
            rank = int(kind[-2])
        elif kind in ("global_avg_pool2d", "global_avg_pool3d", "flatten", "dense"):
            rank = 0
        ranks[name] = rank
        layers.append((name, kind, layer, rank, f"$.model.layers[{index}]"))
        previous = name
    return layers, inputs


def _module(kind, spec, rank, weights, name, where):
    def shape(param):
        key = f"{name}.{param}"
        if key not in weights:
            raise ConfigError(where, f"the state dict has no {key}")
        return weights[key].shape

    if kind in ("conv2d", "conv3d"):
        w = shape("weight")
        conv = nn.Conv3d if rank == 3 else nn.Conv2d
        return conv(w[-1], w[0], _per_axis(spec.get("kernel"), rank, 3, where + ".kernel"),
                    stride=_per_axis(spec.get("stride"), rank, 1, where + ".stride"),
                    padding=_per_axis(spec.get("padding"), rank, 0, where + ".padding"),
                    dilation=_per_axis(spec.get("dilation"), rank, 1, where + ".dilation"),
                    bias=spec.get("bias", True))
    if kind in ("conv_transpose2d", "conv_transpose3d"):
        w = shape("weight")
        conv = nn.ConvTranspose3d if rank == 3 else nn.ConvTranspose2d
        return conv(w[0], w[-1], _per_axis(spec.get("kernel"), rank, 2, where + ".kernel"),
                    stride=_per_axis(spec.get("stride"), rank, 2, where + ".stride"),
                    padding=_per_axis(spec.get("padding"), rank, 0, where + ".padding"),
                    output_padding=_per_axis(spec.get("output_padding"), rank, 0, where + ".output_padding"),
                    bias=spec.get("bias", True))
    if kind in ("max_pool2d", "max_pool3d", "avg_pool2d", "avg_pool3d"):
        kernel = _per_axis(spec.get("kernel"), rank, 2, where + ".kernel")
        stride = _per_axis(spec.get("stride"), rank, 0, where + ".stride") if "stride" in spec else kernel
        padding = _per_axis(spec.get("padding"), rank, 0, where + ".padding")
        if kind.startswith("max"):
            return (nn.MaxPool3d if rank == 3 else nn.MaxPool2d)(kernel, stride, padding)
        return (nn.AvgPool3d if rank == 3 else nn.AvgPool2d)(kernel, stride, padding, count_include_pad=False)
    if kind in ("global_avg_pool2d", "global_avg_pool3d"):
        return _GlobalAvgPool()
    if kind == "batch_norm":
        channels = shape("gamma")[0]
        norm = {0: nn.BatchNorm1d, 1: nn.BatchNorm1d, 2: nn.BatchNorm2d, 3: nn.BatchNorm3d}[rank]
        return norm(channels, eps=spec.get("epsilon", 1e-5), momentum=spec.get("momentum", 0.1))
    if kind == "relu":
        return nn.ReLU()
    if kind == "leaky_relu":
        return nn.LeakyReLU(spec.get("alpha", 0.01))
    if kind == "elu":
        return nn.ELU(spec.get("alpha", 1.0))
    if kind == "tanh":
        return nn.Tanh()
    if kind == "sigmoid":
        return nn.Sigmoid()
    if kind == "gelu":
        return nn.GELU()
    if kind == "scale":
        return _Scale(spec.get("factor", 1.0))
    if kind == "dropout":
        return nn.Dropout(spec.get("rate", 0.5))
    if kind == "dense":
        w = shape("weight")
        return nn.Linear(w[1], w[0], bias=spec.get("bias", True))
    if kind == "flatten":
        return _ChannelsLastFlatten()
    if kind == "add":
        return _Sum()
    if kind == "concat":
        return _Concat()
    raise ConfigError(where + ".type", f"{kind!r} has no PyTorch counterpart to export to")


def _to_torch_layout(kind, param, array):
    """A Tessera parameter of a layer of `kind` in PyTorch's layout."""
    if param == "weight" and kind.startswith("conv"):
        # [O, *k, I] -> [O, I, *k]; the transposed convolution's [I, *k, O] -> [I, O, *k].
        return numpy.moveaxis(array, -1, 1)
    return array


def _to_tessera_layout(kind, param, array):
    if param == "weight" and kind.startswith("conv"):
        return numpy.moveaxis(array, 1, -1)
    return array


_TORCH_NAMES = {"gamma": "weight", "beta": "bias"}  # batch norm's; the others keep theirs
_TESSERA_NAMES = {"weight": "gamma", "bias": "beta"}


def _kinds(config):
    layers, _ = _layer_list(config)
    return {name: kind for name, kind, *_ in layers}


def export_state_dict(model):
    """The parameters and buffers of `model` (a :class:`tessera.Model`) as a PyTorch state
    dict of the module :func:`export` builds: torch tensors in PyTorch's layouts (copies)."""
    kinds = _kinds(model.config)
    state = {}
    for key, value in model.state_dict(copy=True).items():
        layer, _, param = key.rpartition(".")
        kind = kinds.get(layer, "")
        torch_param = _TORCH_NAMES.get(param, param) if kind == "batch_norm" else param
        state[f"{layer}.{torch_param}"] = torch.from_numpy(
            numpy.ascontiguousarray(_to_torch_layout(kind, param, value)))
        if kind == "batch_norm" and param == "running_var":
            state[f"{layer}.num_batches_tracked"] = torch.tensor(0, dtype=torch.long)
    return state


def export(model):
    """`model` (a :class:`tessera.Model`) as a ``torch.nn.Module`` in evaluation mode, with its
    weights: channels-first in and out (see the module's doc)."""
    layers, inputs = _layer_list(model.config)
    weights = model.state_dict()
    modules = [(name, _module(kind, spec, rank, weights, name, where)) for name, kind, spec, rank, where in layers]
    graph = TesseraGraph(modules, inputs)
    graph.load_state_dict(export_state_dict(model), strict=True)
    return graph.eval()


def import_state_dict(source, config):
    """A Tessera state dict (numpy float32 arrays in Tessera's layouts) from `source`: a
    ``torch.nn.Module`` or its state dict, whose parameters are named as the layers of
    `config` (a dict or a JSON file) name them. ``num_batches_tracked`` is dropped."""
    config = _config_dict(config)
    kinds = _kinds(config)
    if isinstance(source, nn.Module):
        source = source.state_dict()
    state = {}
    for key, value in source.items():
        layer, _, param = key.rpartition(".")
        kind = kinds.get(layer)
        if kind is None:
            raise ConfigError("$.model.layers", f"{key}: the config has no layer {layer!r}")
        if param == "num_batches_tracked":
            continue
        tessera_param = _TESSERA_NAMES.get(param, param) if kind == "batch_norm" else param
        array = value.detach().to("cpu", torch.float32).numpy() if isinstance(value, torch.Tensor) else value
        state[f"{layer}.{tessera_param}"] = numpy.ascontiguousarray(
            _to_tessera_layout(kind, param, numpy.asarray(array, dtype=numpy.float32)))
    return state


def import_model(source, config, backend="auto"):
    """A :class:`tessera.Model` of `config` with the weights of `source` (a module or state
    dict, as for :func:`import_state_dict`); every parameter must be given."""
    model = Model(config, backend=backend)
    model.load_state_dict(import_state_dict(source, model.config), strict=True)
    return model


def reset_like_pytorch(module, seed=0):
    """Re-initialises every layer of an exported module as PyTorch initialises a new one
    (``reset_parameters``), from `seed`: a PyTorch-initialised model to import and train."""
    torch.manual_seed(seed)
    for child in module.modules():
        if child is not module and hasattr(child, "reset_parameters"):
            child.reset_parameters()
    return module


__all__ = ["export", "export_state_dict", "import_state_dict", "import_model", "reset_like_pytorch", "TesseraGraph"]
