#!/usr/bin/env python3
"""`tessera train --trace` against the planner's schedule of the same layout, and its replay
(docs/simulation.md, "A real run's trace").

A depth split of the built-in example on 2 ranks is traced; the trace must hold what the
planner's schedule of that layout holds: halo exchanges in the same layers with the same bytes
(within the 8-byte stamps the transport adds to each message), the same collectives in the same
layers, gradient buckets summing every gradient once, a wait for them, and (in a trace of one
step) compute that fits inside the measured step. With
--sim, tessera-sim replays the trace on a platform of 2 ranks per node.

Usage: check_trace.py TESSERA CONFIG MACHINE WORKDIR [--sim TESSERA_SIM] -- MPIEXEC [FLAGS...]
"""
import argparse
import collections
import json
import os
import subprocess
import sys

parser = argparse.ArgumentParser()
parser.add_argument("tessera")
parser.add_argument("config")
parser.add_argument("machine")
parser.add_argument("work")
parser.add_argument("--sim")
split = sys.argv.index("--") if "--" in sys.argv else len(sys.argv)
args = parser.parse_args(sys.argv[1:split])
mpiexec = sys.argv[split + 1:]
if not mpiexec:
    parser.error("the MPI launcher follows --")
os.makedirs(args.work, exist_ok=True)
failures = []


def check(ok, what):
    print(f"{'ok ' if ok else 'BAD'} {what}")
    if not ok:
        failures.append(what)


def read_schedule(path):
    """The header's values and each rank's operations as word lists."""
    header, ranks, rank = {}, collections.defaultdict(list), None
    for line in open(path):
        w = line.split()
        if not w or w[0] in ("tessera-step-schedule", "end"):
            continue
        if w[0] == "rank":
            rank = int(w[1])
        elif rank is None:
            header.setdefault(w[0], []).append(w[1:])
        else:
            ranks[rank].append(w)
    return header, ranks


def exchange_bytes(op):
    """Bytes an x/xo operation sends, and the layer it belongs to."""
    at = 3 if op[0] == "xo" else 2
    sends = int(op[at])
    return int(op[1]), sum(float(op[at + 2 + 2 * k]) for k in range(sends))


def collectives(ops):
    """(layer, kind) of the layers' collectives; the step's own (layer -1: the loss and metrics
    sums, which the planner does not schedule) left out."""
    return sorted({(int(op[1]), op[0]) for op in ops if op[0] in ("ar", "ag", "rs", "a2a") and int(op[1]) >= 0})


def summary(ops):
    layers, sent, buckets, waits, compute = set(), 0.0, 0.0, 0, 0.0
    for op in ops:
        if op[0] in ("x", "xo"):
            layer, b = exchange_bytes(op)
            if b > 0:
                layers.add(layer)
            sent += b
        elif op[0] == "iar":
            buckets += float(op[5])
        elif op[0] == "wa":
            waits += 1
        elif op[0] == "c":
            compute += float(op[2])
        if op[0] == "xo":
            compute += float(op[2])
    return layers, sent, buckets, waits, compute


config = json.load(open(args.config))
config["model"]["distribution"] = {"depth": 2}
config["training"]["batch_size"] = 8
config_path = os.path.join(args.work, "depth2.json")
json.dump(config, open(config_path, "w"))
trace = os.path.join(args.work, "depth2.trace")
planned = os.path.join(args.work, "depth2.schedule")

train = subprocess.run(mpiexec + ["-np", "2", args.tessera, "train", config_path, "--max-steps", "7", "--no-progress",
                                  "--trace", trace, "--trace-skip", "3", "--trace-steps", "3"],
                       capture_output=True, text=True)
print(train.stdout[-2000:], train.stderr[-2000:])
check(train.returncode == 0 and "trace: 3 step(s) of 2 rank(s)" in train.stdout, "the traced run ends and says so")
plan = subprocess.run([args.tessera, "plan", config_path, "--ranks", "2", "--given", "--machine", args.machine,
                       "--no-measure", "--schedule", planned], capture_output=True, text=True)
check(plan.returncode == 0, f"the planner writes the layout's schedule ({plan.stderr.strip()[-300:]})")
if failures:
    sys.exit(1)

