#!/usr/bin/env python3
"""The batch-size study of perf/large_batch.sh: ResNet-8 on Fashion-MNIST at global batches
from 64 up, with momentum SGD (linear learning-rate scaling), SGD combined by Adasum over 2
ranks, LARS and LAMB (square-root scaling), each for the same number of epochs; large batches
by gradient accumulation. Prints one line per run, a Markdown table, writes an SVG plot of
test accuracy against batch, and ends with the line

  largest_batch=B sgd64_accuracy=A best_adaptive_accuracy=A best_adaptive=lars|lamb
  sgd_large_accuracy=A adasum_large_accuracy=A gap_points=G

(accuracies in %, gap_points = sgd64 - best adaptive at the largest batch).

Every setting is written out in make_config(); the adaptive methods' base rate is picked from
--lars-lrs / --lamb-lrs at the largest batch (the best final test accuracy) and carried to the
smaller batches by the square-root rule, which is the study's one tuning step."""
import argparse
import json
import math
import os
import re
import subprocess
import sys
import time

EXAMPLE = "examples/resnet/resnet8_fashion_mnist.json"
SGD_LR_64 = 0.05        # the example's 0.1 at batch 128, linearly to batch 64
WEIGHT_DECAY_SGD = 5e-4  # the example's
WARMUP_FRACTION = 0.1    # of each run's steps, at least one step


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tessera", required=True, help="the tessera command")
    p.add_argument("--mpirun", default="mpirun", help="MPI launcher for the Adasum runs")
    p.add_argument("--data", default="data/fashion-mnist", help="folder with train.h5 and test.h5")
    p.add_argument("--batches", default="64,512,2048,8192", help="global batches, comma-separated")
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--micro-batch", type=int, default=512, help="largest micro-batch; larger batches accumulate")
    p.add_argument("--lars-lrs", default="2,4,8,16", help="LARS base rates tried at the largest batch")
    p.add_argument("--lamb-lrs", default="0.01,0.02,0.04,0.08,0.16", help="LAMB base rates tried at the largest batch")
    p.add_argument("--methods", default="sgd,adasum,lars,lamb")
    p.add_argument("--work", required=True, help="folder for configs and logs")
    p.add_argument("--svg", default="", help="write the plot here")
    p.add_argument("--threads", type=int, default=2)
    return p.parse_args()


def schedule(steps):
    return {"type": "cosine", "warmup_steps": max(1, round(WARMUP_FRACTION * steps)), "min_lr": 0.0}


def optimizer_section(method, batch, steps, lr):
    """The optimizer of one run; `lr` is the base rate at the reference batch."""
    if method in ("sgd", "adasum"):
        # Adasum returns the mean of parallel gradients and the sum of orthogonal ones, so it
        # takes the rate of one rank's share of the batch (Maleki et al.): reference 2x64.
        reference = 64 if method == "sgd" else 128
        return {"type": "sgd", "lr": SGD_LR_64, "momentum": 0.9, "nesterov": True,
                "weight_decay": WEIGHT_DECAY_SGD, "schedule": schedule(steps),
                "lr_scaling": {"reference_batch": reference, "rule": "linear"}}
    if method == "lars":
        return {"type": "lars", "lr": lr, "momentum": 0.9, "weight_decay": WEIGHT_DECAY_SGD,
                "trust_coefficient": 0.001, "schedule": schedule(steps),
                "lr_scaling": {"reference_batch": LARGEST, "rule": "sqrt"}}
    if method == "lamb":
        return {"type": "lamb", "lr": lr, "weight_decay": 0.01, "schedule": schedule(steps),
                "lr_scaling": {"reference_batch": LARGEST, "rule": "sqrt"}}
    raise ValueError(method)


def make_config(args, method, batch, lr):
    with open(EXAMPLE) as f:
        c = json.load(f)
    micro = min(batch, args.micro_batch)
    if batch % micro:
        sys.exit(f"large_batch.py: batch {batch} is not a multiple of the micro-batch {micro}")
    steps = 60000 // batch * args.epochs
    c["data"]["files"] = os.path.join(args.data, "train.h5")
    c["data"]["validation"]["files"] = os.path.join(args.data, "test.h5")
    c["optimizer"] = optimizer_section(method, batch, steps, lr)
    c["training"].update({"epochs": args.epochs, "batch_size": micro, "accumulate": batch // micro,
                          "log_every": 1000000, "metrics": ["accuracy"]})
    if method == "adasum":
        c["training"]["gradient_combination"] = "adasum"
    return c


