#!/usr/bin/env python3
"""Where a training step goes on both sides: Tessera's per-layer profile (`tessera train
--profile --metrics LOG`) beside PyTorch's (perf/torch_layer_times.py, written by
`torch_gpu.py --layers`), one row per Tessera layer (or fused group, e.g. conv1+pool1, whose
PyTorch time is the sum of its members) and pass, in the config's order.

  layer_table.py CONFIG METRICS TORCH_LAYERS [--json OUT] [--top N]

Each row: Tessera ms, PyTorch ms, their difference and ratio (t/p: above 1, Tessera is
slower). "rest" is each step's time that no layer holds (Tessera: data, loss, optimizer,
gradient sums, fences; PyTorch: loss, optimizer, torch.cat, autocast's casts, loss scaling).
Then the N rows (default 5) where Tessera is slower by the most, largest first. Both sides'
figures are per step: Tessera's are means (the profile keeps each region's total and calls over
the profiled steps, warm-up left out), PyTorch's medians; with few steps, one slow step shows
on Tessera's side only. Tessera's profile fences every region, so its step is a
little longer than an unprofiled one; PyTorch's hooks record events only (on a CPU, read the
clock) but make in-place activations out-of-place.
Last line: tessera_step_ms=… torch_step_ms=… layers_tessera_ms=… layers_torch_ms=…
rest_tessera_ms=… rest_torch_ms=… largest_gap=LAYER/PASS:+X.XXms
"""
import argparse
import json


def profile_of(metrics):
    events = [json.loads(line) for line in open(metrics) if line.strip()]
    profiles = [e for e in events if e.get("event") == "profile"]
    if not profiles:
        raise SystemExit(f"layer_table.py: {metrics} has no profile record (train with --profile)")
    regions = profiles[-1]["regions"]
    return {name: r["seconds"] / r["calls"] for name, r in regions.items() if r["calls"]}


def groups_in_order(config, regions):
    """Tessera's layer groups ('conv1+pool1', 'act1', ...) in the config's order of their first member."""
    order = {layer["name"]: i for i, layer in enumerate(config["model"]["layers"])}
    groups = {key.split("/", 1)[1] for key in regions if key.startswith(("forward/", "backward/"))}
    unknown = [g for g in groups if any(m not in order for m in g.split("+"))]
    if unknown:
        raise SystemExit(f"layer_table.py: profile regions name layers the config lacks: {', '.join(sorted(unknown))}")
    return sorted(groups, key=lambda g: min(order[m] for m in g.split("+")))


def rows_of(config, regions, torch_layers):
    torch_by_name = {layer["name"]: layer for layer in torch_layers["layers"]}
    rows = []
    for group in groups_in_order(config, regions):
        members = group.split("+")
        for phase in ("forward", "backward"):
            tessera = regions.get(f"{phase}/{group}")
            times = [torch_by_name[m][phase] for m in members if m in torch_by_name]
            torch = sum(t for t in times if t is not None) if times else None
            if tessera is None and not torch:
                continue
            rows.append({"layer": group, "pass": phase, "tessera": tessera, "torch": torch})
    return rows


def fmt_ms(seconds):
    return f"{seconds * 1e3:9.3f}" if seconds is not None else f"{'-':>9}"


def print_table(rows, rest, steps, top):
    print(f"{'layer':28s} {'pass':8s} {'tessera_ms':>10s} {'torch_ms':>9s} {'diff_ms':>9s} {'t/p':>6s}")
    for r in rows + rest:
        t, p = r["tessera"], r["torch"]
        diff = f"{(t - p) * 1e3:+9.3f}" if t is not None and p is not None else f"{'':9s}"
        ratio = f"{t / p:6.2f}" if t is not None and p else f"{'':6s}"
        print(f"{r['layer']:28s} {r['pass']:8s} {fmt_ms(t):>10s} {fmt_ms(p)} {diff} {ratio}")
    print(f"{'step':28s} {'':8s} {fmt_ms(steps[0]):>10s} {fmt_ms(steps[1])}")
    both = [r for r in rows + rest if r["tessera"] is not None and r["torch"] is not None]
    gaps = [r for r in sorted(both, key=lambda r: r["tessera"] - r["torch"], reverse=True)
            if r["tessera"] > r["torch"]][:top]
    print(f"where the gap is (Tessera minus PyTorch, largest {len(gaps)}):" if gaps else
          "where the gap is: nowhere, Tessera is as fast or faster in every row")
    for r in gaps:
        share = (r["tessera"] - r["torch"]) / (steps[0] - steps[1]) if steps[0] > steps[1] else None
        of_gap = f" ({share:.0%} of the step's gap)" if share is not None else ""
        print(f"  {r['layer']}/{r['pass']}: {(r['tessera'] - r['torch']) * 1e3:+.3f} ms{of_gap}")
    return gaps


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("config")
    p.add_argument("metrics")
    p.add_argument("torch_layers")
    p.add_argument("--json", metavar="OUT")
    p.add_argument("--top", type=int, default=5)
    args = p.parse_args()
    config = json.load(open(args.config))
    regions = profile_of(args.metrics)
    torch_layers = json.load(open(args.torch_layers))
    rows = rows_of(config, regions, torch_layers)
    if "step" not in regions:
        raise SystemExit(f"layer_table.py: {args.metrics}'s profile has no 'step' region")
    steps = (regions["step"], torch_layers["step_seconds"])
    sums = [sum(r[side] for r in rows if r[side] is not None) for side in ("tessera", "torch")]
    rest = [{"layer": "rest", "pass": "", "tessera": steps[0] - sums[0], "torch": steps[1] - sums[1]}]
    gaps = print_table(rows, rest, steps, args.top)
    if args.json:
        json.dump({"rows": rows + rest, "tessera_step": steps[0], "torch_step": steps[1],
                   "torch": {k: v for k, v in torch_layers.items() if k != "layers"}}, open(args.json, "w"), indent=1)
    largest = "none"
    if gaps:
        g = gaps[0]
        largest = f"{g['layer']}/{g['pass']}:{(g['tessera'] - g['torch']) * 1e3:+.2f}ms"
    print(f"tessera_step_ms={steps[0] * 1e3:.2f} torch_step_ms={steps[1] * 1e3:.2f} "
          f"layers_tessera_ms={sums[0] * 1e3:.2f} layers_torch_ms={sums[1] * 1e3:.2f} "
          f"rest_tessera_ms={rest[0]['tessera'] * 1e3:.2f} rest_torch_ms={rest[0]['torch'] * 1e3:.2f} "
          f"largest_gap={largest}")


if __name__ == "__main__":
    main()
