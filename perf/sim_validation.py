#!/usr/bin/env python3
"""tessera-sim against measured steps on the emulated cluster (perf/sim_validation.sh).

  sim_validation.py TESSERA WORKDIR --launcher "..." [--rounds R] [--steps N]

Per round: calibrate the cluster on 2 ranks; write the platform the calibration implies (each
node on a link of the measured point-to-point rate to one switch, the measured latency paid
per message, the within-node figures on the loopback); then for every case and layout, in an
order rotated from round to round, train on the cluster (median step after the warm-up),
predict with `tessera plan --given` on the 2 cluster ranks (the planner's own figure), and
plan again on one rank with --simulate (layer times of one rank's block, every exchange a
message in the schedule). The training run also records its steps (`--trace`), and tessera-sim
replays that trace on the same platform: the simulator's error on the steps as they ran, apart
from what the planner's schedule models. Errors are |x - measured| / measured of the medians
over rounds.
"""
import argparse
import json
import os
import shutil
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plan_accuracy import BATCH, WARM_UP, config, mpi, rotated, run, spread, with_layout  # noqa: E402

LAYOUTS = ("data", "spatial", "hybrid")
CASES = (("cosmoflow", 32), ("unet3d", 32))


def platform_from(profile_path, path, mbit, nodes=2):
    """The emulated cluster as a tessera-sim platform: its links at the rate they are shaped to,
    the per-message latency and the within-node figures `tessera calibrate` measured. (The
    calibration's across-node bandwidth is not the link's: tc's token bucket lets the short
    messages it fits through in bursts above the rate.)"""
    p = json.load(open(profile_path))
    across = p["across_nodes"]["point_to_point"]
    within = p.get("within_node", {}).get("point_to_point", across)
    platform = {
        "format_version": 1, "name": "emulated-cluster",
        "description": f"{nodes} emulated nodes of {p['ranks_per_node']} rank(s), calibrated",
        "ranks_per_node": p["ranks_per_node"],
        "topology": {"kind": "fat_tree", "levels": 1, "down": [nodes], "up": [1], "links": [1]},
        # Each node's veth pair is shaped to the rate in both directions: node link, bridge,
        # node link.
        "link": {"bandwidth": mbit * 1e6 / 8, "latency": 0.0},
        "software_latency": across["alpha_s"],
        "within_node": {"bandwidth": 1.0 / within["beta_s_per_byte"], "latency": within["alpha_s"]},
    }
    json.dump(platform, open(path, "w"), indent=2)
    return platform


