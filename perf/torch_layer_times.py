"""Where a PyTorch training step goes, layer by layer: the forward and backward time of every
call of a leaf module, named as the Tessera config names its layers, so that one table can
set them beside `tessera train --profile` (perf/layer_table.py).

Forward: from the module's forward pre-hook to its forward hook. Backward: the run of the
autograd node that made the module's output (the node of its last operation, which for every
leaf module of these networks is its only one: ConvolutionBackward, LeakyReluBackward,
MaxPool3DWithIndicesBackward, ...), from the output tensor's gradient hook (which the engine
runs as that node's pre-hook, when the node runs, not when its gradient is complete) to the
node's own hook; so a tensor used by two layers (a U-Net skip) does not stretch either layer's
time. On a GPU each mark is a CUDA event recorded in the
stream's order and the step ends with a synchronisation (no extra waits inside the step); on
the CPU a mark is the clock. What no layer holds (the loss, the optimizer, autocast's gradient
casts, torch.cat, loss scaling) is the step's rest.

In-place activations are made out-of-place while timed: a module hook sees the tensor an
in-place ReLU then overwrites. That costs one allocation a layer, which PyTorch's caching
allocator serves from its pool after the first step.
"""
import statistics
import time

import torch
from torch import nn

# The Tessera layer type each leaf module is; a leaf of another class stops the timing with
# its name (a table that silently dropped a layer would hide where the time went).
TESSERA_TYPE = {
    nn.Conv3d: "conv3d", nn.ConvTranspose3d: "conv_transpose3d", nn.Linear: "dense",
    nn.BatchNorm3d: "batch_norm", nn.ReLU: "relu", nn.LeakyReLU: "leaky_relu", nn.MaxPool3d: "max_pool3d",
    nn.Flatten: "flatten", nn.Dropout: "dropout", nn.Tanh: "tanh",
}
# Tessera layers that are a function call in PyTorch, not a module: their time is the rest's.
NO_MODULE = {"concat"}


def tessera_type(module):
    for cls, name in TESSERA_TYPE.items():
        if type(module) is cls:
            return name
    return getattr(module, "tessera_type", None)


class LayerTimer:
    """Hooks on MODEL's leaf modules that mark each call's forward and backward. `begin()` before
    a step, `end()` after it (the step synchronises) returns [(module, type, forward_s,
    backward_s)] in call order; backward_s is None for a call whose output needs no gradient."""

    def __init__(self, model, device):
        self.cuda = torch.device(device).type == "cuda"
        self.calls = []
        for name, module in model.named_modules():
            if list(module.children()):
                continue
            if tessera_type(module) is None:
                raise SystemExit(f"torch_layer_times.py: no Tessera layer type for module '{name}' "
                                 f"({type(module).__name__})")
            if getattr(module, "inplace", False):
                module.inplace = False
            module.register_forward_pre_hook(self._forward_start(name, module))
            module.register_forward_hook(self._forward_end)

    def _mark(self):
        if self.cuda:
            event = torch.cuda.Event(enable_timing=True)
            event.record()
            return event
        return time.perf_counter()

    def _seconds(self, start, end):
        if self.cuda:
            return start.elapsed_time(end) / 1e3
        return end - start

    def _forward_start(self, name, module):
        def hook(_module, _inputs):
            self.calls.append({"module": name, "type": tessera_type(module), "f0": self._mark()})
        return hook

    def _forward_end(self, _module, _inputs, output):
        call = self.calls[-1]
        call["f1"] = self._mark()
        node = output.grad_fn if isinstance(output, torch.Tensor) else None
        if node is not None:
            output.register_hook(lambda grad: call.__setitem__("b0", self._mark()))
            node.register_hook(lambda grad_inputs, grad_outputs: call.__setitem__("b1", self._mark()))

    def begin(self):
        self.calls = []

    def end(self):
        out = []
        for c in self.calls:
            backward = self._seconds(c["b0"], c["b1"]) if "b1" in c else None
            out.append((c["module"], c["type"], self._seconds(c["f0"], c["f1"]), backward))
        return out


def tessera_layers(config):
    """(name, type) of the Tessera config's layers that are modules in PyTorch, in order."""
    return [(layer["name"], layer["type"]) for layer in config["model"]["layers"] if layer["type"] not in NO_MODULE]


def name_calls(calls, layers):
    """Names each module call by the Tessera layer at its position; the types must agree."""
    if len(calls) != len(layers):
        raise SystemExit(f"torch_layer_times.py: PyTorch called {len(calls)} modules in a forward pass, "
                         f"the Tessera config has {len(layers)} layers that are modules")
    for i, ((module, ttype, *_), (name, ltype)) in enumerate(zip(calls, layers)):
        if ttype != ltype:
            raise SystemExit(f"torch_layer_times.py: call {i} is module '{module}' ({ttype}), "
                             f"the config's layer {i} is '{name}' ({ltype})")
    return [name for name, _ in layers]


def time_layers(model, step, device, steps, layers, warmup=2):
    """Runs STEP (one training step of MODEL, synchronised at its end) WARMUP + STEPS times
    with a LayerTimer and returns {"step_seconds": median, "layers": [{"name", "type",
    "module", "forward", "backward"}]} with each layer's median over the timed steps."""
    timer = LayerTimer(model, device)
    per_step, totals = [], []
    for i in range(warmup + steps):
        timer.begin()
        start = time.perf_counter()
        step()
        elapsed = time.perf_counter() - start
        calls = timer.end()
        if i >= warmup:
            per_step.append(calls)
            totals.append(elapsed)
    names = name_calls(per_step[0], layers)
    result = []
    for k, name in enumerate(names):
        module, ttype = per_step[0][k][:2]
        backward = [s[k][3] for s in per_step if s[k][3] is not None]
        result.append({"name": name, "type": ttype, "module": module,
                       "forward": statistics.median(s[k][2] for s in per_step),
                       "backward": statistics.median(backward) if backward else None})
    return {"step_seconds": statistics.median(totals), "layers": result}
