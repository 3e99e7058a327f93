"""The runs of perf/ffn.sh: a flood-filling network (examples/ffn/ffn_cells.json) trained on one rank and
data-parallel on two, each flood-filling the held-out volumes; the U-Net of examples/ffn/unet_cells48.json
trained on the same volumes, whose thresholded interior map's connected components are the baseline; and the
components of the true interior with a little noise, an upper reference. Prints a table and, last,
`ffn_vi=… components_vi=… vi_2ranks_vs_1=… throughput_per_rank_2vs1=…`."""
import argparse
import copy
import json
import os
import subprocess
import time

FFN = "examples/ffn/ffn_cells.json"
UNET = "examples/ffn/unet_cells48.json"
THRESHOLDS = (0.5, 0.6, 0.7, 0.8, 0.9)


def threads_env(threads):
    """The environment of a tessera process with `threads` OpenMP threads that sleep when idle."""
    return dict(os.environ, OMP_NUM_THREADS=str(threads), OMP_PROC_BIND="false", OMP_WAIT_POLICY="passive")


def tessera_run(command, out_path, threads, ranks=1):
    """Runs a tessera command (under mpirun for ranks > 1) with `threads` OpenMP threads per rank."""
    if ranks > 1:
        command = ["mpirun", "-np", str(ranks), "--bind-to", "none"] + command
    start = time.monotonic()
    with open(out_path, "w") as out:
        subprocess.run(command, check=True, stdout=out, stderr=subprocess.STDOUT, env=threads_env(threads))
    return time.monotonic() - start


def json_output(command, threads):
    """The JSON object a tessera command prints last."""
    out = subprocess.run(command, check=True, capture_output=True, text=True, env=threads_env(threads)).stdout
    return json.loads(out.strip().splitlines()[-1])


def with_data(config, cells):
    """`config` reading the volumes of `cells` (a datagen cells folder)."""
    c = copy.deepcopy(config)
    c["data"]["sample_list"] = os.path.join(cells, "train.txt")
    c["data"]["validation"]["sample_list"] = os.path.join(cells, "validation.txt")
    return c


def train(a, config, name, ranks, threads, extra=()):
    """Trains `config`; returns (checkpoint, end record, seconds)."""
    path = os.path.join(a.work, name + ".json")
    with open(path, "w") as f:
        json.dump(config, f, indent=1)
    log, checkpoint = os.path.join(a.work, name + ".jsonl"), os.path.join(a.work, name + ".ckpt")
    seconds = tessera_run([a.tessera, "train", path, "--metrics", log, "--checkpoint", checkpoint, "--no-progress",
                           *extra], os.path.join(a.work, name + ".out"), threads, ranks)
    with open(log) as f:
        end = [json.loads(line) for line in f if '"end"' in line][-1]
    return path, checkpoint, end, seconds


def ffn_quality(a, config_path, checkpoint, volumes):
    """Mean scores of flood-filling every held-out volume."""
    results = [json_output([a.tessera, "ffn", "segment", config_path, "--checkpoint", checkpoint, "--volume", v,
                            "--min-voxels", str(a.min_voxels), "--json"], a.threads) for v in volumes]
    keys = ("vi", "vi_split", "vi_merge", "rand_error", "seconds")
    return {k: sum(r[k] for r in results) / len(results) for k in keys}


def components_quality(a, unet_path, checkpoint, volumes):
    """Mean scores of the U-Net's thresholded components at each threshold; the best threshold's."""
    per_threshold = {t: [] for t in THRESHOLDS}
    for k, v in enumerate(volumes):
        predicted = os.path.join(a.work, f"unet_prediction{k}.h5")
        tessera_run([a.tessera, "predict", unet_path, "--checkpoint", checkpoint, "--input", v, "--output", predicted],
                    os.path.join(a.work, f"predict{k}.out"), a.threads)
        for t in THRESHOLDS:
            per_threshold[t].append(json_output([a.tessera, "score", v, "--components", predicted, "--threshold",
                                                 str(t), "--min-voxels", str(a.min_voxels), "--json"], a.threads))
    means = {t: {k: sum(r[k] for r in rs) / len(rs) for k in ("vi", "vi_split", "vi_merge", "rand_error")}
             for t, rs in per_threshold.items()}
    best = min(THRESHOLDS, key=lambda t: means[t]["vi"])
    return best, means