header, traced = read_schedule(trace)
plan_header, plan_ops = read_schedule(planned)
measured = float(header["measured_step_seconds"][0][0])
check(header["ranks"] == [["2"]] and sorted(traced) == [0, 1], "the trace holds both ranks")
check(measured > 0 and "predicted_step_seconds" not in header, f"its header gives the measured step ({measured:.4f} s)")
check([w[1] for w in header["layer"]] == [w[1] for w in plan_header["layer"]], "its layers are the planner's")
for r in (0, 1):
    t_layers, t_sent, t_buckets, t_waits, t_compute = summary(traced[r])
    p_layers, p_sent, p_buckets, p_waits, _ = summary(plan_ops[r])
    check(t_layers == p_layers, f"rank {r}: halo exchanges in layers {sorted(t_layers)}, the planner's "
                                f"{sorted(p_layers)}")
    check(p_sent > 0 and abs(t_sent - p_sent) <= 0.02 * p_sent,
          f"rank {r}: {t_sent:.0f} halo bytes sent, the planner's {p_sent:.0f}")
    check(p_buckets > 0 and abs(t_buckets - p_buckets) <= 1e-6 * p_buckets,
          f"rank {r}: gradient buckets of {t_buckets:.0f} bytes in all, the planner's {p_buckets:.0f}")
    check(t_waits >= 1, f"rank {r}: waits for its buckets ({t_waits} wait(s))")
    check(collectives(traced[r]) == collectives(plan_ops[r]),
          f"rank {r}: collectives {collectives(traced[r])}, the planner's {collectives(plan_ops[r])}")

# Compute within the step it was measured in: a trace of one step, whose operations' times are
# that step's own (over several steps each operation's median is written, and medians need not
# sum to less than the median step).
one_step = os.path.join(args.work, "one_step.trace")
single = subprocess.run(mpiexec + ["-np", "2", args.tessera, "train", config_path, "--max-steps", "9", "--quiet",
                                   "--trace", one_step, "--trace-skip", "8", "--trace-steps", "1"],
                        capture_output=True, text=True)
failed = f": {single.stderr.strip()[-300:]}" if single.returncode else ""
check(single.returncode == 0, "a one-step trace is written" + failed)
if single.returncode == 0:
    one_header, one_ops = read_schedule(one_step)
    step = float(one_header["measured_step_seconds"][0][0])
    for r in (0, 1):
        compute = summary(one_ops[r])[4]
        check(0 < compute <= step * 1.01, f"rank {r}: {compute:.4f} s of compute within the {step:.4f} s step")

if args.sim:
    platform = os.path.join(args.work, "two_per_node.json")
    json.dump({"format_version": 1, "name": "two_per_node", "ranks_per_node": 2,
               "topology": {"kind": "fat_tree", "levels": 1, "down": [2], "up": [1], "links": [1]},
               "link": {"bandwidth": 1e9, "latency": 1e-5}, "software_latency": 0,
               "within_node": {"bandwidth": 1e10, "latency": 1e-6}}, open(platform, "w"))
    result_path = os.path.join(args.work, "replay.json")
    # A trace records the ranks per node the job ran with: ask the replay for the same.
    with open(trace) as f:
        text = f.read()
    rpn = int(header["ranks_per_node"][0][0])
    if rpn != 2:
        text = text.replace(f"ranks_per_node {rpn}\n", "ranks_per_node 2\n", 1)
        trace = os.path.join(args.work, "depth2_two_per_node.trace")
        open(trace, "w").write(text)
    sim = subprocess.run([args.sim, trace, "--platform", platform, "--json", result_path], capture_output=True,
                         text=True)
    print(sim.stdout, sim.stderr)
    check(sim.returncode == 0 and "measured" in sim.stdout, "tessera-sim replays the trace")
    if sim.returncode == 0:
        result = json.load(open(result_path))
        check(result["measured_step_seconds"] == measured, "the replay reports the measured step beside its own")
        check(result["step_seconds"] >= result["compute_seconds"] > 0,
              f"the replayed step ({result['step_seconds']:.4f} s) holds its compute "
              f"({result['compute_seconds']:.4f} s)")

if failures:
    print(f"{len(failures)} check(s) failed")
    sys.exit(1)
print("trace checks passed")
