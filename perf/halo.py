#!/usr/bin/env python3
"""Halo exchange against convolution time, and what overlapping them gains, per split axis.

  halo.py TESSERA [--runs R] [--steps N] [--cases NAME,...] [--keep DIR]

Each case trains a model split over ranks with `tessera train --profile` R times in each of
three ways, rotating their order: exchanging first ("halo_overlap": false), as Tessera runs
by default (true: each layer overlaps where that can pay, measured on its first training
steps, OverlapChoice), and overlapping every layer that can ("always"). Steps are timed after
1 + 6 steps (warm-up and the default's trial), N of them; the profile covers steps 3 on.

  exposed          halo time a rank could not compute, imbalance left out, summed over the
                   layers: each message carries its post time, so a wait splits into exposed
                   communication (after the neighbour had posted, until this rank's data
                   arrived) and waiting for a neighbour still computing (imbalance)
  halo_fraction    exchanging first: (halo work - imbalance) / convolution time, where halo work
                   is packing, copying the block into its haloed buffer, waiting and unpacking,
                   and convolution time is forward + backward - halo work
  hidden_fraction  1 - exposed overlapping every layer that can ("always") / exposed exchanging
                   first, per repetition, clamped to [0, 1] (below 0 the overlap exposed more;
                   the raw figure is printed too)
  overlap_speedup  median step time exchanging first / by default, per repetition
  forced_speedup   the same against "always": what overlapping everywhere would give

Each figure is the median of the R runs with its min-max spread. The last line per case:
  case=NAME halo_fraction=H hidden_fraction=O overlap_speedup=S forced_speedup=F
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import cosmoflow_run  # noqa: E402  (perf/cosmoflow_run.py: the cosmoflow-small run config)

SMALL_BLOCK = os.path.join(HERE, "halo_small_block.json")

# name: (model, ranks, distribution). cosmoflow-small at S=64, batch 4 (the CPU benchmark
# model), and the small-block model whose blocks are as small as at scale.
CASES = {
    "cosmoflow-depth": ("cosmoflow", 2, {"depth": 2}),
    "cosmoflow-height": ("cosmoflow", 2, {"height": 2}),
    "cosmoflow-width": ("cosmoflow", 2, {"width": 2}),
    "small-block-depth": ("small", 2, {"depth": 2}),
    "small-block-height": ("small", 2, {"height": 2}),
    "small-block-width": ("small", 2, {"width": 2}),
    "small-block-depth-height": ("small", 4, {"depth": 2, "height": 2}),
}


def write_config(model, distribution, overlap, steps, path):
    settings = [f"model.distribution={json.dumps(distribution)}", f"model.halo_overlap={json.dumps(overlap)}"]
    if model == "cosmoflow":
        cosmoflow_run.config(64, 4, steps + TIMED_FROM, path, settings)
        return
    c = json.load(open(SMALL_BLOCK))
    c["model"]["distribution"] = distribution
    c["model"]["halo_overlap"] = overlap
    c["training"]["epochs"] = steps + TIMED_FROM
    json.dump(c, open(path, "w"))


TIMED_FROM = 7  # steps before timing: 1 warm-up and OverlapChoice.trial_steps (6)


def run(tessera, mpirun, ranks, config, metrics):
    cmd = [mpirun, "-np", str(ranks), tessera, "train", config, "--profile", "--metrics", metrics, "--quiet",
           "--kokkos-threads=1", "--kokkos-disable-warnings"]
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        sys.exit(f"halo.py: {' '.join(cmd)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return read_metrics(metrics)


def read_metrics(metrics):
    """The median timed step and rank 0's profile regions of one run's metrics log."""
    events = [json.loads(line) for line in open(metrics)]
    steps = [e["elapsed_s"] for e in events if e["event"] == "train"]
    # elapsed_s is the run's clock at each step's end: step times are its differences.
    times = [b - a for a, b in zip(steps, steps[1:])][TIMED_FROM - 1:]
    regions = [e for e in events if e["event"] == "profile"][-1]["regions"]
    return statistics.median(times), regions


def figures(plain, overlapped):
    """Totals over the haloed layers of one pair of runs' profiles."""
    def sec(r, name):
        return r.get(name, {}).get("seconds", 0.0)
    conv = halo = exposed = blocked = exposed_plain = blocked_plain = 0.0
    for name in plain:
        m = re.match(r"halo/(layer '([^']+)'.*)", name)
        if not m:
            continue
        where, layer = m.group(1), m.group(2)
        work = sec(plain, name)
        conv += sec(plain, f"forward/{layer}") + sec(plain, f"backward/{layer}") - work
        halo += work
        exposed += sec(overlapped, f"halo_exposed/{where}")
        blocked += sec(overlapped, f"halo_wait/{where}")
        exposed_plain += sec(plain, f"halo_exposed/{where}")
        blocked_plain += sec(plain, f"halo_wait/{where}")
    imbalance_plain = blocked_plain - exposed_plain
    raw = 1.0 - exposed / exposed_plain if exposed_plain > 0 else 1.0
    return {
        "conv_s": conv,
        "halo_s": halo - imbalance_plain,
        "halo_fraction": (halo - imbalance_plain) / conv if conv > 0 else 0.0,
        "hidden_fraction": min(1.0, max(0.0, raw)),
        "hidden_fraction_raw": raw,
        "exposed_s": exposed,
        "exposed_exchange_first_s": exposed_plain,
        "imbalance_s": blocked - exposed,
        "imbalance_exchange_first_s": imbalance_plain,
    }


