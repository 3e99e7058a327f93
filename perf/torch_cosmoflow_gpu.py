#!/usr/bin/env python3
"""GPU peer: PyTorch eager training throughput on cosmoflow-small (docs/benchmarks.md)
on one CUDA device, convolutions through cuDNN. The network, optimizer, data and timing are
those of perf/torch_cosmoflow.py, which runs on the CPU only.
Usage: torch_cosmoflow_gpu.py SIZE BATCH STEPS [default|channels_last] [tf32|fp32] [benchmark|heuristic]
  channels_last: model and input in channels_last_3d (NDHWC, Tessera's layout)
  fp32 (default): no TF32 in convolutions or matmuls, the precision Tessera runs without TESSERA_CUDNN_TF32
  heuristic (default): torch.backends.cudnn.benchmark off, PyTorch's default"""
import sys

import torch
from torch import nn

from torch_cosmoflow import conv_forward_flop, cosmoflow_small, median_step_seconds  # one network for both peers

size, batch, steps = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
cl = len(sys.argv) > 4 and sys.argv[4] == 'channels_last'
tf32 = len(sys.argv) > 5 and sys.argv[5] == 'tf32'
bench = len(sys.argv) > 6 and sys.argv[6] == 'benchmark'
if not torch.cuda.is_available():
    sys.exit("torch_cosmoflow_gpu.py: PyTorch sees no CUDA device")
torch.backends.cudnn.enabled = True
torch.backends.cudnn.allow_tf32 = tf32
torch.backends.cuda.matmul.allow_tf32 = tf32
torch.backends.cudnn.benchmark = bench
dev = torch.device('cuda')
torch.manual_seed(0)
model = cosmoflow_small(size).to(dev)
x = torch.randn(batch, 4, size, size, size, device=dev)
y = torch.randn(batch, 4, device=dev)
if cl:
    model = model.to(memory_format=torch.channels_last_3d)
    x = x.contiguous(memory_format=torch.channels_last_3d)
opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)


def step():
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    torch.cuda.synchronize()  # a step ends when the device is done
    return loss.item()


med = median_step_seconds(step, steps)
flops = conv_forward_flop(size)
print(f"torch {torch.__version__} cudnn {torch.backends.cudnn.version()} device={torch.cuda.get_device_name()} "
      f"channels_last={cl} tf32={tf32} cudnn_benchmark={bench} size={size} batch={batch} median_step_s={med:.4f} "
      f"samples_per_s={batch/med:.2f} conv_fwd_gflop_per_sample={flops/1e9:.1f} est_train_gflops={3*flops*batch/med/1e9:.1f}")
