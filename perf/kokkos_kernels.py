#!/usr/bin/env python3
"""The tables and the last line of perf/kokkos_kernels.sh, from the `tessera bench` results it wrote.

Efficiency of an op direction: for a memory-bound op (the roofline's verdict at the measured
peak) the bytes it must move over its time, against the all-core triad bandwidth; for a
convolution its FLOPs over its time against the all-core fp32 FMA peak (the Kokkos backend
computes bf16 convolutions in fp32 arithmetic, so fp32's peak is their limit too). The
memory-bound figures leave out latency-bound ops, those whose bound at the limits is under
20 us (the dense head's 4x64 products, the last pools of cosmoflow-small), as `tessera bench
report` does: a launch costs them more than their bytes.

Usage: perf/kokkos_kernels.py --out DIR [--bf16-instructions 0|1] [--pp "pp_app=..."]
"""
import argparse
import json
import pathlib
import re
import statistics

MODELS = [("cosmoflow_small", "cosmoflow"), ("unet3d_small", "unet")]
CONV = ("conv_forward", "conv_backward_data", "conv_backward_weights")


def load(path):
    return json.load(open(path)) if path.is_file() else None


def peaks(out):
    p = load(out / "peak.json")["peak"]
    return p["triad_gbs_all_cores"], p["fma_gflops_all_cores"]


def efficiency(op, triad, fma):
    if not op["supported"] or op["seconds"] <= 0:
        return None
    if op["op_class"] in CONV or op["op_class"].startswith("conv_transpose"):
        return op["flops"] / op["seconds"] / 1e9 / fma
    return op["bytes"] / op["seconds"] / 1e9 / triad


def kokkos_ops(result):
    return [o for o in result["ops"] if o["backend"] == "kokkos"] if result else []


def class_table(out, triad, fma, rows):
    """Per op class, the time-weighted efficiency after (and before), fp32 and bf16."""
    lines = ["op class            precision  after   before   (time-weighted over both models' ops)"]
    for precision in ("fp32", "bf16"):
        by_class = {}
        for label in ("after", "before"):
            for model, _ in MODELS:
                for o in kokkos_ops(load(out / f"{label}_{model}_{precision}.json")):
                    e = efficiency(o, triad, fma)
                    if e is None:
                        continue
                    c = by_class.setdefault(o["op_class"], {}).setdefault(label, [0.0, 0.0])
                    c[0] += o["seconds"] * e  # Σ limit time
                    c[1] += o["seconds"]
        for cls in sorted(by_class):
            cell = {k: (v[0] / v[1] if v[1] else None) for k, v in by_class[cls].items()}
            fmt = lambda x: f"{x:6.3f}" if x is not None else "     -"
            lines.append(f"{cls:22s} {precision:5s} {fmt(cell.get('after'))}  {fmt(cell.get('before'))}")
            rows.append((cls, precision, cell.get("after"), cell.get("before")))
    return lines


LATENCY_BOUND_S = 20e-6


def memory_bound(out, triad, fma):
    """Every memory-bound Kokkos op direction after, both models, fp32 and bf16, whose bound at
    the limits is 20 us or more."""
    effs = []
    for model, _ in MODELS:
        for precision in ("fp32", "bf16"):
            for o in kokkos_ops(load(out / f"after_{model}_{precision}.json")):
                if o.get("memory_bound") and o["op_class"] not in CONV and o["bytes"] / (triad * 1e9) >= LATENCY_BOUND_S:
                    e = efficiency(o, triad, fma)
                    if e is not None:
                        effs.append((e, f"{model} {precision} {o['layer']} {o['op_class']} {o['shape']}"))
    return sorted(effs)


def largest_convs(out, triad, fma, lines):
    worst = None
    for model, _ in MODELS:
        ops = [o for o in kokkos_ops(load(out / f"after_{model}_fp32.json")) if o["op_class"] in CONV and o["supported"]]
        if not ops:
            continue
        biggest = max(ops, key=lambda o: o["flops"])
        shape = biggest["shape"]
        cells = []
        for o in ops:
            if o["shape"] == shape and o["layer"] == biggest["layer"]:
                e = efficiency(o, triad, fma)
                cells.append(f"{o['op_class']} {e:.3f}")
                worst = e if worst is None else min(worst, e)
        lines.append(f"largest convolution, {model} {biggest['layer']} {shape}: " + ", ".join(cells))
    return worst


