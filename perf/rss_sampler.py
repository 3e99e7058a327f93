#!/usr/bin/env python3
"""Samples the resident memory of a running `tessera train` (every rank, when launched with
mpirun) against the step it has reached, until the launcher exits; then fits RSS against step
after the warm-up and prints the growth per 1,000 steps of the rank that grows most:
    rss_growth_mb_per_1k_steps=<MB> steps=<last step> rss_mb=<first>..<last> samples=<n>
Used by perf/soak.sh."""
import argparse
import json
import os
import time


def children(pid):
    """All descendants of pid (mpirun -> orted/prted -> ranks)."""
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/task/{p}/children") as f:
                kids = [int(k) for k in f.read().split()]
        except OSError:
            kids = []
        found += kids
        todo += kids
    return found


def rss_mb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return None


def name(pid):
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return ""


def last_step(path, state):
    """The highest step in the metrics log, reading only what was appended since last time."""
    try:
        with open(path) as f:
            f.seek(state.get("offset", 0))
            data = f.read()
    except OSError:
        return state.get("step", 0)
    complete = data[: data.rfind("\n") + 1]
    state["offset"] = state.get("offset", 0) + len(complete)
    for line in complete.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if "step" in record:
            state["step"] = max(state.get("step", 0), int(record["step"]))
    return state.get("step", 0)


def slope(points):
    """Least-squares slope of (x, y) points."""
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    return sum((x - mx) * (y - my) for x, y in points) / sxx if sxx > 0 else 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--launcher", type=int, required=True)
    ap.add_argument("--metrics", required=True)
    ap.add_argument("--ranks", type=int, default=1)
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--interval", type=float, default=0.5)
    args = ap.parse_args()

    state, series = {}, {}  # series: pid -> [(step, rss)]
    while os.path.exists(f"/proc/{args.launcher}") and name(args.launcher) not in ("", "<defunct>"):
        pids = [args.launcher] if args.ranks == 1 else [p for p in children(args.launcher) if name(p) == "tessera"]
        step = last_step(args.metrics, state)
        for p in pids:
            r = rss_mb(p)
            if r is not None and step > 0:
                series.setdefault(p, []).append((step, r))
        time.sleep(args.interval)
        try:  # a finished launcher is a zombie until soak.sh waits for it
            with open(f"/proc/{args.launcher}/stat") as f:
                if f.read().split()[2] == "Z":
                    break
        except OSError:
            break

    warm = max(500, args.steps // 10)
    growth, first, last, samples = None, 0.0, 0.0, 0
    for points in series.values():
        after = [(s, r) for s, r in points if s >= warm]
        if len(after) < 3:
            continue
        g = slope(after) * 1000.0
        if growth is None or g > growth:
            growth, first, last, samples = g, after[0][1], after[-1][1], len(after)
    if growth is None:
        raise SystemExit("rss_sampler: too few samples after the warm-up (run shorter than %d steps?)" % warm)
    print("rss_growth_mb_per_1k_steps=%.3f steps=%d rss_mb=%.1f..%.1f samples=%d"
          % (growth, state.get("step", 0), first, last, samples))


if __name__ == "__main__":
    main()
