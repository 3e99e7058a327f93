#!/usr/bin/env python3
"""Predicted against measured step time and memory per rank (perf/plan_accuracy.sh).

  plan_accuracy.py TESSERA WORKDIR [--steps N] [--rounds R] [--quick] [--launcher "mpirun ..."]

For cosmoflow-small (batch 4) and unet3d-small (batch 2), each at input sizes 64 and 32:
  * time: one rank (1 thread), and 2 ranks x 1 thread under four layouts: data (sample 2),
    spatial (depth 2 as far as the blocks allow, then samples), hybrid (the first blocks split in depth, the rest over samples) and the
    planner's (`tessera plan --write-config`); each layout trained for 7 warm-up + N steps (a
    spatially split convolution spends its first 7 steps choosing whether to overlap its halo
    exchange, layers::OverlapChoice, and the planner prices what it chose), the median step against `tessera plan --given` run the same way (2 ranks measuring);
  * memory: peak resident memory of the largest rank against the predicted memory per rank,
    at 1 and 2 ranks (the runs above) and at 4 and 8 ranks (oversubscribed, batch 8, data and
    planned layouts, 2 steps; their times are not compared).
The timed part runs in R rounds (default 3): each calibrates, plans, then predicts and measures
every layout of every case once, in an order rotated from round to round, so that a host
that slows down for a while (a machine shared with other tenants) moves one round's figures,
not one layout's; predictions and measurements are the medians over the rounds, with the
measured spread printed. Errors are |predicted - measured| / measured. The planner's regret
per model and size is, per round, its layout's measured time over the fastest layout measured
that round, less 1; its median over the rounds is kept, and planner_regret is the largest.
Last line:
  median_time_error=... max_time_error=... median_memory_error=... planner_regret=...
"""
import argparse
import copy
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
EXAMPLES = {"cosmoflow": "examples/cosmoflow_small.json", "unet3d": "examples/unet3d_small.json"}
BATCH = {"cosmoflow": 4, "unet3d": 2}
# Blocks split in depth under the hybrid layout: cosmoflow's first two, the U-Net's top level.
HYBRID_SPATIAL = {"cosmoflow": ("conv1", "act1", "pool1", "conv2", "act2", "pool2"),
                  "unet3d": ("enc1_", "pool1", "up1", "skip1", "dec1_", "classifier")}


# Steps before timing: one warm-up and OverlapChoice's trial of 6.
WARM_UP = 7


def config(model, size, batch, steps):
    c = json.load(open(os.path.join(ROOT, EXAMPLES[model])))
    c["model"]["input"]["size"] = [size] * 3
    # One stored batch, every step logged, no validation: the steps measure training alone.
    c["data"].update({"size": size, "samples": batch, "validation_samples": 0})
    c["training"].update({"batch_size": batch, "epochs": steps, "log_every": 1})
    c["training"].pop("metrics", None)
    return c


def with_layout(c, model, layout, ranks):
    c = copy.deepcopy(c)
    layers = c["model"]["layers"]
    if layout == "data":
        c["model"]["distribution"] = {"sample": ranks}
    elif layout == "spatial":
        # Split in depth as far as the blocks allow (a layer's output must keep a row per
        # rank), then over samples.
        c["model"]["distribution"] = {"depth": ranks}
        size, spatial = c["model"]["input"]["size"][0], True
        for layer in layers:
            if layer["type"].startswith("max_pool"):
                size //= layer.get("kernel", 2)
            elif layer["type"].startswith("conv_transpose"):
                size *= layer.get("stride", 2)
            spatial = spatial and size >= ranks
            layer["distribution"] = {"depth": ranks} if spatial else {"sample": ranks}
    elif layout == "hybrid":
        c["model"]["distribution"] = {"depth": ranks}
        for layer in layers:
            spatial = any(layer["name"].startswith(p) for p in HYBRID_SPATIAL[model])
            layer["distribution"] = {"depth": ranks} if spatial else {"sample": ranks}
    return c


def layout_of(config_file):
    """Every layer's distribution as the run will use it (its own, else the model's)."""
    model = json.load(open(config_file))["model"]
    default = model.get("distribution", {})
    return [{k: v for k, v in layer.get("distribution", default).items() if v > 1} for layer in model["layers"]]


