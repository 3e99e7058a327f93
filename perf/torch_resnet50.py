#!/usr/bin/env python3
"""The PyTorch peer of perf/resnet50.sh: ResNet-50 trained in PyTorch eager on this machine's
CPU, under the protocol of docs/benchmarks.md.

  torch_resnet50.py SIZE BATCH STEPS [THREADS] [default|channels_last]

The network is that of examples/resnet/resnet50.json, written here in plain torch (no
torchvision): a 7x7/2 stem conv, batch norm, ReLU and 3x3/2 max pool; bottleneck blocks
(1x1, 3x3 carrying the stride, 1x1 to 4x the width, each with batch norm; a 1x1 strided
projection with batch norm on each stage's first skip) in stages of 3, 4, 6 and 3 blocks at
widths 64, 128, 256 and 512; global average pooling; a 1000-way linear layer. Convolutions
have no bias, as in the config. Loss: softmax cross-entropy; SGD with momentum 0.9 and weight
decay 1e-4. Inputs are one fixed batch of normal random numbers with random labels (synthetic:
only training is timed). After two warm-up steps, STEPS steps are timed one by one and the
median step gives samples_per_s. One line is printed:

  torch V channels_last=B threads=T size=S batch=N median_step_s=X samples_per_s=Y
"""
import argparse
import statistics
import time

import torch
from torch import nn

STAGES = ((64, 3), (128, 4), (256, 6), (512, 3))
CLASSES = 1000
WARMUP_STEPS = 2


class Bottleneck(nn.Module):
    def __init__(self, c_in, width, stride):
        super().__init__()
        out = 4 * width
        self.body = nn.Sequential(
            nn.Conv2d(c_in, width, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU(inplace=True),
            nn.Conv2d(width, width, 3, stride=stride, padding=1, bias=False), nn.BatchNorm2d(width),
            nn.ReLU(inplace=True),
            nn.Conv2d(width, out, 1, bias=False), nn.BatchNorm2d(out))
        self.skip = None
        if stride != 1 or c_in != out:
            self.skip = nn.Sequential(nn.Conv2d(c_in, out, 1, stride=stride, bias=False), nn.BatchNorm2d(out))
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        return self.relu(self.body(x) + (x if self.skip is None else self.skip(x)))


def resnet50():
    layers = [nn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False), nn.BatchNorm2d(64), nn.ReLU(inplace=True),
              nn.MaxPool2d(3, stride=2, padding=1)]
    c = 64
    for s, (width, blocks) in enumerate(STAGES):
        for b in range(blocks):
            layers.append(Bottleneck(c, width, 2 if s > 0 and b == 0 else 1))
            c = 4 * width
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(c, CLASSES)]
    return nn.Sequential(*layers)


def median_step_seconds(step, steps):
    for _ in range(WARMUP_STEPS):
        step()
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("size", type=int, help="edge S of the S x S x 3 input (224 for ImageNet)")
    parser.add_argument("batch", type=int)
    parser.add_argument("steps", type=int, help="timed steps after the warm-up")
    parser.add_argument("threads", type=int, nargs="?", help="torch.set_num_threads (default: PyTorch's)")
    parser.add_argument("memory_format", nargs="?", default="default", choices=("default", "channels_last"))
    args = parser.parse_args()
    if args.steps < 1:
        parser.error("STEPS must be at least 1")
    if args.size < 32:
        parser.error("SIZE must be at least 32 (five halvings)")
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    channels_last = args.memory_format == "channels_last"

    torch.manual_seed(0)
    model = resnet50()
    x = torch.randn(args.batch, 3, args.size, args.size)
    y = torch.randint(0, CLASSES, (args.batch,))
    if channels_last:
        model = model.to(memory_format=torch.channels_last)
        x = x.contiguous(memory_format=torch.channels_last)
    # Made after the format change, so the optimizer holds the parameters that are trained.
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)

    def step():
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return loss.item()  # waits for the step, and would expose a diverging run

    median = median_step_seconds(step, args.steps)
    print(f"torch {torch.__version__} channels_last={channels_last} threads={torch.get_num_threads()} "
          f"size={args.size} batch={args.batch} median_step_s={median:.3f} samples_per_s={args.batch / median:.2f}")


if __name__ == "__main__":
    main()
