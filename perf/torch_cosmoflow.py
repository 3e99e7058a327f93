#!/usr/bin/env python3
"""The PyTorch peer of perf/cosmoflow_cpu.sh: cosmoflow-small trained in PyTorch eager on this
machine's CPU, under the protocol of docs/benchmarks.md.

  torch_cosmoflow.py SIZE BATCH STEPS [THREADS] [default|channels_last] [fp32|bf16]

The network, loss and optimizer are those of examples/cosmoflow_small.json. Inputs and targets
are one fixed batch of normal random numbers, so only training is timed. THREADS sets
torch.set_num_threads (otherwise PyTorch's default); channels_last puts the model and its input
in channels_last_3d (NDHWC, Tessera's layout). bf16 runs the forward pass under CPU autocast
(torch.autocast("cpu", dtype=torch.bfloat16): convolutions and dense layers in bf16, the
parameters, their gradients and the optimizer in fp32; the loss in fp32); fp32 (the default)
without it. After two warm-up steps, STEPS steps are timed one by one and the median step gives
samples_per_s. One line is printed:

  torch V channels_last=B precision=P threads=T size=S batch=N median_step_s=X samples_per_s=Y
  conv_fwd_gflop_per_sample=F est_train_gflops=G

est_train_gflops counts three times the forward conv work (forward, backward-data,
backward-weights) per step: an estimate, not the exact conv-bound count of docs/benchmarks.md.
"""
import argparse
import contextlib
import statistics
import time

import torch
from torch import nn

CHANNELS = (4, 32, 64, 128, 256, 256)  # input, then each conv block's output
DENSE = (128, 64, 4)
WARMUP_STEPS = 2


