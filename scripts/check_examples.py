#!/usr/bin/env python3
"""Runs the README's example apps as their READMEs document them and checks what they claim.

For each app of the README's "Example apps" table it runs the commands of that app's README
(each command must appear verbatim in it, so the two cannot drift apart), reads the result the
run reached (the metrics log, `ffn segment --json`, the C++ example's own log), and checks it
against the figure the README's table states, within the tolerance the table states beside it
("0.957 ± 0.01"). Then it prints the table as the README should show it, with this run's
figures and times, so that the README's table can be this output.

Usage: scripts/check_examples.py [--only APP,...] [--work DIR] [--tessera PATH] [--list] [--check-docs]
  APP: unet3d, ffn, resnet, cosmoflow, bcpnn, cpp (default: all, in that order)
scripts/check_examples.sh builds what it needs first and then runs this.
Exit status 0 when every app ran and met its stated figure, 1 otherwise.
"""
import argparse
import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class AppFailed(Exception):
    """An app's command failed, or its result was missing."""


def last_records(path, *events):
    """The last record of each of `events` in a metrics log, read once."""
    last = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line:
                record = json.loads(line)
                last[record.get("event")] = record
    missing = [e for e in events if e not in last]
    if missing:
        raise AppFailed(f"{path} holds no '{missing[0]}' record")
    return [last[e] for e in events]


def minutes(seconds):
    seconds = round(seconds)
    return f"{seconds} s" if seconds < 120 else f"{seconds // 60} min {seconds % 60:02d} s"


# --- the apps -------------------------------------------------------------------------------------
# Each app: its README, the commands run in order (as that README writes them, with `tessera`
# standing for the program), and a function reading the result into named figures. `claim` names
# the figure the README's table states with a tolerance; `row` writes the table's result cell.

def unet3d_result(work):
    last, end = last_records(os.path.join(work, "runs", "unet3d.jsonl"), "validation", "end")
    return {"iou": last["foreground_iou"], "train_s": end["elapsed_s"]}


def ffn_result(work):
    vis = []
    for i in range(4):
        with open(os.path.join(work, f"ffn_segment_{i}.json"), encoding="utf-8") as f:
            vis.append(json.load(f)["vi"])
    (end,) = last_records(os.path.join(work, "runs", "ffn.jsonl"), "end")
    return {"vi": statistics.mean(vis), "train_s": end["elapsed_s"]}


def accuracy_result(log):
    def read(work):
        last, end = last_records(os.path.join(work, log), "validation", "end")
        figures = {"accuracy": 100 * last["accuracy"], "train_s": end["elapsed_s"]}
        if "top5" in last:
            figures["top5"] = 100 * last["top5"]
        return figures
    return read


def cosmoflow_result(work):
    last, end = last_records(os.path.join(work, "cosmoflow32.jsonl"), "validation", "end")
    return {"mae": last["mae"], "baseline_mae": last["baseline_mae"], "train_s": end["elapsed_s"]}


def cpp_result(work):
    (last,) = last_records(os.path.join(work, "cpp_example.jsonl"), "validation")
    return {"mse": last["loss"], "baseline_mse": last["baseline_loss"]}


FFN_SEGMENT = ("tessera ffn segment examples/ffn/ffn_cells.json --checkpoint runs/ffn.ckpt \\\n"
               "  --volume runs/cells48/validation/sample_000000.h5 --output runs/ffn_segmentation.h5")

