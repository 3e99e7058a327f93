#!/usr/bin/env python3
"""GPU peer: PyTorch eager training throughput on cosmoflow-small (docs/benchmarks.md)
on one CUDA device, convolutions through cuDNN. The network, optimizer, data and timing are
those of perf/torch_cosmoflow.py, which runs on the CPU only.

Usage: torch_cosmoflow_gpu.py SIZE BATCH STEPS [FORMATS] [fp32|tf32] [CHOICES]
  FORMATS: comma-separated, of default (NCDHW) and channels_last (channels_last_3d, NDHWC,
           Tessera's layout); default: default,channels_last
  fp32 (default): no TF32 in convolutions or matmuls, the precision Tessera runs without
           Tessera's "precision": "tf32"; tf32: both allowed
  CHOICES: comma-separated, of heuristic (torch.backends.cudnn.benchmark off, PyTorch's
           default) and benchmark (on); default: heuristic,benchmark
One line per variant, in one process (one start-up of PyTorch and CUDA for all of them), then
best_samples_per_s=X for the fastest."""
import sys

import torch

from torch_cosmoflow import conv_forward_flop, median_step_seconds, training_step  # one network and step for both peers


def run_variant(size, batch, steps, channels_last, tf32, bench):
    torch.backends.cudnn.enabled = True
    torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.benchmark = bench
    return median_step_seconds(training_step(size, batch, channels_last, torch.device('cuda')), steps)


def main():
    size, batch, steps = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    formats = (sys.argv[4] if len(sys.argv) > 4 else 'default,channels_last').split(',')
    tf32 = len(sys.argv) > 5 and sys.argv[5] == 'tf32'
    choices = (sys.argv[6] if len(sys.argv) > 6 else 'heuristic,benchmark').split(',')
    if not torch.cuda.is_available():
        sys.exit("torch_cosmoflow_gpu.py: PyTorch sees no CUDA device")
    flops = conv_forward_flop(size)
    best = 0.0
    for fmt in formats:
        for choice in choices:
            med = run_variant(size, batch, steps, fmt == 'channels_last', tf32, choice == 'benchmark')
            best = max(best, batch / med)
            print(f"torch {torch.__version__} cudnn {torch.backends.cudnn.version()} "
                  f"device={torch.cuda.get_device_name()} channels_last={fmt == 'channels_last'} tf32={tf32} "
                  f"cudnn_benchmark={choice == 'benchmark'} size={size} batch={batch} median_step_s={med:.4f} "
                  f"samples_per_s={batch / med:.2f} est_train_gflops={3 * flops * batch / med / 1e9:.1f}", flush=True)
            torch.cuda.empty_cache()
    print(f"best_samples_per_s={best:.2f}")


if __name__ == '__main__':
    main()
