"""The runs of perf/bcpnn.sh: the BCPNN example on one and two ranks, in bf16 and with bf16 traces, and the same
read-out on raw pixels, each a `tessera train` with a metrics log; prints a table and, last,
`test_accuracy=… raw_readout_accuracy=… epoch_seconds=… ranks2_vs_1=… [bf16_accuracy=… bf16_traces_accuracy=…]`."""
import argparse
import copy
import json
import os
import subprocess
import sys

EXAMPLE = "examples/bcpnn/bcpnn_fashion_mnist.json"


def read_log(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def run(tessera, config, name, work, ranks, threads, extra=()):
    """Trains `config` on `ranks` ranks; returns its metrics log records."""
    config_path = os.path.join(work, name + ".json")
    log_path = os.path.join(work, name + ".jsonl")
    with open(config_path, "w") as f:
        json.dump(config, f, indent=1)
    if os.path.exists(log_path):
        os.remove(log_path)
    command = [tessera, "train", config_path, "--metrics", log_path, "--no-progress", *extra]
    if ranks > 1:
        command = ["mpirun", "-np", str(ranks), "--bind-to", "none"] + command
    env = dict(os.environ, OMP_NUM_THREADS=str(max(1, threads // ranks)), OMP_PROC_BIND="false")
    with open(os.path.join(work, name + ".out"), "w") as out:
        subprocess.run(command, check=True, stdout=out, stderr=subprocess.STDOUT, env=env)
    return read_log(log_path)


def summary(records):
    """Final test accuracy (%), seconds of the first epoch, samples/s over the run."""
    start = next(r for r in records if r["event"] == "start")
    validations = [r for r in records if r["event"] == "validation"]
    first_epoch = [r for r in records if r["event"] == "train" and r["step"] == start["steps_per_epoch"]]
    end = next(r for r in records if r["event"] == "end")
    return {
        "accuracy": 100.0 * validations[-1]["accuracy"],
        "epoch_seconds": first_epoch[0]["elapsed_s"] if first_epoch else float("nan"),
        "samples_per_s": end["samples_per_s"],
    }


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--tessera", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--local-epochs", type=int)
    p.add_argument("--readout-epochs", type=int)
    p.add_argument("--no-bf16", action="store_true")
    a = p.parse_args()
    with open(EXAMPLE) as f:
        example = json.load(f)
    local = a.local_epochs if a.local_epochs is not None else example["local_learning"]["epochs"]
    readout = (a.readout_epochs if a.readout_epochs is not None
               else example["training"]["epochs"] - example["local_learning"]["epochs"])
    bcpnn = copy.deepcopy(example)
    bcpnn["local_learning"]["epochs"] = local
    bcpnn["training"]["epochs"] = local + readout
    raw = copy.deepcopy(example)
    del raw["local_learning"]
    readout_layer = example["model"]["layers"][-1]
    raw["model"]["layers"] = [{"name": "flat", "type": "flatten"}, readout_layer]
    raw["training"]["epochs"] = readout

    rows = {}
    rows["bcpnn, 1 rank"] = summary(run(a.tessera, bcpnn, "bcpnn1", a.work, 1, a.threads))
    rows["raw pixels, 1 rank"] = summary(run(a.tessera, raw, "raw", a.work, 1, a.threads))
    rows["bcpnn, 2 ranks"] = summary(run(a.tessera, bcpnn, "bcpnn2", a.work, 2, a.threads))
    if not a.no_bf16:
        rows["bcpnn bf16, 1 rank"] = summary(
            run(a.tessera, bcpnn, "bcpnn_bf16", a.work, 1, a.threads, ["--precision", "bf16"]))
        traces = copy.deepcopy(bcpnn)
        for layer in traces["model"]["layers"]:
            if layer["type"] == "bcpnn":
                layer["trace_precision"] = "bf16"
        rows["bf16 + bf16 traces"] = summary(
            run(a.tessera, traces, "bcpnn_bf16_traces", a.work, 1, a.threads, ["--precision", "bf16"]))

    print(f"{local} local-learning epoch(s), {readout} read-out epoch(s), batch {example['training']['batch_size']}")
    print(f"{'run':<22} {'test accuracy %':>16} {'first epoch s':>14} {'samples/s':>10}")
    for name, r in rows.items():
        print(f"{name:<22} {r['accuracy']:>16.2f} {r['epoch_seconds']:>14.1f} {r['samples_per_s']:>10.0f}")
    one = rows["bcpnn, 1 rank"]
    line = (f"test_accuracy={one['accuracy']:.2f} raw_readout_accuracy={rows['raw pixels, 1 rank']['accuracy']:.2f} "
            f"epoch_seconds={one['epoch_seconds']:.1f} "
            f"ranks2_vs_1={rows['bcpnn, 2 ranks']['accuracy'] / one['accuracy']:.4f}")
    if "bcpnn bf16, 1 rank" in rows:
        line += (f" bf16_accuracy={rows['bcpnn bf16, 1 rank']['accuracy']:.2f}"
                 f" bf16_traces_accuracy={rows['bf16 + bf16 traces']['accuracy']:.2f}")
    print(line)


if __name__ == "__main__":
    sys.exit(main())
