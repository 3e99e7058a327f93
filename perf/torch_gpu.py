#!/usr/bin/env python3
"""GPU peer: PyTorch eager training throughput on one CUDA device, convolutions through cuDNN,
for perf/cosmoflow_gpu.sh (docs/benchmarks.md). The networks, optimizers, data and timing are
those of the CPU peers: perf/torch_cosmoflow.py (cosmoflow-small), perf/torch_unet3d.py
(unet3d-small) and perf/torch_cosmoflow_mlperf.py (cosmoflow-mlperf, the network of
examples/cosmoflow).

Usage: torch_gpu.py SIZE BATCH STEPS [--model M] [--formats F] [--precision P] [--choices C]
                    [--layers OUT --config RUN.json] [--compile] [--device cuda|cpu]
  --formats: comma-separated, of default (NCDHW) and channels_last (channels_last_3d, NDHWC,
           Tessera's layout); default: default,channels_last
  --precision fp32 (default): no TF32 in convolutions or matmuls, the precision Tessera runs
           without a "precision" in its config; tf32: both allowed (Tessera's "precision":
           "tf32"); bf16, fp16: the forward pass under CUDA autocast to that type (parameters,
           their gradients, the optimizer and the loss in fp32; fp16 with dynamic loss
           scaling), with TF32 off as for fp32 so that only the autocast layers change
  --choices: comma-separated, of heuristic (torch.backends.cudnn.benchmark off, PyTorch's
           default) and benchmark (on); default: heuristic,benchmark
  --layers OUT: then the fastest variant again, every layer's forward and backward timed
           (perf/torch_layer_times.py), named as RUN.json (the config Tessera trains) names its
           layers; written to OUT as JSON
  --compile: then the fastest variant again with its forward pass through torch.compile (the
           strongest thing a PyTorch user would pick), compiled during the warm-up steps;
           compiled_samples_per_s=X, or a line saying why it did not run
  --device cpu: the same on this machine's CPU (fp32 and bf16), to check the script without a GPU;
           PyTorch then runs on every core this process may use, as Tessera's threads do (its
           own default may be fewer: 1 on a 2-core VM)
One line per variant (with precision=P and tf32=B), in one process (one start-up of PyTorch and
CUDA for all of them), then best_samples_per_s=X for the fastest."""
import argparse
import json
import os

import torch

import torch_cosmoflow
import torch_cosmoflow_mlperf
import torch_unet3d
from torch_cosmoflow import median_step_seconds
from torch_layer_times import tessera_layers, time_layers

PRECISIONS = ('fp32', 'tf32', 'bf16', 'fp16')
MODELS = {'cosmoflow-small': torch_cosmoflow, 'unet3d-small': torch_unet3d, 'cosmoflow-mlperf': torch_cosmoflow_mlperf}


def set_math(precision, bench, cuda):
    # TF32 only for tf32: under bf16/fp16 autocast the layers autocast leaves in fp32 stay fp32.
    if not cuda:
        return
    tf32 = precision == 'tf32'
    torch.backends.cudnn.enabled = True
    torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.benchmark = bench


def make_step(args, channels_last, bench, with_model=False, compiled=False):
    set_math(args.precision, bench, args.device == 'cuda')
    autocast = args.precision if args.precision in ('bf16', 'fp16') else 'fp32'  # tf32 is a math mode
    return MODELS[args.model].training_step(args.size, args.batch, channels_last, torch.device(args.device),
                                            autocast, with_model=with_model, compiled=compiled)


