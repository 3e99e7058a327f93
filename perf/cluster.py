#!/usr/bin/env python3
"""The network-bound regime on an emulated cluster (perf/cluster.sh, docs/cluster.md).

  cluster.py TESSERA WORKDIR [--target NAME] [--runs R] [--steps N] [--parts halo,data,hybrid,plan,cube]

Two emulated nodes (scripts/cluster.sh), each with its own share of this machine's cores, joined
by links whose bandwidth makes this machine's FLOP/s per byte of link equal a real machine's:

  link bandwidth = node FMA peak (`tessera bench peak`, one core x the node's cores)
                   / the target machine's peak FLOP/s per byte of its per-accelerator link

Then, with 1 OpenMP thread per rank:
  halo    perf/halo.py's small-block model split over depth, height and width on 2 ranks, one
          per node, and over depth and height on 4 (2 per node), through the cluster: the
          fraction of convolution time the halo takes exchanging first, the fraction
          overlapping hides, and the step time it saves (R rotations each);
  data    cosmoflow-small data parallel on 2 ranks, one per node, at global batch --data-batch
          (default 16: at 4, backprop is shorter than the all-reduce at these bandwidths, and
          no schedule could hide it): the all-reduce wait of the last rank to finish backprop
          with the default 4 MiB buckets against one bucket (nothing overlapped):
          allreduce_hidden = 1 - wait(buckets) / wait(one bucket);
  hybrid  cosmoflow-small on 4 ranks, 2 per node, at the same global batch: its deep blocks
          and hidden dense layers split by filter inside each node and samples across nodes
          (the seeds' hybrid), against data parallel over all 4: samples/s, bytes that crossed
          the network per step (the kernel's counters on each node's link) and the smallest
          global batch each layout can run.
  plan    perf/plan_accuracy.py --quick through the cluster (2-rank layouts across the 2 nodes,
          calibrated there), R rounds: the planner's median time error and regret.
  cube    (not in the default parts) a dense stack (flatten of 16^3, three 4096-wide layers) on
          8 ranks, 4 per node, batch 64: the 3-D cube {"cube": 2} (a 2 x 2 grid in each node,
          the weights sharded over the 2 nodes: gathered before forward, gradients
          reduce-scattered after backward) against the same grid with weight copies summed by
          the overlapped all-reduce, and filter 4 in each node: samples/s and bytes across the
          network per step.
Last line:
  target=... link_mbit=... halo_fraction=... hidden_fraction=... overlap_speedup=...
  overlap_speedup_min=... allreduce_hidden=... hybrid_vs_data=... hybrid_network_bytes_ratio=...
  plan_time_error=... plan_regret=... [cube_vs_copies=... cube_vs_filter=... cube_network_bytes_ratio=...]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CLUSTER = os.path.join(ROOT, "scripts", "cluster.sh")
sys.path.insert(0, HERE)
import cosmoflow_run  # noqa: E402  (perf/cosmoflow_run.py: the cosmoflow-small run config)

# Peak FLOP/s of one accelerator (or CPU node) and the network bandwidth it has to itself, in
# bytes/s, from the machines' public specifications (rounded).
TARGETS = {
    "perlmutter-tf32": (156e12, 25e9, "Perlmutter GPU node: an A100 at its TF32 tensor-core peak, 156 TFLOP/s, "
                                      "per Slingshot-11 NIC (25 GB/s, one per GPU)"),
    "sierra": (15.7e12, 6.25e9, "Sierra: a V100 at its fp32 peak, 15.7 TFLOP/s, per GPU's share of dual-rail EDR "
                                "InfiniBand (25 GB/s per node of 4 GPUs)"),
    "sierra-fp16": (125e12, 6.25e9, "Sierra: a V100 at its fp16 tensor-core peak, 125 TFLOP/s, per GPU's share of "
                                    "dual-rail EDR InfiniBand (6.25 GB/s)"),
    "theta": (5.3e12, 10e9, "Theta: a KNL 7230 node at its fp32 peak, 5.3 TFLOP/s, per Aries NIC (about 10 GB/s)"),
}

HALO_CASES = ["small-block-depth", "small-block-height", "small-block-width", "small-block-depth-height"]
DATA_SIZE = 64  # cosmoflow-small, as perf/cosmoflow_cpu.sh
HYBRID_SIZE, HYBRID_BATCH = 32, 4
FILTER_SPLIT = {"conv4", "act4", "pool4", "conv5", "act5", "pool5", "fc1", "act6", "fc2", "act7"}
WARM_UP = 2


def sh(cmd, log=None, check=True):
    """Runs cmd; its output goes to log (or is returned)."""
    if log:
        with open(log, "w") as out:
            r = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT)
    else:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if check and r.returncode != 0:
        sys.exit(f"cluster.py: `{' '.join(cmd)}` failed (exit {r.returncode})" +
                 (f"; see {log}" if log else f":\n{r.stdout[-3000:]}"))
    return r if log else r.stdout


class Cluster:
    """Two emulated nodes for the length of a `with` block; down on any exit."""

    def __init__(self, name, bandwidth_mbit, work):
        self.name, self.bandwidth, self.work = name, bandwidth_mbit, work

    def __enter__(self):
        # Room for 4 ranks a node (the cube part); the other parts place theirs explicitly.
        print(sh([CLUSTER, "up", "2", "--name", self.name, "--bandwidth", f"{self.bandwidth}mbit", "--slots", "4"]).strip(),
              flush=True)
        # perf/halo.py takes an mpirun: this one launches on the cluster, a rank per node in turn.
        self.mpirun = os.path.join(self.work, "mpirun")
        with open(self.mpirun, "w") as f:
            f.write(f'#!/bin/sh\nexec {CLUSTER} run --name {self.name} -- --map-by node '
                    '-x OMP_NUM_THREADS -x OMP_PROC_BIND "$@"\n')
        os.chmod(self.mpirun, 0o755)
        return self

    def __exit__(self, *exc):
        sh([CLUSTER, "down", "--name", self.name], check=False)

    def network_bytes(self):
        """Bytes through every node's link so far, both ways (the host ends' counters)."""
        total = 0
        for k in range(2):
            for d in ("rx_bytes", "tx_bytes"):
                with open(f"/sys/class/net/ts{self.name}-h{k}/statistics/{d}") as f:
                    total += int(f.read())
        return total / 2  # every byte between nodes leaves one link and enters the other

    def train(self, tessera, ranks, config, metrics, map_by):
        before = self.network_bytes()
        sh([CLUSTER, "run", "--name", self.name, "--", "--map-by", map_by, "-np", str(ranks),
            "-x", "OMP_NUM_THREADS", "-x", "OMP_PROC_BIND", tessera, "train", config, "--metrics", metrics,
            "--quiet", "--kokkos-threads=1", "--kokkos-disable-warnings"], log=metrics + ".log")
        return self.network_bytes() - before


def node_peak_flops(tessera, work, cores_per_node):
    out = os.path.join(work, "peak.json")
    sh([tessera, "bench", "peak", "--seconds", "0.3", "--triad-mb", "64", "--output", out],
       log=out + ".log")
    one_core = json.load(open(out))["peak"]["fma_gflops_one_core"] * 1e9
    return one_core * cores_per_node, one_core


def spread(values, fmt="{:.3f}"):
    return (fmt + " [" + fmt + "-" + fmt + "]").format(statistics.median(values), min(values), max(values))


def halo_part(tessera, cluster, runs, steps, work):
    cmd = ["/usr/bin/python3", os.path.join(HERE, "halo.py"), tessera, "--runs", str(runs), "--steps", str(steps),
           "--cases", ",".join(HALO_CASES), "--mpirun", cluster.mpirun, "--keep", os.path.join(work, "halo")]
    # Streamed: a case's runs take minutes, and its lines show how they go.
    lines = []
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as proc:
        for line in proc.stdout:
            print(line, end="", flush=True)
            lines.append(line)
    out = "".join(lines)
    if proc.returncode != 0:
        sys.exit(f"cluster.py: perf/halo.py failed (exit {proc.returncode})")
    cases = {}
    for m in re.finditer(r"^case=(\S+) halo_fraction=(\S+) hidden_fraction=(\S+) overlap_speedup=(\S+) "
                         r"forced_speedup=(\S+)$", out, re.M):
        cases[m.group(1)] = {k: float(m.group(i + 2)) for i, k in
                             enumerate(("halo_fraction", "hidden_fraction", "overlap_speedup", "forced_speedup"))}
    if len(cases) != len(HALO_CASES):
        sys.exit("cluster.py: perf/halo.py printed no figures for some cases:\n" + out[-2000:])
    return cases


def step_times(metrics, batch):
    events = [json.loads(line) for line in open(metrics)]
    return [batch / e["samples_per_s"] for e in events if e["event"] == "train"][WARM_UP:], events


def data_part(tessera, cluster, steps, work, runs, batch):
    """All-reduce wait with the default buckets and with one bucket, alternating, R times each."""
    configs = {}
    for name, kb in (("buckets", 4096), ("one_bucket", 1 << 20)):
        configs[name] = os.path.join(work, f"data-{name}.json")
        cosmoflow_run.config(DATA_SIZE, batch, steps + WARM_UP, configs[name],
                             [f"training.allreduce_bucket_kb={kb}", 'model.distribution={"sample": 2}'])
    waits = {"buckets": [], "one_bucket": []}
    rates = []
    for r in range(runs):
        for name in (("buckets", "one_bucket") if r % 2 == 0 else ("one_bucket", "buckets")):
            metrics = os.path.join(work, f"data-{name}-{r}.jsonl")
            cluster.train(tessera, 2, configs[name], metrics, "node")
            times, events = step_times(metrics, batch)
            train = [e for e in events if e["event"] == "train"]
            waits[name].append((train[-1]["allreduce_exposed_s"] - train[WARM_UP - 1]["allreduce_exposed_s"]) /
                               (len(train) - WARM_UP))
            if name == "buckets":
                rates.append(batch / statistics.median(times))
    hidden = [1 - b / o for b, o in zip(waits["buckets"], waits["one_bucket"])]
    print(f"data parallel, cosmoflow-small S={DATA_SIZE} batch {batch} on 2 nodes: "
          f"{spread(rates, '{:.2f}')} samples/s; all-reduce wait per step {spread(waits['buckets'], '{:.4f}')} s "
          f"with 4 MiB buckets, {spread(waits['one_bucket'], '{:.4f}')} s with one bucket; "
          f"allreduce_hidden {spread(hidden, '{:.2f}')}", flush=True)
    return statistics.median(hidden)


def hybrid_part(tessera, cluster, steps, work, runs):
    base = os.path.join(work, "hybrid-base.json")
    cosmoflow_run.config(HYBRID_SIZE, HYBRID_BATCH, steps + WARM_UP, base, [])
    c = json.load(open(base))
    layouts = {}
    for name in ("data", "hybrid"):
        for layer in c["model"]["layers"]:
            split = name == "hybrid" and layer["name"] in FILTER_SPLIT
            layer["distribution"] = {"sample": 2, "filter": 2} if split else {"sample": 4}
        layouts[name] = os.path.join(work, f"hybrid-{name}.json")
        json.dump(c, open(layouts[name], "w"))
    rate, sent = {"data": [], "hybrid": []}, {"data": [], "hybrid": []}
    for r in range(runs):
        for name in (("data", "hybrid") if r % 2 == 0 else ("hybrid", "data")):
            metrics = os.path.join(work, f"hybrid-{name}-{r}.jsonl")
            # Two ranks per node, consecutive: each filter pair shares a node.
            crossed = cluster.train(tessera, 4, layouts[name], metrics, "ppr:2:node")
            times, events = step_times(metrics, HYBRID_BATCH)
            rate[name].append(HYBRID_BATCH / statistics.median(times))
            sent[name].append(crossed / len([e for e in events if e["event"] == "train"]))
    for name, smallest in (("data", 4), ("hybrid", 2)):
        print(f"{name:6s} cosmoflow-small S={HYBRID_SIZE} batch {HYBRID_BATCH} on 2 nodes x 2 ranks: "
              f"{spread(rate[name], '{:.2f}')} samples/s, {spread([b / 1e6 for b in sent[name]], '{:.2f}')} MB across "
              f"the network per step (all of the run's traffic / its steps), smallest global batch {smallest}",
              flush=True)
    ratios = [h / d for h, d in zip(rate["hybrid"], rate["data"])]
    byte_ratios = [h / d for h, d in zip(sent["hybrid"], sent["data"])]
    return statistics.median(ratios), statistics.median(byte_ratios)


CUBE_BATCH = 64
CUBE_LAYOUTS = {"cube": {"cube": 2}, "copies": {"sample": 2, "channel": 2, "filter": 2},
                "filter": {"sample": 2, "filter": 4}}


def cube_part(tessera, cluster, steps, work, runs):
    """The dense stack under the cube, its grid with weight copies, and filter 4 per node."""
    layouts = {}
    for name, split in CUBE_LAYOUTS.items():
        layers = [{"name": "flat", "type": "flatten"}]
        for k in (1, 2, 3):
            layers += [{"name": f"fc{k}", "type": "dense", "units": 4096, "distribution": split},
                       {"name": f"act{k}", "type": "relu", "distribution": split}]
        layers.append({"name": "out", "type": "dense", "units": 4})
        c = {"name": f"dense-stack-{name}", "loss": {"type": "mse"}, "optimizer": {"type": "adam", "lr": 1e-4},
             "data": {"source": "synthetic_fields", "samples": 4 * CUBE_BATCH, "validation_samples": 0, "size": 16,
                      "channels": 1},
             "training": {"epochs": 1, "batch_size": CUBE_BATCH, "seed": 1, "max_steps": steps + WARM_UP,
                          "log_every": 1},
             "model": {"input": {"channels": 1, "size": [16, 16, 16]}, "distribution": {"sample": 8},
                       "layers": layers}}
        layouts[name] = os.path.join(work, f"cube-{name}.json")
        json.dump(c, open(layouts[name], "w"))
    rate, sent = {n: [] for n in layouts}, {n: [] for n in layouts}
    for r in range(runs):
        for name in (list(layouts) if r % 2 == 0 else list(reversed(list(layouts)))):
            metrics = os.path.join(work, f"cube-{name}-{r}.jsonl")
            # Four consecutive ranks per node: each channel group inside a node.
            crossed = cluster.train(tessera, 8, layouts[name], metrics, "ppr:4:node")
            times, events = step_times(metrics, CUBE_BATCH)
            rate[name].append(CUBE_BATCH / statistics.median(times))
            sent[name].append(crossed / len([e for e in events if e["event"] == "train"]))
    for name in layouts:
        print(f"{name:7s} dense stack batch {CUBE_BATCH} on 2 nodes x 4 ranks, {CUBE_LAYOUTS[name]}: "
              f"{spread(rate[name], '{:.2f}')} samples/s, {spread([b / 1e6 for b in sent[name]], '{:.2f}')} MB across "
              f"the network per step", flush=True)
    ratio = lambda a, b, what: statistics.median([x / y for x, y in zip(what[a], what[b])])
    return ratio("cube", "copies", rate), ratio("cube", "filter", rate), ratio("cube", "copies", sent)


def plan_part(tessera, cluster, work, runs):
    launcher = (f"{CLUSTER} run --name {cluster.name} -- --map-by node -x OMP_NUM_THREADS -x OMP_PROC_BIND")
    plan_work = os.path.join(work, "plan")
    os.makedirs(plan_work, exist_ok=True)
    cmd = ["/usr/bin/python3", os.path.join(HERE, "plan_accuracy.py"), tessera, plan_work, "--quick",
           "--rounds", str(runs), "--launcher", launcher]
    out = sh(cmd)
    print(out, end="", flush=True)
    m = re.search(r"median_time_error=(\S+) .*planner_regret=(\S+)", out)
    if not m:
        sys.exit("cluster.py: perf/plan_accuracy.py printed no figures:\n" + out[-2000:])
    return m.group(1), m.group(2)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("tessera")
    ap.add_argument("work")
    ap.add_argument("--target", default="perlmutter-tf32", choices=sorted(TARGETS))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--parts", default="halo,data,hybrid,plan")
    ap.add_argument("--data-batch", type=int, default=16)
    a = ap.parse_args()
    parts = a.parts.split(",")
    for p in parts:
        if p not in ("halo", "data", "hybrid", "plan", "cube"):
            sys.exit(f"cluster.py: unknown part '{p}' (halo, data, hybrid, plan, cube)")
    os.makedirs(a.work, exist_ok=True)
    cores_per_node = max(1, os.cpu_count() // 2)
    flops, one_core = node_peak_flops(a.tessera, a.work, cores_per_node)
    peak, link, what = TARGETS[a.target]
    ratio = peak / link
    mbit = max(1, round(flops / ratio * 8 / 1e6))
    print(f"target {a.target}: {what}: {ratio:.0f} FLOP per byte of link", flush=True)
    print(f"this machine: {one_core / 1e9:.1f} GFLOP/s FMA peak per core, {cores_per_node} core(s) per emulated node: "
          f"links of {mbit} Mbit/s ({mbit / 8:.1f} MB/s) give the same ratio", flush=True)
    figures = {"target": a.target, "link_mbit": mbit}
    name = f"p{os.getpid() % 100000:05d}"
    with Cluster(name, mbit, a.work) as cluster:
        if "halo" in parts:
            cases = halo_part(a.tessera, cluster, a.runs, a.steps, a.work)
            small = cases["small-block-depth"]
            figures.update(halo_fraction=f"{small['halo_fraction']:.3f}",
                           hidden_fraction=f"{min(c['hidden_fraction'] for c in cases.values()):.2f}",
                           overlap_speedup=f"{small['overlap_speedup']:.3f}",
                           overlap_speedup_min=f"{min(c['overlap_speedup'] for c in cases.values()):.3f}")
        if "data" in parts:
            figures["allreduce_hidden"] = f"{data_part(a.tessera, cluster, a.steps, a.work, a.runs, a.data_batch):.2f}"
        if "hybrid" in parts:
            speed, volume = hybrid_part(a.tessera, cluster, a.steps, a.work, a.runs)
            figures.update(hybrid_vs_data=f"{speed:.3f}", hybrid_network_bytes_ratio=f"{volume:.3f}")
        if "plan" in parts:
            figures["plan_time_error"], figures["plan_regret"] = plan_part(a.tessera, cluster, a.work, a.runs)
        if "cube" in parts:
            speed, vs_filter, volume = cube_part(a.tessera, cluster, a.steps, a.work, a.runs)
            figures.update(cube_vs_copies=f"{speed:.3f}", cube_vs_filter=f"{vs_filter:.3f}",
                           cube_network_bytes_ratio=f"{volume:.3f}")
    print(" ".join(f"{k}={v}" for k, v in figures.items()))


if __name__ == "__main__":
    main()