def run(args, method, batch, lr):
    name = f"{method}_b{batch}" + (f"_lr{lr:g}" if method in ("lars", "lamb") else "")
    config = os.path.join(args.work, name + ".json")
    log = os.path.join(args.work, name + ".jsonl")
    wanted = make_config(args, method, batch, lr)
    previous = finished_run(config, log, wanted)
    if previous is not None:
        accuracy, seconds = previous
        r = {"method": method, "batch": batch, "lr": lr, "accuracy": accuracy, "diverged": False,
             "seconds": seconds, "steps": 60000 // batch * args.epochs}
        print(f"run method={method} batch={batch} lr={lr:g} steps={r['steps']} test_accuracy={accuracy:.2f} "
              f"seconds={seconds:.0f} (finished earlier in {args.work})", flush=True)
        return r
    with open(config, "w") as f:
        json.dump(wanted, f, indent=1)
    cmd = [args.tessera, "train", config, "--metrics", log, "--no-progress"]
    env = dict(os.environ, OMP_WAIT_POLICY="passive", OMP_PROC_BIND="false")
    if method == "adasum":
        env["OMP_NUM_THREADS"] = str(max(1, args.threads // 2))
        cmd = [args.mpirun, "-np", "2", "--bind-to", "none"] + cmd + ["--kokkos-threads=" + env["OMP_NUM_THREADS"]]
    else:
        env["OMP_NUM_THREADS"] = str(args.threads)
    start = time.time()
    out = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seconds = time.time() - start
    accuracy, diverged = float("nan"), False
    if out.returncode != 0:
        diverged = "training diverged" in out.stdout
        if not diverged:
            sys.stderr.write(out.stdout[-3000:])
            sys.exit(f"large_batch.py: {name} failed (exit {out.returncode})")
    else:
        with open(log) as f:
            records = [json.loads(line) for line in f if line.strip()]
        vals = [r for r in records if r.get("event") == "validation"]
        accuracy = 100.0 * vals[-1]["accuracy"]
    r = {"method": method, "batch": batch, "lr": lr, "accuracy": accuracy, "diverged": diverged,
         "seconds": seconds, "steps": 60000 // batch * args.epochs}
    print(f"run method={method} batch={batch} lr={lr:g} steps={r['steps']} "
          f"test_accuracy={'diverged' if diverged else f'{accuracy:.2f}'} seconds={seconds:.0f}", flush=True)
    return r


def finished_run(config, log, wanted):
    """(accuracy %, seconds) of a run that finished in the work folder with this very config
    (a study resumed with --work), else None."""
    try:
        with open(config) as f:
            if json.load(f) != wanted:
                return None
        with open(log) as f:
            records = [json.loads(line) for line in f if line.strip()]
    except (OSError, ValueError):
        return None
    vals = [r for r in records if r.get("event") == "validation"]
    ends = [r for r in records if r.get("event") == "end"]
    if not vals or not ends:
        return None
    return 100.0 * vals[-1]["accuracy"], ends[-1]["elapsed_s"]


def score(r):
    return -1.0 if r["diverged"] else r["accuracy"]


def svg_plot(results, batches, path):
    """Test accuracy against batch (log axis), one polyline per method."""
    w, h, left, right, top, bottom = 640, 400, 60, 130, 20, 50
    colours = {"sgd": "#1f77b4", "adasum": "#ff7f0e", "lars": "#2ca02c", "lamb": "#d62728"}
    ok = [r["accuracy"] for r in results if not r["diverged"]]
    lo = math.floor(min(ok) / 5) * 5 if ok else 0
    hi = 100 if not ok else min(100, math.ceil(max(ok) / 5) * 5)
    hi = max(hi, lo + 5)
    bx = [math.log2(b) for b in batches]
    x = lambda b: left + (math.log2(b) - bx[0]) / max(bx[-1] - bx[0], 1) * (w - left - right)
    y = lambda a: top + (hi - a) / (hi - lo) * (h - top - bottom)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">',
           f'<rect width="{w}" height="{h}" fill="white"/>']
    for a in range(int(lo), int(hi) + 1, 5):
        out.append(f'<line x1="{left}" x2="{w - right}" y1="{y(a):.1f}" y2="{y(a):.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{left - 6}" y="{y(a) + 4:.1f}" text-anchor="end">{a}</text>')
    for b in batches:
        out.append(f'<text x="{x(b):.1f}" y="{h - bottom + 16}" text-anchor="middle">{b}</text>')
    out.append(f'<text x="{(left + w - right) / 2}" y="{h - 10}" text-anchor="middle">global batch (log scale)</text>')
    out.append(f'<text transform="translate(16,{(top + h - bottom) / 2}) rotate(-90)" text-anchor="middle">'
               'test accuracy (%)</text>')
    out.append(f'<rect x="{left}" y="{top}" width="{w - left - right}" height="{h - top - bottom}" fill="none" stroke="#333"/>')
    for k, method in enumerate(colours):
        pts = sorted((r["batch"], r["accuracy"]) for r in results if r["method"] == method and not r["diverged"])
        if not pts:
            continue
        c = colours[method]
        out.append(f'<polyline fill="none" stroke="{c}" stroke-width="2" points="' +
                   " ".join(f"{x(b):.1f},{y(a):.1f}" for b, a in pts) + '"/>')
        for b, a in pts:
            out.append(f'<circle cx="{x(b):.1f}" cy="{y(a):.1f}" r="3.5" fill="{c}"/>')
        ly = top + 14 + 20 * k
        out.append(f'<line x1="{w - right + 12}" x2="{w - right + 36}" y1="{ly}" y2="{ly}" stroke="{c}" stroke-width="2"/>')
        out.append(f'<text x="{w - right + 42}" y="{ly + 4}">{method}</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    global LARGEST
    args = parse_args()
    batches = sorted(int(b) for b in args.batches.split(","))
    LARGEST = batches[-1]
    methods = args.methods.split(",")
    os.makedirs(args.work, exist_ok=True)
    results = []
    # The adaptive methods' base rate: the best of the grid at the largest batch.
    best_lr = {}
    for method, grid in (("lars", args.lars_lrs), ("lamb", args.lamb_lrs)):
        if method not in methods:
            continue
        tried = [run(args, method, LARGEST, float(lr)) for lr in grid.split(",")]
        best = max(tried, key=score)
        best_lr[method] = best["lr"]
        results.append(best)
        print(f"tuned method={method} lr={best['lr']:g} from {grid} at batch {LARGEST}", flush=True)
    for batch in batches:
        for method in methods:
            if method in best_lr and batch == LARGEST:
                continue
            if method != "sgd" and batch == batches[0]:
                continue  # the smallest batch is SGD's home ground: the reference run only
            results.append(run(args, method, batch, best_lr.get(method, SGD_LR_64)))

    print("\n| batch | steps | " + " | ".join(methods) + " |")
    print("|---|---|" + "---|" * len(methods))
    for batch in batches:
        cells = []
        for method in methods:
            r = [x for x in results if x["method"] == method and x["batch"] == batch]
            cells.append("—" if not r else ("diverged" if r[0]["diverged"] else f"{r[0]['accuracy']:.2f}"))
        print(f"| {batch} | {60000 // batch * args.epochs} | " + " | ".join(cells) + " |")
    if args.svg:
        svg_plot(results, batches, args.svg)
        print(f"plot: {args.svg}")

    def acc(method, batch):
        r = [x for x in results if x["method"] == method and x["batch"] == batch]
        return score(r[0]) if r else float("nan")

    adaptive = [(acc(m, LARGEST), m) for m in ("lars", "lamb") if m in methods]
    best_acc, best_method = max(adaptive) if adaptive else (float("nan"), "none")
    sgd64 = acc("sgd", batches[0])
    print(f"largest_batch={LARGEST} sgd64_accuracy={sgd64:.2f} best_adaptive_accuracy={best_acc:.2f} "
          f"best_adaptive={best_method} sgd_large_accuracy={acc('sgd', LARGEST):.2f} "
          f"adasum_large_accuracy={acc('adasum', LARGEST):.2f} gap_points={sgd64 - best_acc:.2f}")


if __name__ == "__main__":
    main()
