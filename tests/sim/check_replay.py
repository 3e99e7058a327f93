#!/usr/bin/env python3
"""tessera-sim against the alpha-beta times its algorithms must take where nothing contends, and
its refusals of bad platforms and schedules (docs/simulation.md).

Usage: check_replay.py TESSERA_SIM
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

SIM = sys.argv[1]
work = tempfile.mkdtemp()
failures = []

BW, LAT = 1e9, 1e-5          # every link: 1 GB/s, 10 us; a message crosses two (node, switch, node)
WITHIN_BW, WITHIN_LAT = 1e10, 1e-6


def platform(name, ranks_per_node=1, nodes=16, software=0.0, **extra):
    p = {"format_version": 1, "name": name, "ranks_per_node": ranks_per_node,
         "topology": {"kind": "fat_tree", "levels": 1, "down": [nodes], "up": [1], "links": [1]},
         "link": {"bandwidth": BW, "latency": LAT}, "software_latency": software,
         "within_node": {"bandwidth": WITHIN_BW, "latency": WITHIN_LAT}}
    p.update(extra)
    path = os.path.join(work, name + ".json")
    json.dump(p, open(path, "w"))
    return path


def schedule(name, ranks, ops, ranks_per_node=1, end=True):
    path = os.path.join(work, name + ".sched")
    with open(path, "w") as f:
        f.write(f"tessera-step-schedule 1\nranks {ranks}\nranks_per_node {ranks_per_node}\nlabel {name}\nlayer 0 a\n")
        for r in range(ranks):
            f.write(f"rank {r}\n")
            for op in ops(r):
                f.write(op + "\n")
        if end:
            f.write("end\n")
    return path


def run(sched, plat):
    out = os.path.join(work, "result.json")
    if os.path.exists(out):
        os.remove(out)
    p = subprocess.run([SIM, sched, "--platform", plat, "--json", out], capture_output=True, text=True)
    return p, (json.load(open(out)) if p.returncode == 0 else None)


def expect_time(what, sched, plat, seconds):
    p, result = run(sched, plat)
    if p.returncode != 0:
        failures.append(f"{what}: exit {p.returncode}: {p.stderr.strip()}")
        return
    got = result["step_seconds"]
    ok = abs(got - seconds) <= 1e-9 + 1e-6 * seconds
    print(f"{'ok ' if ok else 'BAD'} {what}: {got:.9f} s, expected {seconds:.9f} s")
    if not ok:
        failures.append(f"{what}: {got} s, expected {seconds} s")


def expect_error(what, sched, plat, text):
    p, _ = run(sched, plat)
    ok = p.returncode == 1 and text in p.stderr
    print(f"{'ok ' if ok else 'BAD'} {what}: exit {p.returncode}: {p.stderr.strip().splitlines()[0] if p.stderr.strip() else ''}")
    if not ok:
        failures.append(f"{what}: exit {p.returncode}, stderr {p.stderr!r}, wanted {text!r}")


flat = platform("flat")
hop = 2 * LAT  # node -> switch -> node
n = 8e6

# One message each way between two nodes: latency of two links, then the bytes at one link's
# rate (full duplex: both directions at once).
expect_time("an exchange between two nodes", schedule("x", 2, lambda r: [f"x 0 1 {1 - r} {n} 1 {1 - r}"]), flat,
            hop + n / BW)
# Rabenseifner over 8: 3 halving steps (n/2, n/4, n/8) and 3 doubling ones: 2 (p-1)/p n / B.
expect_time("an allreduce over 8 (Rabenseifner)", schedule("ar8", 8, lambda r: [f"ar 0 0 1 8 {n}"]), flat,
            6 * hop + 2 * 7 / 8 * n / BW)
# Over 6: the first 4 fold into 2 (n), the 4 left run Rabenseifner, the result goes back (n).
expect_time("an allreduce over 6 folds to 4", schedule("ar6", 6, lambda r: [f"ar 0 0 1 6 {n}"]), flat,
            2 * (hop + n / BW) + 4 * hop + 2 * 3 / 4 * n / BW)
# Short buffers: recursive doubling, log2(p) steps of the whole buffer.
expect_time("a short allreduce doubles", schedule("ar_short", 8, lambda r: ["ar 0 0 1 8 1000"]), flat,
            3 * (hop + 1000 / BW))
# Ring allgather and reduce-scatter: p - 1 steps of one rank's part.
expect_time("an allgather ring over 4", schedule("ag", 4, lambda r: [f"ag 0 0 1 4 {n}"]), flat, 3 * (hop + n / BW))
expect_time("a reduce-scatter ring over 4", schedule("rs", 4, lambda r: [f"rs 0 0 1 4 {n}"]), flat, 3 * (hop + n / BW))
# Pairwise alltoall: p - 1 steps of n / p.
expect_time("an alltoall over 4", schedule("a2a", 4, lambda r: [f"a2a 0 0 1 4 {n}"]), flat, 3 * (hop + n / 4 / BW))
# Groups as (first, stride, count): ranks 1, 3, 5, 7 sum alone while the even ranks do nothing.
expect_time("an allreduce over a strided group",
            schedule("strided", 8, lambda r: [f"ar 0 1 2 4 {n}"] if r % 2 else []), flat, 4 * hop + 2 * 3 / 4 * n / BW)
# A gradient sum started before 1 s of compute ends behind it; one started after adds its time.
ar4 = 4 * hop + 2 * 3 / 4 * n / BW
expect_time("a nonblocking allreduce hides behind compute",
            schedule("iar", 4, lambda r: [f"iar 0 0 1 4 {n}", "c 0 1", "wa -1"]), flat, 1.0)
expect_time("a nonblocking allreduce after compute adds its time",
            schedule("iar_late", 4, lambda r: ["c 0 1", f"iar 0 0 1 4 {n}", "wa -1"]), flat, 1.0 + ar4)
# Contention: four nodes sending to one share its link.
expect_time("four senders share the receiver's link",
            schedule("incast", 5, lambda r: [f"x 0 1 4 {n} 0"] if r < 4 else ["x 0 0 4 0 1 2 3"]), flat,
            hop + 4 * n / BW)
# Two ranks of one node use the within-node link; a message leaving the node pays the
# software latency first.
two_per_node = platform("two_per_node", ranks_per_node=2, software=5e-6)
expect_time("two ranks of one node", schedule("local", 2, lambda r: [f"x 0 1 {1 - r} {n} 1 {1 - r}"], 2),
            two_per_node, WITHIN_LAT + n / WITHIN_BW)
expect_time("a message leaving the node pays the software latency",
            schedule("remote", 4, lambda r: [f"x 0 1 {r ^ 2} {n} 1 {r ^ 2}"], 2), two_per_node,
            5e-6 + hop + 2 * n / BW)

# A halo exchange overlapped with a layer's interior ("xo"): the step takes the longer of the
# two, not their sum.
expect_time("an overlapped exchange hides behind its compute",
            schedule("xo_hidden", 2, lambda r: [f"xo 0 1 1 {1 - r} {n} 1 {1 - r}"]), flat, 1.0)
expect_time("an overlapped exchange longer than its compute takes the message's time",
            schedule("xo_long", 2, lambda r: [f"xo 0 0.001 1 {1 - r} {n} 1 {1 - r}"]), flat, hop + n / BW)

# Refusals, each naming the problem.
good = schedule("good", 2, lambda r: [f"x 0 1 {1 - r} 100 1 {1 - r}"])
expect_error("a platform with an unknown key", good, platform("typo", bandwith=1), "typo.json: bandwith: unknown key")
expect_error("a platform without links", good,
             platform("nolink", link={"latency": 1e-6}), "link.bandwidth: missing")
expect_error("an unknown topology", good, platform("ring", topology={"kind": "ring"}), 'unknown topology "ring"')
expect_error("more ranks than the platform holds", schedule("big", 20, lambda r: []), flat,
             "has 20 ranks, but")
expect_error("ranks per node that differ from the plan's", schedule("rpn", 2, lambda r: [], 2), flat,
             "planned with 2 rank(s) per node")
expect_error("a schedule cut short", schedule("cut", 2, lambda r: [], end=False), flat, "ends without its 'end' line")
expect_error("a send nobody receives", schedule("unmatched", 2, lambda r: ["x 0 1 1 100 0"] if r == 0 else []), flat,
             "rank 0 sends to rank 1 1 time(s) in exchanges, but rank 1 receives from it 0 time(s)")
expect_error("a rank outside its own group", schedule("outside", 2, lambda r: ["ar 0 0 1 1 100"]), flat,
             "rank 1 is not in the group of its own 'ar'")
expect_error("a collective only half the group joins",
             schedule("half", 4, lambda r: [f"ar 0 0 1 4 {n}"] if r < 2 else []), flat,
             "the replay stopped with 2 rank(s) waiting")
expect_error("an unknown operation", schedule("op", 1, lambda r: ["sleep 0 1"]), flat, "unknown operation 'sleep'")
expect_error("an overlapped exchange without its seconds", schedule("xo_short", 2, lambda r: [f"xo 0 1 {1 - r} 100"]),
             flat, "exchange: expected 'xo LAYER SECONDS SENDS")

shutil.rmtree(work)
if failures:
    print("\n".join(["FAILED:"] + failures))
    sys.exit(1)
print("all replays took their alpha-beta times, and every bad input was refused by name")