def noisy_truth_quality(a, volumes):
    results = [json_output([a.tessera, "score", v, "--noisy-truth", str(a.noise), "--min-voxels", str(a.min_voxels),
                            "--json"], a.threads) for v in volumes]
    return {k: sum(r[k] for r in results) / len(results) for k in ("vi", "vi_split", "vi_merge", "rand_error")}


def row(name, q, seconds="", rate=""):
    print(f"| {name} | {q['vi']:.3f} | {q['vi_split']:.3f} | {q['vi_merge']:.3f} | {q['rand_error']:.3f} | "
          f"{seconds} | {rate} |")


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--tessera", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--steps", type=int, default=10000)
    p.add_argument("--rate-steps", type=int, default=400)
    p.add_argument("--min-voxels", type=int, default=50)
    p.add_argument("--noise", type=float, default=0.02)
    a = p.parse_args()
    cells = os.path.join(a.work, "cells48")
    tessera_run([a.tessera, "datagen", "cells", "--output", cells, "--size", "48", "--samples", "32",
                 "--validation-samples", "4", "--no-progress"], os.path.join(a.work, "datagen.out"), a.threads)
    with open(os.path.join(cells, "validation.txt")) as f:
        volumes = [os.path.join(cells, line.strip()) for line in f if line.strip() and not line.startswith("#")]
    with open(FFN) as f:
        ffn = with_data(json.load(f), cells)
    with open(UNET) as f:
        unet = with_data(json.load(f), cells)

    unet_path, unet_ckpt, _, unet_seconds = train(a, unet, "unet", 1, a.threads)
    threshold, components = components_quality(a, unet_path, unet_ckpt, volumes)
    noisy = noisy_truth_quality(a, volumes)
    # Quality: the FFN on one rank with all the threads for --steps steps of 8 FOVs, and on two
    # ranks (one thread each) with 8 FOVs per rank (a global batch of 16) and the config's
    # square-root learning-rate scaling, as Dong et al. scale FFN training, for half the steps:
    # the same FOVs in all, half the steps. Throughput per rank: the 2-rank run's against a
    # short 1-rank run on one thread, so that each rank has one core in both.
    steps1 = ["--max-steps", str(a.steps), "--epochs", "1000"]
    path1, ckpt1, end1, seconds1 = train(a, ffn, "ffn1", 1, a.threads, steps1)
    _, _, rate1, _ = train(a, ffn, "ffn1_one_thread", 1, 1, ["--max-steps", str(a.rate_steps), "--epochs", "1000"])
    ffn2 = copy.deepcopy(ffn)
    ffn2["training"]["batch_size"] = 2 * ffn["training"]["batch_size"]
    steps2 = ["--max-steps", str(a.steps // 2), "--epochs", "1000"]
    path2, ckpt2, end2, seconds2 = train(a, ffn2, "ffn2", 2, 1, steps2)
    q1, q2 = ffn_quality(a, path1, ckpt1, volumes), ffn_quality(a, path2, ckpt2, volumes)
    per_rank1, per_rank2 = rate1["samples_per_s"], end2["samples_per_s"] / 2

    print(f"{len(volumes)} held-out 48^3 volumes; mean over them; objects under {a.min_voxels} voxels dropped")
    print("| segmentation | VI | VI split | VI merge | adapted Rand error | training s | FOVs/s per rank |")
    print("|---|---|---|---|---|---|---|")
    row(f"FFN, 1 rank ({a.threads} threads), {a.steps} steps of 8", q1, f"{seconds1:.0f}",
        f"{end1['samples_per_s']:.1f} ({per_rank1:.1f} on 1 thread)")
    row(f"FFN, 2 ranks (1 thread each), {a.steps // 2} steps of 16, sqrt lr", q2, f"{seconds2:.0f}", f"{per_rank2:.1f}")
    row(f"U-Net components (threshold {threshold})", components[threshold], f"{unet_seconds:.0f}")
    for t in THRESHOLDS:
        if t != threshold:
            row(f"U-Net components (threshold {t})", components[t])
    row(f"true interior with {a.noise:g} of voxels flipped, components", noisy)
    print(f"ffn segment: {q1['seconds']:.1f} s per volume (1-rank network)")
    print(f"ffn_vi={q1['vi']:.3f} components_vi={components[threshold]['vi']:.3f} "
          f"vi_2ranks_vs_1={q2['vi'] / q1['vi']:.3f} "
          f"throughput_per_rank_2vs1={per_rank2 / per_rank1:.3f}")


if __name__ == "__main__":
    main()
