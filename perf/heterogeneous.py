#!/usr/bin/env python3
"""Measured balance against even shares on two nodes of different speed (perf/heterogeneous.sh).

  heterogeneous.py TESSERA WORKDIR [--runs R] [--steps N] [--size S] [--batch B] [--share F]

Two emulated nodes (scripts/cluster.sh, docs/cluster.md) of one core each, node 1 held to F of
its core (--cpu-share 1=F, default 0.5) by the cgroup cpu controller, joined by 10 Gbit/s links.
cosmoflow-small at S^3 (default 32), global batch B (default 24), 1 OpenMP thread per rank, no
progress thread (a node's one core would be shared with it):

  single   one rank on each node alone, the whole batch: samples/s s0 (full) and s1 (slowed),
           the median of R runs each;
  even     2 ranks, one per node, shares B/2 each ("balance": "even");
  measured 2 ranks, "balance": "measured": even for the first steps, then in proportion to the
           measured speeds.

Each run trains N steps (default 30) of one epoch; its rate is the median step's, after
the balance took effect for the measured runs (the steps from its balance record on, less the
one that re-creates the ops) and after two warm-up steps for the even ones. Runs alternate,
R of each (default 3).

  balanced_vs_even = rate(measured) / rate(even)
  ideal = (s0 + s1) / (2 min(s0, s1)): all of both ranks' speed against the slower rank's pace
          (1.5 for speeds 1 and 0.5)
  fraction_of_ideal = balanced_vs_even / ideal        (target >= 0.85)

Also the cost of re-balancing: the bytes gathered to decide, the decision's seconds, and how
much longer than the median the step after the change took (it re-creates the layers' ops).
Last line: balanced_vs_even=... ideal=... fraction_of_ideal=... shares=... s0=... s1=...
           rebalance_bytes=... rebalance_decision_s=... rebalance_step_extra_s=...
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CLUSTER = os.path.join(ROOT, "scripts", "cluster.sh")
sys.path.insert(0, HERE)
import cosmoflow_run  # noqa: E402  (perf/cosmoflow_run.py: the cosmoflow-small run config)

NAME = "het"
WARM_UP = 2


def spread(values):
    return f"{statistics.median(values):.2f} [{min(values):.2f}-{max(values):.2f}]"


def sh(cmd, log):
    with open(log, "w") as out:
        r = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT)
    if r.returncode != 0:
        sys.exit(f"heterogeneous.py: `{' '.join(cmd)}` failed (exit {r.returncode}); see {log}")


def make_config(args, work, balance, ranks_batch):
    out = os.path.join(work, f"config-{balance}-{ranks_batch}.json")
    # Enough samples for one epoch of all the steps: the balance is re-set only at epoch ends
    # after the first, so one epoch shows the first balance alone.
    # Each node has one core: a thread polling the gradient sum would take it from the rank.
    cosmoflow_run.config(args.size, ranks_batch, 1, out,
                         [f"data.samples={ranks_batch * args.steps}", f'training.balance="{balance}"',
                          f"training.max_steps={args.steps}", "training.allreduce_progress_thread=false"])
    return out


def train_args(tessera, config, metrics):
    return [tessera, "train", config, "--metrics", metrics, "--quiet", "--kokkos-threads=1",
            "--kokkos-disable-warnings"]


def single_rate(tessera, node, config, work, batch, run):
    metrics = os.path.join(work, f"single-node{node}-{run}.jsonl")
    sh([CLUSTER, "exec", "--name", NAME, str(node), "--", "env", "OMP_NUM_THREADS=1", "OMP_PROC_BIND=false"] +
       train_args(tessera, config, metrics), metrics + ".log")
    return cosmoflow_run.rate(metrics, batch)


def two_rank_run(tessera, config, metrics, batch):
    sh([CLUSTER, "run", "--name", NAME, "--", "--map-by", "node", "-np", "2", "-x", "OMP_NUM_THREADS", "-x",
        "OMP_PROC_BIND"] + train_args(tessera, config, metrics), metrics + ".log")
    events = [json.loads(line) for line in open(metrics)]
    train = [e for e in events if e["event"] == "train"]
    times = [batch / e["samples_per_s"] for e in train]
    balance = [e for e in events if e["event"] == "balance"]
    if not balance:
        return batch / statistics.median(times[WARM_UP:]), None
    b = balance[0]
    # Step b["step"] + 1 is the first with the new shares; it re-creates the layers' ops.
    after = times[b["step"] + 1:]
    if len(after) < 4:
        sys.exit(f"heterogeneous.py: too few steps after the balance in {metrics}; raise --steps")
    median = statistics.median(after[1:])
    return batch / median, {"shares": b["shares"], "changed": b["changed"], "bytes": b["gathered_bytes"],
                            "decision_s": b["decision_s"], "step_extra_s": after[0] - median}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("tessera")
    p.add_argument("work")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--size", type=int, default=32)
    p.add_argument("--batch", type=int, default=24)
    p.add_argument("--share", type=float, default=0.5)
    args = p.parse_args()
    os.makedirs(args.work, exist_ok=True)
    print(subprocess.run([CLUSTER, "up", "2", "--name", NAME, "--cpus-per-node", "1", "--bandwidth", "10gbit",
                          "--cpu-share", f"1={args.share}"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, check=True).stdout.strip(), flush=True)
    try:
        single = make_config(args, args.work, "even", args.batch)
        singles = {0: [], 1: []}
        for r in range(args.runs):
            for node in (0, 1):
                singles[node].append(single_rate(args.tessera, node, single, args.work, args.batch, r))
        s0, s1 = statistics.median(singles[0]), statistics.median(singles[1])
        print(f"one rank, batch {args.batch}: node 0 {spread(singles[0])} samples/s, node 1 (cpu share "
              f"{args.share}) {spread(singles[1])} samples/s", flush=True)
        configs = {b: make_config(args, args.work, b, args.batch) for b in ("even", "measured")}
        rates = {"even": [], "measured": []}
        costs = []
        for r in range(args.runs):
            for b in (("even", "measured") if r % 2 == 0 else ("measured", "even")):
                metrics = os.path.join(args.work, f"{b}-{r}.jsonl")
                rate, cost = two_rank_run(args.tessera, configs[b], metrics, args.batch)
                rates[b].append(rate)
                if b == "measured":
                    if cost is None:
                        sys.exit(f"heterogeneous.py: the measured run wrote no balance record ({metrics})")
                    costs.append(cost)
                print(f"run {r} {b:8s}: {rate:.2f} samples/s" +
                      (f", shares {'/'.join(map(str, cost['shares']))}" if b == "measured" else ""), flush=True)
    finally:
        subprocess.run([CLUSTER, "down", "--name", NAME], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    even, measured = statistics.median(rates["even"]), statistics.median(rates["measured"])
    ideal = (s0 + s1) / (2 * min(s0, s1))
    ratio = measured / even
    shares = "/".join(map(str, costs[len(costs) // 2]["shares"]))
    print(f"2 ranks: even {spread(rates['even'])} samples/s, measured {spread(rates['measured'])} samples/s")
    print(f"re-balancing: {costs[0]['bytes']} bytes gathered, decided in "
          f"{statistics.median(c['decision_s'] for c in costs) * 1e3:.3f} ms, the step after it "
          f"{statistics.median(c['step_extra_s'] for c in costs):+.3f} s against the median step")
    print(f"balanced_vs_even={ratio:.3f} ideal={ideal:.3f} fraction_of_ideal={ratio / ideal:.3f} shares={shares} "
          f"s0={s0:.2f} s1={s1:.2f} rebalance_bytes={costs[0]['bytes']} "
          f"rebalance_decision_s={statistics.median(c['decision_s'] for c in costs):.6f} "
          f"rebalance_step_extra_s={statistics.median(c['step_extra_s'] for c in costs):.3f}")


if __name__ == "__main__":
    main()