def run(cmd, env, log):
    with open(log, "w") as out:
        r = subprocess.run(cmd, env=env, stdout=out, stderr=subprocess.STDOUT)
    if r.returncode != 0:
        sys.exit(f"plan_accuracy: `{' '.join(cmd)}` failed (exit {r.returncode}); see {log}")


def mpi(launcher, ranks):
    return launcher + ["-np", str(ranks)]


def rotated(items, r):
    """items with its order rotated by r: each round runs the layouts in another order, so a
    host that slows down during a round does not always hit the same layout."""
    k = r % len(items) if items else 0
    return items[k:] + items[:k]


class Rounds:
    """Predicted and measured step times of every (case, layout), one of each per round."""

    def __init__(self):
        self.pred, self.meas, self.mem = {}, {}, {}
        self.regrets = {}

    def add(self, key, pt, mt, pm, mm):
        self.pred.setdefault(key, []).append(pt)
        self.meas.setdefault(key, []).append(mt)
        self.mem.setdefault(key, []).append((pm, mm))


def spread(values, fmt="{:.3f}"):
    return (fmt + " [" + fmt + "-" + fmt + "]").format(statistics.median(values), min(values), max(values))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tessera")
    ap.add_argument("work")
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--rounds", type=int, default=3,
                    help="calibrate, plan and measure every layout this many times, interleaved; medians are kept")
    ap.add_argument("--quick", action="store_true", help="size 32 only, no 8-rank memory runs")
    ap.add_argument("--launcher", default="mpirun --bind-to none",
                    help="the mpirun command, options included (perf/plan_accuracy.sh --cluster passes one that "
                         "launches on an emulated cluster)")
    a = ap.parse_args()
    env = dict(os.environ, OMP_NUM_THREADS="1", OMP_PROC_BIND="false")
    t = a.tessera
    launcher = a.launcher.split()

    def predict(cfg_file, ranks, profile, measuring):
        out = cfg_file + f".pred{ranks}.json"
        run(mpi(launcher, measuring) + [t, "plan", cfg_file, "--given", "--ranks", str(ranks), "--machine", profile,
                                        "--json", out], env, out + ".log")
        chosen = json.load(open(out))["chosen"]
        return chosen["step_time_s"], chosen["memory_bytes"] / 2**20

    def measure(cfg_file, ranks, batch):
        metrics = cfg_file + f".m{ranks}.jsonl"
        run(mpi(launcher, ranks) + [t, "train", cfg_file, "--metrics", metrics, "--quiet", "--kokkos-threads=1",
                                    "--kokkos-disable-warnings"], env, metrics + ".log")
        events = [json.loads(line) for line in open(metrics)]
        steps = [batch / e["samples_per_s"] for e in events if e["event"] == "train"][WARM_UP:]
        end = next(e for e in events if e["event"] == "end")
        return (statistics.median(steps) if steps else None), end["peak_rss_mb_max_rank"]

    sizes = [32] if a.quick else [64, 32]
    cases = [(model, size) for model in ("cosmoflow", "unet3d") for size in sizes]
    fixed = {}  # (case, layout) -> config file, the same every round
    for model, size in cases:
        name = f"{model}-{size}"
        base = config(model, size, BATCH[model], a.steps + WARM_UP)
        for layout, ranks in (("serial", 1), ("data", 2), ("spatial", 2), ("hybrid", 2)):
            f = os.path.join(a.work, f"{name}-{layout}.json")
            json.dump(with_layout(base, model, "data" if layout == "serial" else layout, ranks), open(f, "w"))
            fixed[(name, layout)] = (f, ranks, BATCH[model])
    rounds = Rounds()
    planned_as = {}
    for r in range(a.rounds):
        machine = os.path.join(a.work, f"machine{r}.json")
        print(f"round {r + 1}/{a.rounds}: calibrating on 2 ranks", flush=True)
        run(mpi(launcher, 2) + [t, "calibrate", "--output", machine], env, f"{a.work}/calibrate{r}.log")
        jobs = list(fixed.items())
        for model, size in cases:
            name = f"{model}-{size}"
            f = os.path.join(a.work, f"{name}-planned{r}.json")
            run(mpi(launcher, 2) + [t, "plan", fixed[(name, "data")][0], "--ranks", "2", "--machine", machine,
                                    "--write-config", f], env, f + ".log")
            jobs.append(((name, "planned"), (f, 2, BATCH[model])))
        measured = {}
        for (name, layout), (f, ranks, batch) in rotated(jobs, r):
            # The planner's layout may be one of the others (it keeps data parallelism unless a
            # split is predicted clearly faster): the same layout is not run twice in a round,
            # or the regret would measure run-to-run noise, not the planner.
            if layout == "planned":
                same = next((o for o in ("data", "spatial", "hybrid")
                             if layout_of(fixed[(name, o)][0]) == layout_of(f)), None)
                if same is not None:
                    planned_as.setdefault(name, []).append(same)
                    continue
                planned_as.setdefault(name, []).append("its own")
            pt, pm = predict(f, ranks, machine, ranks)
            mt, mm = measure(f, ranks, batch)
            measured[(name, layout)] = mt
            rounds.add((name, layout), pt, mt, pm, mm)
        for model, size in cases:
            name = f"{model}-{size}"
            same = planned_as[name][-1]
            mine = measured[(name, "planned" if same == "its own" else same)]
            fastest = min(v for (n, lay), v in measured.items() if n == name and lay != "serial")
            rounds.regrets.setdefault(name, []).append(mine / fastest - 1)
        print(f"round {r + 1}/{a.rounds}: " + ", ".join(f"{n} planned {planned_as[n][-1]}" for n in planned_as),
              flush=True)

    memory_rows = []
    if not a.quick:
        # Memory at 4 and 8 ranks, once: batch 8, data-parallel and spatial layouts.
        machine8 = os.path.join(a.work, "machine8.json")
        run(mpi(launcher, 8) + [t, "calibrate", "--quick", "--output", machine8], env, f"{a.work}/calibrate8.log")
        for model, size in cases:
            name = f"{model}-{size}"
            big = config(model, size, 8, 2)
            for ranks in (4, 8):
                for layout in ("data", "spatial"):
                    f = os.path.join(a.work, f"{name}-{layout}{ranks}.json")
                    json.dump(with_layout(big, model, layout, ranks), open(f, "w"))
                    _, pm = predict(f, ranks, machine8, 1)
                    _, mm = measure(f, ranks, 8)
                    memory_rows.append((name, layout, ranks, pm, mm))

    time_errors, memory_errors = [], []
    print(f"{a.rounds} round(s); times are medians over the rounds, [min-max] of the measured")
    print(f"{'case':14s} {'layout':8s} {'ranks':>5s} {'pred s':>8s} {'measured s':>24s} {'err':>6s} "
          f"{'pred MiB':>9s} {'meas MiB':>9s} {'err':>6s}")
    for (name, layout), preds in rounds.pred.items():
        ranks = 1 if layout == "serial" else 2
        pt, mt = statistics.median(preds), statistics.median(rounds.meas[(name, layout)])
        pm = statistics.median(p for p, _ in rounds.mem[(name, layout)])
        mm = statistics.median(m for _, m in rounds.mem[(name, layout)])
        te, me = abs(pt - mt) / mt, abs(pm - mm) / mm
        time_errors.append(te)
        memory_errors.append(me)
        print(f"{name:14s} {layout:8s} {ranks:5d} {pt:8.3f} {spread(rounds.meas[(name, layout)]):>24s} {te:6.3f} "
              f"{pm:9.0f} {mm:9.0f} {me:6.3f}")
    for name, layout, ranks, pm, mm in memory_rows:
        me = abs(pm - mm) / mm
        memory_errors.append(me)
        print(f"{name:14s} {layout:8s} {ranks:5d} {'-':>8s} {'-':>24s} {'-':>6s} {pm:9.0f} {mm:9.0f} {me:6.3f}")
    for name, regrets in rounds.regrets.items():
        print(f"planner regret {name}: {spread(regrets)} (planned: {', '.join(planned_as[name])})")
    regret = max(statistics.median(v) for v in rounds.regrets.values())
    print(f"median_time_error={statistics.median(time_errors):.3f} max_time_error={max(time_errors):.3f} "
          f"median_memory_error={statistics.median(memory_errors):.3f} planner_regret={regret:.3f}")


if __name__ == "__main__":
    main()
