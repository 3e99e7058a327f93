#!/usr/bin/env python3
"""Predicted against measured step time and memory per rank (perf/plan_accuracy.sh).

  plan_accuracy.py TESSERA WORKDIR [--steps N] [--quick]

For cosmoflow-small (batch 4) and unet3d-small (batch 2), each at input sizes 64 and 32:
  * time: one rank (1 thread), and 2 ranks x 1 thread under four layouts: data (sample 2),
    spatial (depth 2 as far as the blocks allow, then samples), hybrid (the first blocks split in depth, the rest over samples) and the
    planner's (`tessera plan --write-config`); each layout trained for 7 warm-up + N steps (a
    spatially split convolution spends its first 7 steps choosing whether to overlap its halo
    exchange, layers::OverlapChoice, and the planner prices what it chose), the median step against `tessera plan --given` run the same way (2 ranks measuring);
  * memory: peak resident memory of the largest rank against the predicted memory per rank,
    at 1 and 2 ranks (the runs above) and at 4 and 8 ranks (oversubscribed, batch 8, data and
    planned layouts, 2 steps; their times are not compared).
Errors are |predicted - measured| / measured. The planner's regret per model and size is its
layout's measured time over the fastest measured layout's, less 1; planner_regret is the
largest. Last line:
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


def mpi(ranks):
    return ["mpirun", "--bind-to", "none", "-np", str(ranks)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tessera")
    ap.add_argument("work")
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--quick", action="store_true", help="size 32 only, no 8-rank memory runs")
    a = ap.parse_args()
    env = dict(os.environ, OMP_NUM_THREADS="1", OMP_PROC_BIND="false")
    t = a.tessera
    machine = os.path.join(a.work, "machine.json")
    machine8 = os.path.join(a.work, "machine8.json")
    print("calibrating: 2 ranks (times), 8 ranks oversubscribed (memory plans only)", flush=True)
    run(mpi(2) + [t, "calibrate", "--output", machine], env, f"{a.work}/calibrate.log")
    if not a.quick:
        run(mpi(8) + [t, "calibrate", "--quick", "--output", machine8], env, f"{a.work}/calibrate8.log")

    def predict(cfg_file, ranks, profile, measuring):
        out = cfg_file + f".pred{ranks}.json"
        run(mpi(measuring) + [t, "plan", cfg_file, "--given", "--ranks", str(ranks), "--machine", profile,
                              "--json", out], env, out + ".log")
        chosen = json.load(open(out))["chosen"]
        return chosen["step_time_s"], chosen["memory_bytes"] / 2**20

    def measure(cfg_file, ranks, batch):
        metrics = cfg_file + f".m{ranks}.jsonl"
        run(mpi(ranks) + [t, "train", cfg_file, "--metrics", metrics, "--quiet", "--kokkos-threads=1",
                          "--kokkos-disable-warnings"], env, metrics + ".log")
        events = [json.loads(line) for line in open(metrics)]
        steps = [batch / e["samples_per_s"] for e in events if e["event"] == "train"][WARM_UP:]
        end = next(e for e in events if e["event"] == "end")
        return (statistics.median(steps) if steps else None), end["peak_rss_mb_max_rank"]

    rows, time_errors, memory_errors, regrets = [], [], [], []
    sizes = [32] if a.quick else [64, 32]
    for model in ("cosmoflow", "unet3d"):
        for size in sizes:
            batch = BATCH[model]
            base = config(model, size, batch, a.steps + WARM_UP)
            name = f"{model}-{size}"
            # One rank: the serial layout.
            f1 = os.path.join(a.work, f"{name}-serial.json")
            json.dump(with_layout(base, model, "data", 1), open(f1, "w"))
            pt, pm = predict(f1, 1, machine, 1)
            mt, mm = measure(f1, 1, batch)
            rows.append((name, "serial", 1, pt, mt, pm, mm))
            # Two ranks: four layouts.
            files = {}
            for layout in ("data", "spatial", "hybrid"):
                files[layout] = os.path.join(a.work, f"{name}-{layout}.json")
                json.dump(with_layout(base, model, layout, 2), open(files[layout], "w"))
            files["planned"] = os.path.join(a.work, f"{name}-planned.json")
            run(mpi(2) + [t, "plan", files["data"], "--ranks", "2", "--machine", machine, "--write-config",
                          files["planned"]], env, files["planned"] + ".log")
            measured, layouts = {}, {}
            for layout, f in files.items():
                layouts[layout] = layout_of(f)
                # The planner's layout may be one of the others (it keeps data parallelism
                # unless a split is predicted clearly faster): the same layout is not run
                # twice, or the regret would measure run-to-run noise, not the planner.
                same = next((o for o in measured if layouts[o] == layouts[layout]), None)
                if same is not None:
                    measured[layout] = measured[same]
                    rows.append((name, f"{layout}={same}", 2, None, None, None, None))
                    continue
                pt, pm = predict(f, 2, machine, 2)
                mt, mm = measure(f, 2, batch)
                measured[layout] = mt
                rows.append((name, layout, 2, pt, mt, pm, mm))
            regrets.append((name, measured["planned"] / min(measured.values()) - 1))
            if a.quick:
                continue
            # Memory at 4 and 8 ranks: batch 8, data-parallel and spatial layouts.
            big = config(model, size, 8, 2)
            for ranks in (4, 8):
                for layout in ("data", "spatial"):
                    f = os.path.join(a.work, f"{name}-{layout}{ranks}.json")
                    json.dump(with_layout(big, model, layout, ranks), open(f, "w"))
                    _, pm = predict(f, ranks, machine8, 1)
                    _, mm = measure(f, ranks, 8)
                    rows.append((name, layout, ranks, None, None, pm, mm))

    print(f"{'case':16s} {'layout':8s} {'ranks':>5s} {'pred s':>8s} {'meas s':>8s} {'err':>6s} "
          f"{'pred MiB':>9s} {'meas MiB':>9s} {'err':>6s}")
    for name, layout, ranks, pt, mt, pm, mm in rows:
        if pm is None:
            print(f"{name:16s} {layout:8s} {ranks:5d}  (the same layout: measured once)")
            continue
        te = abs(pt - mt) / mt if pt is not None and mt else None
        me = abs(pm - mm) / mm
        memory_errors.append(me)
        if te is not None:
            time_errors.append(te)
        fmt = lambda v, f: format(v, f) if v is not None else "-"
        print(f"{name:16s} {layout:8s} {ranks:5d} {fmt(pt, '8.3f')} {fmt(mt, '8.3f')} {fmt(te, '6.3f')} "
              f"{pm:9.0f} {mm:9.0f} {me:6.3f}")
    for name, r in regrets:
        print(f"planner regret {name}: {r:.3f}")
    print(f"median_time_error={statistics.median(time_errors):.3f} max_time_error={max(time_errors):.3f} "
          f"median_memory_error={statistics.median(memory_errors):.3f} "
          f"planner_regret={max(r for _, r in regrets):.3f}")


if __name__ == "__main__":
    main()