APPS = [
    {
        "name": "unet3d", "readme": "examples/unet3d/README.md", "title": "3D U-Net",
        "learns": "membrane vs cell interior in EM-like volumes (`tessera datagen cells`), "
                  "per-voxel cross-entropy",
        "commands": [
            "build/default/tessera datagen cells --output runs/cells32 --size 32 --samples 256 "
            "--validation-samples 32",
            "build/default/tessera train examples/unet3d/unet3d_cells.json",
        ],
        # the documented train command, with a metrics log to read the result from
        "extra": {1: ["--metrics", "runs/unet3d.jsonl"]},
        "result": unet3d_result, "claim": "iou",
        "row": lambda f, tol: (f"foreground IoU {f['iou']:.3f} ± {tol} on 32 held-out 32³ volumes, "
                               f"trained in {minutes(f['train_s'])} (1 rank)"),
    },
    {
        "name": "ffn", "readme": "examples/ffn/README.md", "title": "Flood-filling network",
        "learns": "cells of EM-like volumes one object at a time (instance segmentation), the FOV "
                  "moved by the network's own predictions; data parallel",
        "commands": [
            "tessera datagen cells --output runs/cells48 --size 48 --samples 32 --validation-samples 4",
            "tessera train examples/ffn/ffn_cells.json --epochs 40 --checkpoint runs/ffn.ckpt "
            "--metrics runs/ffn.jsonl",
            # the documented segment command, for each of the 4 held-out volumes
            *[FFN_SEGMENT.replace("sample_000000", f"sample_{i:06d}") for i in range(4)],
        ],
        "extra": {2 + i: ["--json"] for i in range(4)},
        "stdout": {2 + i: f"ffn_segment_{i}.json" for i in range(4)},
        "verbatim": [0, 1, 2],
        "result": ffn_result, "claim": "vi",
        "row": lambda f, tol: (f"VI {f['vi']:.2f} ± {tol} bits (mean of 4 held-out 48³ volumes) after "
                               f"{minutes(f['train_s'])} of training (1 rank); the U-Net-components "
                               "baseline's 1.26 at its best threshold (`perf/ffn.sh`, not re-run here) "
                               "is not yet beaten"),
    },
    {
        "name": "resnet", "readme": "examples/resnet/README.md", "title": "ResNet on Fashion-MNIST",
        "learns": "10 classes of clothing photos (real images, Debian's `dataset-fashion-mnist`); "
                  "ResNet-50 training speed",
        "commands": [
            "tessera datagen fashion-mnist -o data/fashion-mnist",
            "OMP_WAIT_POLICY=passive tessera train examples/resnet/resnet8_fashion_mnist.json "
            "--metrics runs/resnet8.jsonl",
        ],
        "result": accuracy_result("runs/resnet8.jsonl"), "claim": "accuracy",
        "row": lambda f, tol: (f"{f['accuracy']:.2f} % ± {tol} test accuracy (top-5 {f['top5']:.2f} %) "
                               f"in {minutes(f['train_s'])} (1 rank); ResNet-50 1.31× the PyTorch peer's "
                               "samples/s (`perf/resnet50.sh`, not re-run here)"),
    },
    {
        "name": "cosmoflow", "readme": "examples/cosmoflow/README.md", "title": "CosmoFlow (MLPerf HPC)",
        "learns": "the 4 cosmological parameters behind 4-channel density volumes (regression), the "
                  "MLPerf HPC network",
        "commands": [
            "tessera datagen cosmoflow -o data/cosmoflow32 --size 32 --samples 1024 "
            "--validation-samples 128",
            "tessera train examples/cosmoflow/cosmoflow_32.json --metrics cosmoflow32.jsonl",
        ],
        "result": cosmoflow_result, "claim": "mae",
        "row": lambda f, tol: (f"validation MAE {f['mae']:.4f} ± {tol} against {f['baseline_mae']:.4f} "
                               f"for predicting the mean at 32³ (1 rank, {minutes(f['train_s'])})"),
    },
    {
        "name": "bcpnn", "readme": "examples/bcpnn/README.md", "title": "BCPNN on Fashion-MNIST",
        "learns": "brain-like learning without labels or gradients (a Bayesian-Hebbian `bcpnn` layer, "
                  "StreamBrain's rule), then a dense read-out",
        "commands": [
            "tessera datagen fashion-mnist -o data/fashion-mnist",
            "tessera train examples/bcpnn/bcpnn_fashion_mnist.json --metrics runs/bcpnn.jsonl",
        ],
        "result": accuracy_result("runs/bcpnn.jsonl"), "claim": "accuracy",
        "row": lambda f, tol: (f"{f['accuracy']:.2f} % ± {tol} test accuracy in "
                               f"{minutes(f['train_s'])} (1 rank), against 84.71 % for the same "
                               "read-out on raw pixels (`perf/bcpnn.sh`, not re-run here); "
                               "2 ranks equal 1"),
    },
    {
        "name": "cpp", "readme": "examples/cpp/README.md", "title": "C++ API",
        "learns": "a 3D CNN built, trained and evaluated from C++ (`ModelBuilder`, `Trainer`), built "
                  "against the installed package with `find_package(Tessera)`",
        "commands": [
            "cmake -S examples/cpp -B build/cpp_example -G Ninja \\\n"
            "      -DCMAKE_PREFIX_PATH=\"$PWD/build/install;/opt/tessera-deps/openmp\"",
            "cmake --build build/cpp_example",
            "build/cpp_example/tessera_cpp_example",
        ],
        "extra": {2: ["--metrics", "{work}/cpp_example.jsonl"]},
        "result": cpp_result, "claim": "mse",
        "row": lambda f, tol: (f"validation MSE {f['mse']:.3f} ± {tol} against {f['baseline_mse']:.3f} "
                               "for the mean at 16³ (1 rank)"),
    },
]

