#!/usr/bin/env python3
"""GPU peer: PyTorch eager training throughput on cosmoflow-small (docs/benchmarks.md)
on one CUDA device, convolutions through cuDNN. The network, optimizer, data and timing are
those of perf/torch_cosmoflow.py, which runs on the CPU only.

Usage: torch_cosmoflow_gpu.py SIZE BATCH STEPS [FORMATS] [fp32|tf32|bf16|fp16] [CHOICES]
  FORMATS: comma-separated, of default (NCDHW) and channels_last (channels_last_3d, NDHWC,
           Tessera's layout); default: default,channels_last
  fp32 (default): no TF32 in convolutions or matmuls, the precision Tessera runs without
           a "precision" in its config; tf32: both allowed (Tessera's "precision": "tf32");
           bf16, fp16: the forward pass under CUDA autocast to that type (parameters, their
           gradients, the optimizer and the loss in fp32; fp16 with dynamic loss scaling), the
           step of perf/torch_cosmoflow.py's `training_step`, with TF32 off as for fp32 so that
           only the autocast layers change (Tessera's "precision": "bf16" / "fp16")
  CHOICES: comma-separated, of heuristic (torch.backends.cudnn.benchmark off, PyTorch's
           default) and benchmark (on); default: heuristic,benchmark
One line per variant (with precision=P and tf32=B), in one process (one start-up of PyTorch and
CUDA for all of them), then best_samples_per_s=X for the fastest."""
import sys

import torch

from torch_cosmoflow import conv_forward_flop, median_step_seconds, training_step  # one network and step for both peers

PRECISIONS = ('fp32', 'tf32', 'bf16', 'fp16')


def run_variant(size, batch, steps, channels_last, precision, bench):
    # TF32 only for tf32: under bf16/fp16 autocast the layers autocast leaves in fp32 stay fp32.
    tf32 = precision == 'tf32'
    torch.backends.cudnn.enabled = True
    torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.benchmark = bench
    autocast = precision if precision in ('bf16', 'fp16') else 'fp32'  # tf32 is a math mode, not autocast
    return median_step_seconds(training_step(size, batch, channels_last, torch.device('cuda'), autocast), steps)


def main():
    size, batch, steps = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    formats = (sys.argv[4] if len(sys.argv) > 4 else 'default,channels_last').split(',')
    precision = sys.argv[5] if len(sys.argv) > 5 else 'fp32'
    if precision not in PRECISIONS:
        sys.exit(f"torch_cosmoflow_gpu.py: precision must be one of {', '.join(PRECISIONS)}, not '{precision}'")
    choices = (sys.argv[6] if len(sys.argv) > 6 else 'heuristic,benchmark').split(',')
    if not torch.cuda.is_available():
        sys.exit("torch_cosmoflow_gpu.py: PyTorch sees no CUDA device")
    flops = conv_forward_flop(size)
    best = 0.0
    for fmt in formats:
        for choice in choices:
            med = run_variant(size, batch, steps, fmt == 'channels_last', precision, choice == 'benchmark')
            best = max(best, batch / med)
            print(f"torch {torch.__version__} cudnn {torch.backends.cudnn.version()} "
                  f"device={torch.cuda.get_device_name()} channels_last={fmt == 'channels_last'} "
                  f"precision={precision} tf32={precision == 'tf32'} cudnn_benchmark={choice == 'benchmark'} "
                  f"size={size} batch={batch} median_step_s={med:.4f} "
                  f"samples_per_s={batch / med:.2f} est_train_gflops={3 * flops * batch / med / 1e9:.1f}", flush=True)
            torch.cuda.empty_cache()
    print(f"best_samples_per_s={best:.2f}")


if __name__ == '__main__':
    main()