def simulator(tessera):
    """tessera-sim of the build `tessera` comes from (sim/ beside it), as `tessera plan --simulate`
    finds it, or on PATH."""
    here = os.path.dirname(os.path.abspath(tessera))
    for candidate in (os.path.join(here, "tessera-sim"), os.path.join(here, "sim", "tessera-sim")):
        if os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which("tessera-sim")
    if not found:
        sys.exit("sim_validation.py: no tessera-sim beside " + tessera + " nor on PATH")
    return found


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tessera")
    ap.add_argument("work")
    ap.add_argument("--launcher", required=True)
    ap.add_argument("--mbit", type=float, required=True, help="the rate the cluster's links are shaped to")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--steps", type=int, default=6)
    a = ap.parse_args()
    env = dict(os.environ, OMP_NUM_THREADS="1", OMP_PROC_BIND="false")
    t, launcher = a.tessera, a.launcher.split()
    os.makedirs(a.work, exist_ok=True)
    files = {}
    for model, size in CASES:
        base = config(model, size, BATCH[model], a.steps + WARM_UP)
        for layout in LAYOUTS:
            f = os.path.join(a.work, f"{model}-{size}-{layout}.json")
            json.dump(with_layout(base, model, layout, 2), open(f, "w"))
            files[(f"{model}-{size}", layout)] = f
    measured, planned, simulated, traced = {}, {}, {}, {}
    for r in range(a.rounds):
        machine = os.path.join(a.work, f"machine{r}.json")
        print(f"round {r + 1}/{a.rounds}: calibrating the cluster on 2 ranks", flush=True)
        run(mpi(launcher, 2) + [t, "calibrate", "--output", machine], env, f"{a.work}/calibrate{r}.log")
        platform = os.path.join(a.work, f"platform{r}.json")
        pl = platform_from(machine, platform, a.mbit)
        fitted = 1e-6 / json.load(open(machine))["across_nodes"]["point_to_point"]["beta_s_per_byte"]
        print(f"round {r + 1}: links of {pl['link']['bandwidth'] / 1e6:.2f} MB/s, "
              f"{pl['software_latency'] * 1e6:.0f} us per message (calibration's fit: {fitted:.1f} MB/s)", flush=True)
        for key, f in rotated(sorted(files.items()), r):
            batch = BATCH[key[0].split("-")[0]]
            metrics = f"{f}.r{r}.jsonl"
            trace = f"{f}.r{r}.trace"
            run(mpi(launcher, 2) + [t, "train", f, "--metrics", metrics, "--quiet", "--kokkos-threads=1",
                                    "--kokkos-disable-warnings", "--trace", trace, "--trace-skip", str(WARM_UP),
                                    "--trace-steps", str(a.steps)], env, metrics + ".log")
            replay = f"{trace}.json"
            run([simulator(t), trace, "--platform", platform, "--json", replay], env, replay + ".log")
            traced.setdefault(key, []).append(json.load(open(replay))["step_seconds"])
            events = [json.loads(line) for line in open(metrics)]
            steps = [batch / e["samples_per_s"] for e in events if e["event"] == "train"][WARM_UP:]
            measured.setdefault(key, []).append(statistics.median(steps))
            given = f"{f}.r{r}.given.json"
            run(mpi(launcher, 2) + [t, "plan", f, "--given", "--ranks", "2", "--machine", machine, "--json", given],
                env, given + ".log")
            planned.setdefault(key, []).append(json.load(open(given))["chosen"]["step_time_s"])
            # Layer times of one rank's block go into a copy: the profile the cluster plans with
            # keeps only what its 2 ranks measured.
            sim, single = f"{f}.r{r}.sim.json", f"{machine}.one-rank.json"
            if not os.path.exists(single):
                shutil.copy(machine, single)
            run([t, "plan", f, "--given", "--ranks", "2", "--machine", single, "--simulate", platform,
                 "--json", sim], env, sim + ".log")
            simulated.setdefault(key, []).append(json.load(open(sim))["simulation"]["step_seconds"])
            print(f"round {r + 1}: {key[0]} {key[1]}: measured {measured[key][-1]:.3f} s, planned "
                  f"{planned[key][-1]:.3f} s, simulated {simulated[key][-1]:.3f} s, trace replayed "
                  f"{traced[key][-1]:.3f} s", flush=True)

    sim_errors, plan_errors, trace_errors = [], [], []
    print(f"{a.rounds} round(s); medians over the rounds, [min-max] of the measured")
    print(f"{'case':14s} {'layout':8s} {'measured s':>24s} {'planned s':>10s} {'err':>6s} {'simulated s':>12s} "
          f"{'err':>6s} {'trace s':>8s} {'err':>6s}")
    for key in sorted(files):
        m = statistics.median(measured[key])
        p, s, tr = (statistics.median(x[key]) for x in (planned, simulated, traced))
        pe, se, te = abs(p - m) / m, abs(s - m) / m, abs(tr - m) / m
        plan_errors.append(pe)
        sim_errors.append(se)
        trace_errors.append(te)
        print(f"{key[0]:14s} {key[1]:8s} {spread(measured[key]):>24s} {p:10.3f} {pe:6.3f} {s:12.3f} {se:6.3f} "
              f"{tr:8.3f} {te:6.3f}")
    print(f"sim_vs_cluster_error={max(sim_errors):.3f} sim_vs_cluster_error_median={statistics.median(sim_errors):.3f} "
          f"planner_vs_cluster_error={max(plan_errors):.3f} trace_replay_vs_cluster_error={max(trace_errors):.3f}")


if __name__ == "__main__":
    main()
