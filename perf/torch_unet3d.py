#!/usr/bin/env python3
"""The PyTorch peer of unet3d-small (perf/precision.sh): the 3D U-Net of
examples/unet3d_small.json trained in PyTorch eager on this machine's CPU, under the protocol
of docs/benchmarks.md.

  torch_unet3d.py SIZE BATCH STEPS [THREADS] [default|channels_last] [fp32|bf16]

The network, loss and optimizer are those of examples/unet3d_small.json: three levels of two
Conv3d(k3, pad 1) + BatchNorm + ReLU with 16, 32 and 64 channels, MaxPool3d(2) down,
ConvTranspose3d(k2, s2) up, the encoder's output concatenated after each upsampling (the
upsampled channels first), a 1x1x1 Conv3d to 2 classes, softmax cross-entropy per voxel; Adam
with lr 1e-3. The input is one fixed batch of 1 x SIZE^3 normal random numbers, the labels one
fixed batch of random classes, so only training is timed. THREADS, the memory format and the
precision are those of perf/torch_cosmoflow.py (bf16: the forward pass under CPU autocast to
bfloat16, the loss in fp32). After two warm-up steps, STEPS steps are timed one by one and the
median step gives samples_per_s. One line is printed:

  torch V channels_last=B precision=P threads=T size=S batch=N median_step_s=X samples_per_s=Y
  conv_fwd_gflop_per_sample=F est_train_gflops=G

est_train_gflops counts three times the forward conv work (transposed convolutions included)
per step: an estimate, as perf/torch_cosmoflow.py's.
"""

import torch
from torch import nn

from torch_cosmoflow import optimizer_step, peer_main  # the same step, precision, timing and output

IN_CHANNELS = 1
LEVELS = (16, 32, 64)  # channels of the encoder levels; the last is the bottom
CLASSES = 2


def double_conv(c_in, c_out):
    """Two Conv3d(k3, pad 1) + BatchNorm + ReLU, the block of every level."""
    return nn.Sequential(
        nn.Conv3d(c_in, c_out, kernel_size=3, padding=1), nn.BatchNorm3d(c_out), nn.ReLU(inplace=True),
        nn.Conv3d(c_out, c_out, kernel_size=3, padding=1), nn.BatchNorm3d(c_out), nn.ReLU(inplace=True))


class UNet3dSmall(nn.Module):
    def __init__(self):
        super().__init__()
        c1, c2, c3 = LEVELS
        self.enc1 = double_conv(IN_CHANNELS, c1)
        self.enc2 = double_conv(c1, c2)
        self.bottom = double_conv(c2, c3)
        self.pool = nn.MaxPool3d(2)
        self.up2 = nn.ConvTranspose3d(c3, c2, kernel_size=2, stride=2)
        self.dec2 = double_conv(2 * c2, c2)
        self.up1 = nn.ConvTranspose3d(c2, c1, kernel_size=2, stride=2)
        self.dec1 = double_conv(2 * c1, c1)
        self.classifier = nn.Conv3d(c1, CLASSES, kernel_size=1)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(self.pool(e1))
        b = self.bottom(self.pool(e2))
        d2 = self.dec2(torch.cat([self.up2(b), e2], dim=1))
        d1 = self.dec1(torch.cat([self.up1(d2), e1], dim=1))
        return self.classifier(d1)


def check_size(size):
    if size < 4 or size % 4:
        raise SystemExit(f"torch_unet3d.py: SIZE must be a positive multiple of 4 (two 2x poolings), not {size}")


def conv_forward_flop(size):
    """Multiply-adds x 2 of the forward convolutions and transposed convolutions, one sample."""
    c1, c2, c3 = LEVELS

    def conv(k, c_in, c_out, side):
        return 2 * k**3 * c_in * c_out * side**3

    s1, s2, s3 = size, size // 2, size // 4
    flop = conv(3, IN_CHANNELS, c1, s1) + conv(3, c1, c1, s1)  # enc1
    flop += conv(3, c1, c2, s2) + conv(3, c2, c2, s2)  # enc2
    flop += conv(3, c2, c3, s3) + conv(3, c3, c3, s3)  # bottom
    flop += conv(2, c3, c2, s3)  # up2: every input voxel times the 2x2x2 kernel
    flop += conv(3, 2 * c2, c2, s2) + conv(3, c2, c2, s2)  # dec2
    flop += conv(2, c2, c1, s2)  # up1
    flop += conv(3, 2 * c1, c1, s1) + conv(3, c1, c1, s1)  # dec1
    return flop + conv(1, c1, CLASSES, s1)  # classifier


def training_step(size, batch, channels_last, device="cpu", precision="fp32", with_model=False, compiled=False):
    """One Adam step of unet3d-small on a fixed random batch, as a function returning the loss
    (and the model, WITH_MODEL); the model and input in channels_last_3d if asked, the forward
    pass under autocast for precision bf16 or fp16 (fp16 on a GPU only)."""
    check_size(size)
    torch.manual_seed(0)
    model = UNet3dSmall().to(device)
    x = torch.randn(batch, IN_CHANNELS, size, size, size, device=device)
    labels = torch.randint(0, CLASSES, (batch, size, size, size), device=device)
    if channels_last:
        model = model.to(memory_format=torch.channels_last_3d)
        x = x.contiguous(memory_format=torch.channels_last_3d)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    step = optimizer_step(model, x, lambda logits: nn.functional.cross_entropy(logits, labels), optimizer, device,
                          precision, compiled)
    return (step, model) if with_model else step


def main():
    peer_main(__doc__, "edge S of the 1 x S^3 input, a multiple of 4", training_step, conv_forward_flop, check_size)


if __name__ == "__main__":
    main()
