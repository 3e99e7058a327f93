"""The series of perf/scale_sim.sh: plans on published profiles, replayed by tessera-sim on the
machines' platforms; the table, an SVG of the efficiencies, and the last line."""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys

SERIES = [
    # name, config, machine, kind, points as (ranks, global batch)
    ("cosmoflow512-weak", "examples/cosmoflow/cosmoflow_512.json", "sierra", "weak",
     [(16, 2), (64, 8), (256, 32), (1024, 128), (2048, 256), (8192, 1024)]),
    ("cosmoflow128-strong", "examples/cosmoflow/cosmoflow_128.json", "sierra", "strong",
     [(256, 256), (512, 256), (1024, 256), (2048, 256)]),
    ("cosmoflow128-data", "examples/cosmoflow/cosmoflow_128.json", "sierra", "weak",
     [(4, 4), (16, 16), (64, 64), (256, 256), (1024, 1024), (2048, 2048), (8192, 8192)]),
    ("unet256-weak", "perf/unet3d_small_256.json", "sierra", "weak",
     [(16, 2), (64, 8), (256, 32), (1024, 128), (2048, 256)]),
    ("unet256-strong", "perf/unet3d_small_256.json", "sierra", "strong",
     [(256, 64), (512, 64), (1024, 64), (2048, 64)]),
    ("ffn-data", "examples/ffn/ffn_cells.json", "theta", "weak",
     [(1, 1), (16, 16), (128, 128), (512, 512), (2048, 2048), (4096, 4096)]),
]
# LTFB: populations of trainers of 16 GPUs each (the MLPerf CosmoFlow network at 128^3, one
# sample per GPU), a round of training.ltfb's default 10 steps and a pairwise tournament.
LTFB = ("ltfb-cosmoflow128", "examples/cosmoflow/cosmoflow_128.json", "sierra", 16, 16, [1, 4, 16, 64])