def compiled_rate(args, fmt, choice):
    """samples/s of the variant with its forward pass through torch.compile, or why none."""
    if not hasattr(torch, 'compile'):
        return None, f"torch.compile: not in torch {torch.__version__}"
    try:
        step = make_step(args, fmt == 'channels_last', choice == 'benchmark', compiled=True)
        return args.batch / median_step_seconds(step, args.steps), None
    except Exception as e:  # a model torch.compile cannot handle is a result to report, not a crash
        return None, f"torch.compile failed: {type(e).__name__}: {str(e).splitlines()[0][:200]}"


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('size', type=int)
    p.add_argument('batch', type=int)
    p.add_argument('steps', type=int)
    p.add_argument('--model', default='cosmoflow-small', choices=sorted(MODELS))
    p.add_argument('--formats', default='default,channels_last')
    p.add_argument('--precision', default='fp32', choices=PRECISIONS)
    p.add_argument('--choices', default='heuristic,benchmark')
    p.add_argument('--layers', metavar='OUT')
    p.add_argument('--config', metavar='RUN.json')
    p.add_argument('--compile', action='store_true')
    p.add_argument('--device', default='cuda', choices=('cuda', 'cpu'))
    args = p.parse_args()
    if args.layers and not args.config:
        p.error('--layers needs --config (the Tessera config whose layer names the table uses)')
    if args.device == 'cpu' and args.precision not in ('fp32', 'bf16'):
        p.error('--device cpu runs fp32 or bf16')
    for name, value, allowed in (('--formats', args.formats, ('default', 'channels_last')),
                                 ('--choices', args.choices, ('heuristic', 'benchmark'))):
        bad = [v for v in value.split(',') if v not in allowed]
        if bad:
            p.error(f"{name}: '{bad[0]}' is not one of {', '.join(allowed)}")
    return args


def main():
    args = parse_args()
    cuda = args.device == 'cuda'
    if cuda and not torch.cuda.is_available():
        raise SystemExit("torch_gpu.py: PyTorch sees no CUDA device")
    if not cuda:
        torch.set_num_threads(len(os.sched_getaffinity(0)))
    flops = MODELS[args.model].conv_forward_flop(args.size)
    best, best_variant = 0.0, None
    for fmt in args.formats.split(','):
        for choice in args.choices.split(','):
            med = median_step_seconds(make_step(args, fmt == 'channels_last', choice == 'benchmark'), args.steps)
            if args.batch / med > best:
                best, best_variant = args.batch / med, (fmt, choice)
            device = torch.cuda.get_device_name() if cuda else 'cpu'
            cudnn = torch.backends.cudnn.version() if cuda else None
            print(f"torch {torch.__version__} cudnn {cudnn} model={args.model} device={device} "
                  f"channels_last={fmt == 'channels_last'} precision={args.precision} tf32={args.precision == 'tf32'} "
                  f"cudnn_benchmark={choice == 'benchmark'} size={args.size} batch={args.batch} "
                  f"median_step_s={med:.4f} "
                  f"samples_per_s={args.batch / med:.2f} est_train_gflops={3 * flops * args.batch / med / 1e9:.1f}",
                  flush=True)
            if cuda:
                torch.cuda.empty_cache()
    print(f"best_samples_per_s={best:.2f}")
    if args.compile:
        rate, why = compiled_rate(args, *best_variant)
        print(f"compiled_samples_per_s={rate:.2f} ({best_variant[0]}, {best_variant[1]})" if rate else why,
              flush=True)
    if args.layers:
        fmt, choice = best_variant
        step, model = make_step(args, fmt == 'channels_last', choice == 'benchmark', with_model=True)
        result = time_layers(model, step, args.device, args.steps, tessera_layers(json.load(open(args.config))))
        result.update(model=args.model, precision=args.precision, channels_last=fmt == 'channels_last',
                      cudnn_benchmark=choice == 'benchmark', batch=args.batch, size=args.size,
                      device=torch.cuda.get_device_name() if cuda else 'cpu', torch=torch.__version__)
        json.dump(result, open(args.layers, 'w'), indent=1)
        print(f"layers: {len(result['layers'])} timed ({fmt}, {choice}), median step with the hooks "
              f"{result['step_seconds'] * 1e3:.2f} ms -> {args.layers}")


if __name__ == '__main__':
    main()