def cosmoflow_small(size):
    """Five conv(k3, pad 1) + LeakyReLU + max-pool(2) blocks, then three dense layers."""
    if size < 32:
        raise SystemExit(f"torch_cosmoflow.py: SIZE must be at least 32 (five 2x poolings), not {size}")
    layers = []
    for c_in, c_out in zip(CHANNELS, CHANNELS[1:]):
        layers += [nn.Conv3d(c_in, c_out, kernel_size=3, padding=1), nn.LeakyReLU(0.01), nn.MaxPool3d(2)]
    features = CHANNELS[-1] * (size // 32) ** 3  # each pooling floors, as five halvings do
    layers.append(nn.Flatten())
    for i, units in enumerate(DENSE):
        layers.append(nn.Linear(features, units))
        if i + 1 < len(DENSE):
            layers.append(nn.LeakyReLU(0.01))
        features = units
    return nn.Sequential(*layers)


def conv_forward_flop(size, channels=CHANNELS):
    """Multiply-adds x 2 of the five convolutions' forward pass for one sample (CHANNELS: the
    input's, then each block's output)."""
    flop, side = 0, size
    for c_in, c_out in zip(channels, channels[1:]):
        flop += 2 * 27 * c_in * c_out * side**3
        side //= 2
    return flop


def autocast(device, precision):
    """The forward pass's context: autocast to bf16 or fp16 on DEVICE for precision bf16 or fp16,
    nothing for fp32 (the step is then exactly the fp32 step). fp16 is for a GPU only: CPU
    autocast to fp16 is not what any benchmark compares (the CPU peers compare bf16)."""
    device_type = torch.device(device).type
    if precision == "fp32":
        return contextlib.nullcontext()
    if precision not in ("bf16", "fp16"):
        raise ValueError(f"precision must be fp32, bf16 or fp16, not {precision}")
    if precision == "fp16" and device_type == "cpu":
        raise ValueError("precision fp16 runs on a GPU only (CUDA autocast with loss scaling); use bf16 on the CPU")
    return torch.autocast(device_type, dtype=torch.bfloat16 if precision == "bf16" else torch.float16)


def training_step(size, batch, channels_last, device="cpu", precision="fp32", with_model=False, compiled=False):
    """One SGD step of cosmoflow-small on a fixed random batch, as a function returning the
    loss (and the model, WITH_MODEL, for perf/torch_layer_times.py); the model and input in
    channels_last_3d if asked, the forward pass under autocast for precision bf16 or fp16 (fp16
    on a GPU only, with dynamic loss scaling; see `optimizer_step`), through torch.compile if
    COMPILED. On a GPU the step ends when the device is done."""
    torch.manual_seed(0)
    return regression_step(cosmoflow_small(size), size, batch, channels_last, device, precision, with_model, compiled)


def regression_step(model, size, batch, channels_last, device, precision, with_model, compiled):
    """`training_step` for MODEL, a CosmoFlow network (4 x SIZE^3 in, 4 parameters out): the
    MLPerf network's peer shares it."""
    model = model.to(device)
    x = torch.randn(batch, CHANNELS[0], size, size, size, device=device)
    y = torch.randn(batch, DENSE[-1], device=device)
    if channels_last:
        model = model.to(memory_format=torch.channels_last_3d)
        x = x.contiguous(memory_format=torch.channels_last_3d)
    # Made after the format change, so the optimizer holds the parameters that are trained.
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    step = optimizer_step(model, x, lambda out: nn.functional.mse_loss(out, y), optimizer, device, precision,
                          compiled)
    return (step, model) if with_model else step


def optimizer_step(model, x, loss_of, optimizer, device, precision, compiled=False):
    """One optimizer step on input X as a function returning the loss: the forward pass under
    `autocast` for PRECISION, LOSS_OF applied to the output in fp32. fp16 adds PyTorch's standard
    dynamic loss scaling (torch.amp.GradScaler), as fp16 training needs it and Tessera's fp16 runs
    it too; fp32 and bf16 (fp32's exponent range) step unscaled. On a GPU the step ends when the
    device is done."""
    autocast(device, precision)  # a wrong precision (or fp16 on the CPU) fails here, before any step
    # COMPILED: the forward pass through torch.compile (compiled at the first step, a warm-up).
    forward = torch.compile(model) if compiled else model
    # One scaler for all steps: its scale adapts from step to step, as in a training run.
    scaler = torch.amp.GradScaler(torch.device(device).type) if precision == "fp16" else None

    def step():
        optimizer.zero_grad()
        with autocast(device, precision):
            out = forward(x)
        loss = loss_of(out.float())
        if scaler is None:
            loss.backward()
            optimizer.step()
        else:
            scaler.scale(loss).backward()
            scaler.step(optimizer)  # unscales the gradients; skips the update if they overflowed
            scaler.update()
        if x.is_cuda:
            torch.cuda.synchronize()
        return loss.item()  # waits for the step, and would expose a diverging run

    return step


def median_step_seconds(step, steps):
    for _ in range(WARMUP_STEPS):
        step()
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def peer_main(doc, size_help, training_step, conv_forward_flop, check_size=lambda size: None):
    """The command line shared by the CPU peers: SIZE BATCH STEPS [THREADS] [FORMAT]
    [PRECISION]; times `training_step` and prints the one result line."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("size", type=int, help=size_help)
    parser.add_argument("batch", type=int)
    parser.add_argument("steps", type=int, help="timed steps after the warm-up")
    parser.add_argument("threads", type=int, nargs="?", help="torch.set_num_threads (default: PyTorch's)")
    parser.add_argument("memory_format", nargs="?", default="default", choices=("default", "channels_last"))
    parser.add_argument("precision", nargs="?", default="fp32", choices=("fp32", "bf16"),
                        help="bf16: the forward pass under CPU autocast to bfloat16")
    args = parser.parse_args()
    if args.steps < 1:
        parser.error("STEPS must be at least 1")
    check_size(args.size)
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    channels_last = args.memory_format == "channels_last"

    step = training_step(args.size, args.batch, channels_last, precision=args.precision)
    median = median_step_seconds(step, args.steps)
    flop = conv_forward_flop(args.size)
    print(
        f"torch {torch.__version__} channels_last={channels_last} precision={args.precision} "
        f"threads={torch.get_num_threads()} "
        f"size={args.size} batch={args.batch} median_step_s={median:.3f} samples_per_s={args.batch / median:.2f} "
        f"conv_fwd_gflop_per_sample={flop / 1e9:.1f} est_train_gflops={3 * flop * args.batch / median / 1e9:.1f}"
    )


def main():
    peer_main(__doc__, "edge S of the 4 x S^3 input, at least 32", training_step, conv_forward_flop)


if __name__ == "__main__":
    main()