def simulate(tessera, out, name, config, machine, ranks, batch, trainers=1):
    """One point planned and replayed; with TRAINERS > 1, RANKS is each trainer's and the point
    is the population's (ranks: all of them; simulated: its round per training step)."""
    base = os.path.join(out, f"{name}-{ranks * trainers}")
    cmd = [tessera, "plan", config, "--ranks", str(ranks), "--batch-size", str(batch),
           "--machine", f"share/machines/{machine}.json", "--no-measure",
           "--simulate", f"share/platforms/{machine}.json", "--json", base + ".json"]
    if trainers > 1:
        cmd += ["--trainers", str(trainers)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    open(base + ".log", "w").write(p.stdout + p.stderr)
    if p.returncode == 3:
        sys.exit(f"scale_sim: no layout of {name} fits {ranks} ranks at batch {batch} (see {base}.log)")
    if p.returncode != 0:
        sys.exit(f"scale_sim: {' '.join(cmd)} failed:\n{p.stdout[-2000:]}{p.stderr[-2000:]}")
    plan = json.load(open(base + ".json"))
    sim = plan["simulation"]
    return {"ranks": ranks * trainers, "batch": batch * trainers, "planned": plan["chosen"]["step_time_s"],
            "simulated": sim["step_seconds"], "replay_wall": sim["simulation_wall_seconds"]}


def ltfb_series(a):
    """The population series; its efficiency is each trainer's throughput against one trainer
    alone (the planner plans one trainer, so its line is flat)."""
    name, config, machine, per_trainer, batch, counts = LTFB
    if a.quick:
        counts = [c for c in counts if c * per_trainer <= 256]
    done = []
    for k in counts:
        done.append(simulate(a.tessera, a.out, name, config, machine, per_trainer, batch, k))
        print(f"{name}: {k} trainers of {per_trainer} ranks simulated", file=sys.stderr, flush=True)
    r = {"name": name, "machine": machine, "kind": "weak", "points": done}
    r["planned_eff"] = efficiencies(done, "weak", "planned")
    r["simulated_eff"] = efficiencies(done, "weak", "simulated")
    return r


def print_ltfb(r):
    """The population table; returns ltfb_64_speedup (64 trainers' samples/s over one's)."""
    print(f"{'population':20s} {'trainers':>8s} {'ranks':>6s} {'s/step':>9s} {'speedup':>8s} {'efficiency':>10s} "
          f"{'replay s':>9s}")
    one = r["points"][0]["simulated"]
    speedup = "not_run"
    for p, e in zip(r["points"], r["simulated_eff"]):
        k = p["ranks"] // r["points"][0]["ranks"]
        print(f"{r['name']:20s} {k:8d} {p['ranks']:6d} {p['simulated']:9.4f} {k * one / p['simulated']:8.2f} "
              f"{e:10.3f} {p['replay_wall']:9.2f}")
        if k == 64:
            speedup = f"{k * one / p['simulated']:.1f}"
    return speedup


def efficiencies(points, kind, key):
    first = points[0]
    if kind == "weak":
        return [first[key] / p[key] for p in points]
    return [first[key] * first["ranks"] / (p[key] * p["ranks"]) for p in points]


def svg(results, path):
    w, h, left, top, right, bottom = 720, 420, 60, 30, 200, 50
    ranks = [p["ranks"] for r in results for p in r["points"]]
    lo, hi = math.log2(min(ranks)), math.log2(max(ranks))
    x = lambda n: left + (math.log2(n) - lo) / max(hi - lo, 1) * (w - left - right)  # noqa: E731
    y = lambda e: top + (1.2 - min(e, 1.2)) / 1.2 * (h - top - bottom)  # noqa: E731
    colours = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2"]
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="100%" font-family="sans-serif" '
           f'font-size="12">', f'<rect width="{w}" height="{h}" fill="white"/>']
    for e in (0, 0.2, 0.4, 0.6, 0.8, 1.0, 1.2):
        out.append(f'<line x1="{left}" x2="{w - right}" y1="{y(e):.1f}" y2="{y(e):.1f}" stroke="#ddd"/>'
                   f'<text x="{left - 8}" y="{y(e) + 4:.1f}" text-anchor="end">{e:.1f}</text>')
    for k in range(int(lo), int(hi) + 1):
        out.append(f'<text x="{x(2 ** k):.1f}" y="{h - bottom + 18}" text-anchor="middle">{2 ** k}</text>')
    out.append(f'<text x="{(left + w - right) / 2}" y="{h - 10}" text-anchor="middle">'
               'ranks (GPUs; Theta: nodes)</text>')
    out.append(f'<text x="14" y="{(top + h - bottom) / 2}" transform="rotate(-90 14 {(top + h - bottom) / 2})" '
               f'text-anchor="middle">scaling efficiency</text>')
    for i, r in enumerate(results):
        c = colours[i % len(colours)]
        for key, dash in (("simulated", ""), ("planned", ' stroke-dasharray="5 4"')):
            pts = " ".join(f"{x(p['ranks']):.1f},{y(e):.1f}" for p, e in zip(r["points"], r[key + "_eff"]))
            out.append(f'<polyline points="{pts}" fill="none" stroke="{c}" stroke-width="2"{dash}/>')
        ly = top + 10 + 34 * i
        out.append(f'<line x1="{w - right + 12}" x2="{w - right + 36}" y1="{ly}" y2="{ly}" stroke="{c}" '
                   f'stroke-width="2"/><text x="{w - right + 42}" y="{ly + 4}">{r["name"]}</text>'
                   f'<text x="{w - right + 42}" y="{ly + 18}" fill="#666">dashed: planner</text>')
    out.append("</svg>")
    open(path, "w").write("\n".join(out) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tessera")
    ap.add_argument("out")
    ap.add_argument("--quick", action="store_true", help="points up to 256 ranks")
    a = ap.parse_args()
    results = []
    for name, config, machine, kind, points in SERIES:
        if a.quick:
            points = [p for p in points if p[0] <= 256]
        done = []
        for ranks, batch in points:
            done.append(simulate(a.tessera, a.out, name, config, machine, ranks, batch))
            print(f"{name}: {ranks} ranks simulated", file=sys.stderr, flush=True)
        r = {"name": name, "machine": machine, "kind": kind, "points": done}
        r["planned_eff"] = efficiencies(done, kind, "planned")
        r["simulated_eff"] = efficiencies(done, kind, "simulated")
        results.append(r)

    ltfb = ltfb_series(a)
    errors = []
    print(f"{'series':20s} {'machine':10s} {'ranks':>6s} {'batch':>6s} {'planned s':>10s} {'simulated s':>12s} "
          f"{'error':>6s} {'eff plan':>9s} {'eff sim':>8s} {'replay s':>9s}")
    for r in results:
        for p, ep, es in zip(r["points"], r["planned_eff"], r["simulated_eff"]):
            err = abs(p["planned"] - p["simulated"]) / p["simulated"]
            errors.append(err)
            print(f"{r['name']:20s} {r['machine']:10s} {p['ranks']:6d} {p['batch']:6d} {p['planned']:10.4f} "
                  f"{p['simulated']:12.4f} {err:6.3f} {ep:9.3f} {es:8.3f} {p['replay_wall']:9.2f}")
    speedup = print_ltfb(ltfb)
    svg(results + ([ltfb] if ltfb else []), os.path.join(a.out, "scale_sim.svg"))
    print(f"plot: {os.path.join(a.out, 'scale_sim.svg')}")

    def eff_at(name, ranks):
        r = next((r for r in results if r["name"] == name), None)
        at = [e for p, e in zip(r["points"], r["simulated_eff"]) if p["ranks"] == ranks] if r else []
        return f"{at[0]:.3f}" if at else "not_run"

    def replay(ranks):
        walls = [p["replay_wall"] for r in results for p in r["points"] if p["ranks"] == ranks]
        return f"{max(walls):.2f}" if walls else "not_run"

    print(f"planner_vs_sim_error_median={statistics.median(errors):.3f} planner_vs_sim_error_max={max(errors):.3f} "
          f"ffn_2048_efficiency={eff_at('ffn-data', 2048)} "
          f"cosmoflow_hybrid_2048_efficiency={eff_at('cosmoflow512-weak', 2048)} "
          f"ltfb_64_speedup={speedup} "
          f"replay_64_seconds={replay(64)} replay_2048_seconds={replay(2048)} replay_8192_seconds={replay(8192)}")


if __name__ == "__main__":
    main()
