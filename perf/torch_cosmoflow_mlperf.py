#!/usr/bin/env python3
"""The PyTorch peer of the MLPerf HPC CosmoFlow network as examples/cosmoflow/cosmoflow_128.json
defines it, for perf/cosmoflow_gpu.sh --model cosmoflow-mlperf.

Five Conv3d(k3, pad 1) + LeakyReLU(0.3) + MaxPool3d(2) blocks with 32, 64, 128, 256, 512
channels on a 4 x SIZE^3 input; flatten; Linear 128, LeakyReLU(0.3), Dropout(0.5); Linear 64,
LeakyReLU(0.3), Dropout(0.5); Linear 4; tanh; x1.2. MSE; SGD with momentum 0.9, lr 1e-3. The
input and targets are one fixed batch of normal random numbers (Tessera's run reads synthetic
fields from memory), so only training is timed.
"""
import torch
from torch import nn

import torch_cosmoflow
from torch_cosmoflow import regression_step

CHANNELS = (4, 32, 64, 128, 256, 512)
DENSE = (128, 64, 4)
SLOPE = 0.3
OUTPUT_SCALE = 1.2


class Scale(nn.Module):
    """x * factor: Tessera's `scale` layer, a module so that the layer timing sees it."""
    tessera_type = "scale"

    def __init__(self, factor):
        super().__init__()
        self.factor = factor

    def forward(self, x):
        return x * self.factor


def cosmoflow_mlperf(size):
    if size < 32:
        raise SystemExit(f"torch_cosmoflow_mlperf.py: SIZE must be at least 32 (five 2x poolings), not {size}")
    layers = []
    for c_in, c_out in zip(CHANNELS, CHANNELS[1:]):
        layers += [nn.Conv3d(c_in, c_out, kernel_size=3, padding=1), nn.LeakyReLU(SLOPE), nn.MaxPool3d(2)]
    features = CHANNELS[-1] * (size // 32) ** 3
    layers.append(nn.Flatten())
    for i, units in enumerate(DENSE):
        layers.append(nn.Linear(features, units))
        if i + 1 < len(DENSE):
            layers += [nn.LeakyReLU(SLOPE), nn.Dropout(0.5)]
        features = units
    layers += [nn.Tanh(), Scale(OUTPUT_SCALE)]
    return nn.Sequential(*layers)


def conv_forward_flop(size):
    return torch_cosmoflow.conv_forward_flop(size, CHANNELS)


def training_step(size, batch, channels_last, device="cpu", precision="fp32", with_model=False, compiled=False):
    """One SGD step of the network on a fixed random batch, as a function returning the loss
    (and the model, WITH_MODEL); as perf/torch_cosmoflow.py's `training_step`."""
    torch.manual_seed(0)
    return regression_step(cosmoflow_mlperf(size), size, batch, channels_last, device, precision, with_model, compiled)