def steps(out, lines):
    figures = {}
    for model, short in MODELS:
        r = load(out / f"model_{model}_fp32.json")
        if not r:
            continue
        by = {m["backend"]: m for m in r["models"] if m["supported"]}
        if "kokkos" in by and "auto" in by:
            ratio = by["auto"]["step_seconds"] / by["kokkos"]["step_seconds"]
            figures[f"kokkos_step_vs_auto_{short}"] = ratio
            lines.append(f"{model}: step on kokkos {by['kokkos']['step_seconds']:.3f} s, on auto "
                         f"{by['auto']['step_seconds']:.3f} s (kokkos/auto speed {ratio:.3f}); architectural "
                         f"efficiency kokkos {by['kokkos']['arch_efficiency']:.3f}, auto {by['auto']['arch_efficiency']:.3f}")
            if short == "unet":
                figures["auto_step_arch_unet"] = by["auto"]["arch_efficiency"]
    return figures


def fused_pair_totals(fused_ops, apart_ops):
    """Seconds of every fused batch norm + activation pair, and of the same layers apart."""
    t_apart = {}
    for o in apart_ops:
        t_apart[o["layer"]] = t_apart.get(o["layer"], 0.0) + o["seconds"]
    pairs = [o for o in fused_ops if "+" in o["layer"] and o["op_class"].startswith("batch_norm")]
    total_fused = sum(o["seconds"] for o in pairs)
    total_apart = 0.0
    for name in {o["layer"] for o in pairs}:
        bn, act = name.split("+", 1)
        total_apart += t_apart.get(bn, 0.0) + t_apart.get(act, 0.0)
    return total_fused, total_apart


def fused_speedup(out, lines):
    """Apart over fused, summed over the alternating rounds (fused1, unfused1, fused2, ...)."""
    total_fused = total_apart = 0.0
    rounds = 0
    while True:
        f, a = out / f"fused{rounds + 1}_unet3d_small_fp32.json", out / f"unfused{rounds + 1}_unet3d_small_fp32.json"
        if not f.exists() or not a.exists():
            break
        tf, ta = fused_pair_totals(kokkos_ops(load(f)), kokkos_ops(load(a)))
        total_fused += tf
        total_apart += ta
        rounds += 1
    if rounds == 0 or total_fused <= 0:
        return None
    lines.append(f"unet3d_small batch norm + activation, forward and backward over every fused pair, mean of {rounds} "
                 f"alternating round(s): apart {total_apart * 1e3 / rounds:.1f} ms, fused {total_fused * 1e3 / rounds:.1f} ms")
    return total_apart / total_fused


def main():
    a = argparse.ArgumentParser()
    a.add_argument("--out", required=True)
    a.add_argument("--bf16-instructions", default="0")
    a.add_argument("--pp", default="")
    args = a.parse_args()
    out = pathlib.Path(args.out)
    triad, fma = peaks(out)
    lines = [f"limits: triad {triad:.1f} GB/s, fp32 FMA {fma:.1f} GFLOP/s (all cores)"]
    rows = []
    lines += class_table(out, triad, fma, rows)
    mb = memory_bound(out, triad, fma)
    if mb:
        lines.append(f"memory-bound Kokkos ops after (bound >= 20 us): {len(mb)}, median {statistics.median(e for e, _ in mb):.3f}, "
                     f"lowest {mb[0][0]:.3f} ({mb[0][1]})")
        for e, what in mb[:5]:
            lines.append(f"  {e:.3f} {what}")
    conv = largest_convs(out, triad, fma, lines)
    figures = steps(out, lines)
    speedup = fused_speedup(out, lines)
    pp = dict(re.findall(r"(\w+)=([^ ]+)", args.pp))
    pp_app = dict(kv.split(":") for kv in pp.get("pp_app", "").split(",") if ":" in kv)
    print("\n".join(lines))
    (out / "kokkos_kernels.txt").write_text("\n".join(lines) + "\n")
    fmt = lambda x: f"{x:.3f}" if isinstance(x, float) else (x or "n/a")
    last = {
        "kokkos_memory_bound_median": statistics.median(e for e, _ in mb) if mb else None,
        "kokkos_memory_bound_min": mb[0][0] if mb else None,
        "kokkos_conv_largest": conv,
        "kokkos_step_vs_auto_cosmoflow": figures.get("kokkos_step_vs_auto_cosmoflow"),
        "kokkos_step_vs_auto_unet": figures.get("kokkos_step_vs_auto_unet"),
        "auto_step_arch_unet": figures.get("auto_step_arch_unet"),
        "fused_bn_act_speedup": speedup,
        "pp_app_cosmoflow": float(pp_app["cosmoflow-small"]) if "cosmoflow-small" in pp_app else None,
        "pp_app_unet": float(pp_app["unet3d-small"]) if "unet3d-small" in pp_app else None,
    }
    print(" ".join(f"{k}={fmt(v)}" for k, v in last.items()))


if __name__ == "__main__":
    main()