CLAIM = re.compile(r"(\d+(?:\.\d+)?)\s*(?:%\s*)?±\s*(\d+(?:\.\d+)?)")


def readme_rows(root=ROOT):
    """The README's Example apps table: app title -> its result cell."""
    with open(os.path.join(root, "README.md"), encoding="utf-8") as f:
        text = f.read()
    section = re.search(r"^## Example apps\n(.*?)(?=^## )", text, re.S | re.M)
    if not section:
        raise SystemExit("check_examples: README.md has no '## Example apps' section")
    rows = {}
    for line in section.group(1).splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        m = re.match(r"\[([^\]]+)\]", cells[0]) if cells else None
        if m and len(cells) >= 3:
            rows[m.group(1)] = cells[2]
    return rows


def stated_claim(app, rows):
    cell = rows.get(app["title"])
    if cell is None:
        raise AppFailed(f"the README's Example apps table has no row '{app['title']}'")
    m = CLAIM.search(cell)
    if not m:
        raise AppFailed(f"the README's row '{app['title']}' states no figure with a tolerance "
                        f"('0.957 ± 0.01'): {cell}")
    return float(m.group(1)), m.group(2)


def documented_claim(app, rows, root=ROOT):
    """What the README states for `app` (figure, tolerance), once its commands are checked to be
    those of its README: the docs side of the check, shared by --check-docs and a run."""
    check_verbatim(app, root)
    return stated_claim(app, rows)


def check_verbatim(app, root=ROOT):
    """Each command this script runs for `app` appears in its README as written there."""
    with open(os.path.join(root, app["readme"]), encoding="utf-8") as f:
        text = f.read()
    for i in app.get("verbatim", range(len(app["commands"]))):
        if app["commands"][i] not in text:
            raise AppFailed(f"{app['readme']} no longer shows the command this check runs: "
                            f"{app['commands'][i]!r}")