def spread(values, fmt="{:.3f}"):
    return (fmt + " [" + fmt + "-" + fmt + "]").format(statistics.median(values), min(values), max(values))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("tessera")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--cases", default=",".join(CASES), help="comma-separated, of: " + ", ".join(CASES))
    p.add_argument("--mpirun", default="mpirun")
    p.add_argument("--keep", help="keep configs and metrics logs in this directory")
    p.add_argument("--reread", action="store_true", help="read the metrics logs already in --keep instead of running")
    a = p.parse_args()
    names = a.cases.split(",")
    for n in names:
        if n not in CASES:
            sys.exit(f"halo.py: unknown case '{n}'; the cases are {', '.join(CASES)}")
    if a.reread and not a.keep:
        sys.exit("halo.py: --reread reads the logs in --keep DIR")
    work = a.keep or tempfile.mkdtemp(prefix="tessera-halo-")
    os.makedirs(work, exist_ok=True)
    summary = []
    for name in names:
        model, ranks, distribution = CASES[name]
        rows, speedups, forced = [], [], []
        ways = [False, True, "always"]
        for r in range(a.runs):
            step, regions = {}, {}
            for way in ways[r % 3:] + ways[:r % 3]:
                tag = str(way).lower()
                config = os.path.join(work, f"{name}-{tag}.json")
                metrics = os.path.join(work, f"{name}-{tag}-{r}.jsonl")
                if a.reread:
                    step[tag], regions[tag] = read_metrics(metrics)
                    continue
                write_config(model, distribution, way, a.steps, config)
                step[tag], regions[tag] = run(a.tessera, a.mpirun, ranks, config, metrics)
            rows.append(figures(regions["false"], regions["always"]))
            speedups.append(step["false"] / step["true"])
            forced.append(step["false"] / step["always"])
            print(f"{name} run {r + 1}/{a.runs}: step {step['false']:.3f} s exchanging first, {step['true']:.3f} s "
                  f"by default, {step['always']:.3f} s always overlapped; halo {rows[-1]['halo_s']:.4f} s of conv "
                  f"{rows[-1]['conv_s']:.3f} s; exposed {rows[-1]['exposed_exchange_first_s']:.4f} -> "
                  f"{rows[-1]['exposed_s']:.4f} s, imbalance {rows[-1]['imbalance_exchange_first_s']:.4f} -> "
                  f"{rows[-1]['imbalance_s']:.4f} s", flush=True)
        col = {k: [row[k] for row in rows] for k in rows[0]}
        print(f"{name} ({ranks} ranks, {json.dumps(distribution)}), median [min-max] of {a.runs} runs:")
        print(f"  halo_fraction   {spread(col['halo_fraction'])}")
        print(f"  hidden_fraction {spread(col['hidden_fraction'], '{:.2f}')}"
              f" (raw {spread(col['hidden_fraction_raw'], '{:.2f}')})")
        print(f"  exposed_s       {spread(col['exposed_s'], '{:.4f}')}"
              f" (exchanging first: {spread(col['exposed_exchange_first_s'], '{:.4f}')})")
        print(f"  imbalance_s     {spread(col['imbalance_s'], '{:.4f}')}"
              f" (exchanging first: {spread(col['imbalance_exchange_first_s'], '{:.4f}')})")
        print(f"  overlap_speedup {spread(speedups)}")
        print(f"  forced_speedup  {spread(forced)}")
        line = (f"case={name} halo_fraction={statistics.median(col['halo_fraction']):.3f} "
                f"hidden_fraction={statistics.median(col['hidden_fraction']):.2f} "
                f"overlap_speedup={statistics.median(speedups):.3f} "
                f"forced_speedup={statistics.median(forced):.3f}")
        summary.append(line)
        print(line, flush=True)
    print("\n".join(summary))


if __name__ == "__main__":
    main()