def run_app(app, work, tessera, log):
    for i, command in enumerate(app["commands"]):
        words = shlex.split(command.replace("\\\n", " "))
        env = dict(os.environ, PWD=ROOT)
        while words and re.match(r"^[A-Z_]+=", words[0]):
            key, value = words.pop(0).split("=", 1)
            env[key] = value
        words = [os.path.expandvars(w.replace("$PWD", ROOT)) for w in words]
        if words[0] in ("tessera", "build/default/tessera"):
            words[0] = tessera
        words += [w.format(work=work) for w in app.get("extra", {}).get(i, [])]
        cwd = ROOT if words[0] == "cmake" or words[0].startswith("build/") else work
        if words[0].startswith("build/"):
            words[0] = os.path.join(ROOT, words[0])
        out_name = app.get("stdout", {}).get(i)
        print(f"[{app['name']}] $ {' '.join(shlex.quote(w) for w in words)}", file=log, flush=True)
        stdout = open(os.path.join(work, out_name), "w") if out_name else log
        try:
            done = subprocess.run(words, cwd=cwd, env=env, stdout=stdout, stderr=log)
        finally:
            if out_name:
                stdout.close()
        if done.returncode != 0:
            raise AppFailed(f"`{command}` exited with {done.returncode} (log: {log.name})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="comma-separated apps (default: all)")
    ap.add_argument("--work", default=os.path.join(ROOT, "build", "check_examples"),
                    help="scratch folder, emptied first (default build/check_examples)")
    ap.add_argument("--tessera", default=os.path.join(ROOT, "build", "default", "tessera"))
    ap.add_argument("--list", action="store_true", help="print the apps and their commands, run nothing")
    ap.add_argument("--check-docs", action="store_true",
                    help="run nothing: check only that every app's README still shows the commands "
                         "run here and that the README's table states each figure with a tolerance")
    ap.add_argument("--docs-root", default=ROOT,
                    help="with --check-docs: the tree whose README.md and examples/*/README.md to read")
    args = ap.parse_args()
    wanted = [a for a in args.only.split(",") if a]
    unknown = [a for a in wanted if a not in [x["name"] for x in APPS]]
    if unknown:
        ap.error(f"unknown app(s) {', '.join(unknown)}; the apps: {', '.join(x['name'] for x in APPS)}")
    apps = [a for a in APPS if not wanted or a["name"] in wanted]
    if args.list:
        for app in apps:
            print(f"{app['name']} ({app['readme']}):")
            for c in app["commands"]:
                print("  " + c.replace("\n", "\n  "))
        return 0
    if args.check_docs:
        rows = readme_rows(args.docs_root)
        problems = []
        for app in apps:
            try:
                stated, tolerance = documented_claim(app, rows, args.docs_root)
                print(f"{app['name']}: {len(app['commands'])} commands in {app['readme']}; "
                      f"the README states {app['claim']} {stated} ± {tolerance}")
            except AppFailed as e:
                problems.append(f"{app['name']}: {e}")
        for p in problems:
            print(f"FAIL {p}")
        return 1 if problems else 0
    rows = readme_rows()
    tessera = os.path.abspath(args.tessera)
    if not os.access(tessera, os.X_OK):
        raise SystemExit(f"check_examples: no program at {tessera} (scripts/check_examples.sh builds it)")
    failures, table = [], []
    for app in apps:
        work = os.path.join(args.work, app["name"])
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(os.path.join(work, "runs"))
        os.symlink(os.path.join(ROOT, "examples"), os.path.join(work, "examples"))
        started = time.monotonic()
        with open(os.path.join(work, "log.txt"), "w", encoding="utf-8") as log:
            try:
                stated, tolerance = documented_claim(app, rows)
                print(f"== {app['title']}: {app['readme']} (log: {log.name})", flush=True)
                run_app(app, work, tessera, log)
                figures = app["result"](work)
                got = figures[app["claim"]]
                wall = time.monotonic() - started
                verdict = abs(got - stated) <= float(tolerance) + 1e-12
                print(f"   {app['claim']} {got:.4f}, README states {stated} ± {tolerance}: "
                      f"{'within' if verdict else 'OUTSIDE'}; {minutes(wall)} in all", flush=True)
                if not verdict:
                    failures.append(f"{app['title']}: {app['claim']} {got:.4f} is not within {stated} ± "
                                    f"{tolerance} as the README states")
                table.append(f"| [{app['title']}]({app['readme']}) | {app['learns']} | "
                             f"{app['row'](figures, tolerance)} |")
            except (AppFailed, OSError, KeyError, ValueError) as e:
                failures.append(f"{app['title']}: {e}")
                print(f"   FAILED: {e}", flush=True)
    print("\nThe README's Example apps table, from this run:\n")
    print("| app | what it learns | result here (2 cores) |")
    print("|---|---|---|")
    for line in table:
        print(line)
    if failures:
        print("\n" + "\n".join(f"FAIL {f}" for f in failures))
        return 1
    print(f"\ncheck_examples: {len(apps)} app(s) met the figures the README states")
    return 0


if __name__ == "__main__":
    sys.exit(main())
