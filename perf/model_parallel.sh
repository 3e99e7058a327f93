#!/usr/bin/env bash
# Model parallelism on this machine with cosmoflow-small (2 warm-up steps, then the median of
# the timed steps, as in docs/benchmarks.md), three layouts of the same global batch:
#  * filter: conv4, conv5 and the hidden dense layers split by filter over 2 ranks, the rest
#    over samples (2 ranks x 1 thread);
#  * sample: data parallel over 2 ranks (2 ranks x 1 thread);
#  * single: 1 rank x 2 threads.
# Figures:
#  * param_state_mb_ratio: parameters + optimizer state of the split layers held per rank under
#    "filter" over the same on one rank (whole_model_ratio: the same for the whole model);
#  * step_time_ratio_vs_sample: median step time of "filter" over that of "sample";
#  * comm_bytes_ratio_vs_model: bytes rank 0 handed to MPI per step (counted by the run) over
#    the formulas of docs/parallelism.md (perf/channel_split_traffic.py).
# Then the 2-D split at 8 ranks (8 x 1 thread, batch 8; oversubscribed on a small machine, so
# bytes and memory, not times): the same layers under {"channel": 2, "filter": 4} against
# {"filter": 8}:
#  * mp2d_weight_ratio: the split layers' parameters per rank over one rank's;
#  * mp2d_vs_1d_bytes: activation-exchange bytes rank 0 sends per step, 2-D over 1-D;
#  * mp2d_bytes_vs_model: all bytes rank 0 sent under 2-D over the formulas.
# And a dense stack sized like Bian et al.'s (flatten of 16^3, three 4096-wide layers, batch 8)
# at 8 ranks under filter 8 and channel 2 x filter 4:
#  * mp2d_dense_vs_1d_bytes: all bytes rank 0 sends per step, 2-D over 1-D.
# Then the 3-D split at 8 ranks ({"cube": 2}: 2 samples x 2 channels x 2 filters, the weights
# sharded over the 2 samples) of the same cosmoflow-small layers, and a 1-rank run of the same
# batch for activations:
#  * mp3d_weight_ratio: the split layers' parameters per rank over one rank's;
#  * mp3d_activation_ratio: the activations rank 0 holds (every layer's output and gradient;
#    the other layers are split over 8 samples) over one rank's;
#  * mp3d_bytes_vs_model: all bytes rank 0 sent under the cube over the formulas;
# and the dense stack under the cube, at batch 8 and at --big-batch (default 1024) against
# filter 8 (the paper's case: activations as large as the weights):
#  * mp3d_vs_1d_bytes: all bytes rank 0 sends per step, cube over filter 8, at batch 8;
#  * mp3d_vs_1d_bytes_big: the same at the big batch (mp3d_vs_2d_bytes_big: over 2 x 4).
# Usage: perf/model_parallel.sh [--steps N] [--size S] [--batch B] [--big-batch B] [--build DIR]
# Last line: param_state_mb_ratio=R whole_model_ratio=W step_time_ratio_vs_sample=T comm_bytes_ratio_vs_model=C
#   mp2d_weight_ratio=M mp2d_vs_1d_bytes=V mp2d_bytes_vs_model=D mp2d_dense_vs_1d_bytes=E
#   mp3d_weight_ratio=… mp3d_activation_ratio=… mp3d_bytes_vs_model=… mp3d_vs_1d_bytes=…
#   mp3d_vs_1d_bytes_big=… mp3d_vs_2d_bytes_big=…
set -euo pipefail
cd "$(dirname "$0")/.."
steps=8 size=64 batch=4 big=1024 build=build/perf
while [[ $# -gt 0 ]]; do
  case "$1" in
    --steps) steps=$2; shift ;;
    --size) size=$2; shift ;;
    --batch) batch=$2; shift ;;
    --big-batch) big=$2; shift ;;
    --build) build=$2; shift ;;
    -h|--help) sed -n '2,44p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "model_parallel.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
source perf/common.sh
build_perf "$build" tessera_cli
export OMP_PROC_BIND=false
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

/usr/bin/python3 perf/cosmoflow_run.py config "$size" "$batch" "$((steps + 2))" "$work/sample.json"
# The filter layout: the deep blocks and the hidden dense layers split by output channel; the
# flatten and the output layer keep whole channels (the loss needs whole outputs).
/usr/bin/python3 perf/cosmoflow_run.py config "$size" 8 "$((steps + 2))" "$work/sample8.json"
/usr/bin/python3 - "$work" "$big" <<'PY'
import json, sys
work, big = sys.argv[1], int(sys.argv[2])
split = {"conv4", "act4", "pool4", "conv5", "act5", "pool5", "fc1", "act6", "fc2", "act7"}
def layout(source, target, inside, outside):
    c = json.load(open(f"{work}/{source}.json"))
    for layer in c["model"]["layers"]:
        layer["distribution"] = inside if layer["name"] in split else outside
    json.dump(c, open(f"{work}/{target}.json", "w"))
layout("sample", "filter", {"filter": 2}, {"sample": 2})
layout("sample8", "filter8", {"filter": 8}, {"sample": 8})
layout("sample8", "grid8", {"channel": 2, "filter": 4}, {"sample": 8})
layout("sample8", "cube8", {"cube": 2}, {"sample": 8})
layout("sample8", "single8", {"sample": 1}, {"sample": 1})
dense = {"name": "dense-stack", "loss": {"type": "mse"}, "optimizer": {"type": "adam", "lr": 1e-4},
         "data": {"source": "synthetic_fields", "samples": 64, "validation_samples": 0, "size": 16, "channels": 1},
         "training": {"epochs": 1, "batch_size": 8, "seed": 1, "max_steps": 6},
         "model": {"input": {"channels": 1, "size": [16, 16, 16]}, "distribution": {"sample": 8}, "layers": [
             {"name": "flat", "type": "flatten"}] + [
             l for k in (1, 2, 3) for l in ({"name": f"fc{k}", "type": "dense", "units": 4096},
                                             {"name": f"act{k}", "type": "relu"})] + [
             {"name": "out", "type": "dense", "units": 4}]}}
def stack(name, d, batch, steps):
    dense["training"].update(batch_size=batch, max_steps=steps)
    dense["data"]["samples"] = max(64, batch)
    for layer in dense["model"]["layers"]:
        layer.pop("distribution", None)
        if layer["name"] not in ("flat", "out"):
            layer["distribution"] = d
    json.dump(dense, open(f"{work}/{name}.json", "w"))
stack("dense_filter8", {"filter": 8}, 8, 6)
stack("dense_grid8", {"channel": 2, "filter": 4}, 8, 6)
stack("dense_cube8", {"cube": 2}, 8, 6)
# The big batch: bytes only, so two steps.
stack("dense_filter8_big", {"filter": 8}, big, 2)
stack("dense_grid8_big", {"channel": 2, "filter": 4}, big, 2)
stack("dense_cube8_big", {"cube": 2}, big, 2)
PY

# run RANKS THREADS CONFIG NAME
run() {
  local bind=()
  [[ $1 -eq 1 ]] && bind=(--bind-to none)
  OMP_NUM_THREADS=$2 mpirun "${bind[@]}" -np "$1" "$build/tessera" train "$3" --metrics "$work/$4.jsonl" --quiet \
    --kokkos-threads="$2" --kokkos-disable-warnings >/dev/null
}
run 2 1 "$work/filter.json" filter
run 2 1 "$work/sample.json" sample
run 1 2 "$work/sample.json" single
run 8 1 "$work/filter8.json" filter8
run 8 1 "$work/grid8.json" grid8
run 8 1 "$work/dense_filter8.json" dense_filter8
run 8 1 "$work/dense_grid8.json" dense_grid8
run 8 1 "$work/cube8.json" cube8
run 1 1 "$work/single8.json" single8
run 8 1 "$work/dense_cube8.json" dense_cube8
run 8 1 "$work/dense_filter8_big.json" dense_filter8_big
run 8 1 "$work/dense_grid8_big.json" dense_grid8_big
run 8 1 "$work/dense_cube8_big.json" dense_cube8_big
/usr/bin/python3 perf/channel_split_traffic.py "$work/filter.json" 2 0 >"$work/model_bytes.json"
/usr/bin/python3 perf/channel_split_traffic.py "$work/grid8.json" 8 0 >"$work/grid8_bytes.json"
/usr/bin/python3 perf/channel_split_traffic.py "$work/cube8.json" 8 0 >"$work/cube8_bytes.json"
for name in dense_filter8 dense_cube8 dense_filter8_big dense_grid8_big dense_cube8_big; do
  /usr/bin/python3 perf/channel_split_traffic.py "$work/$name.json" 8 0 >"$work/${name}_bytes.json"
done

/usr/bin/python3 - "$work" "$batch" "$steps" "$big" <<'PY'
import json, statistics, sys
work, batch, steps, big = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
def events(name):
    return [json.loads(l) for l in open(f"{work}/{name}.jsonl")]
def step_time(name):
    timed = [e for e in events(name) if e["event"] == "train"][2:]
    return statistics.median(batch / e["samples_per_s"] for e in timed)
def start(name):
    return next(e for e in events(name) if e["event"] == "start")
def end(name):
    return next(e for e in events(name) if e["event"] == "end")
p_filter, p_single = start("filter")["parameters"], start("single")["parameters"]
state_per_value = p_filter["optimizer_state_per_rank"] / p_filter["trainable_per_rank"]
split_rank = p_filter["sharded_per_rank"] * (1 + state_per_value)
split_one = p_filter["sharded_whole"] * (1 + state_per_value)
whole_rank = p_filter["trainable_per_rank"] + p_filter["optimizer_state_per_rank"]
whole_one = p_single["trainable_per_rank"] + p_single["optimizer_state_per_rank"]
mb = 4 / 2**20
total_steps = end("filter")["steps"]
sent = end("filter")["sent_bytes"]
model = json.load(open(f"{work}/model_bytes.json"))
t_filter, t_sample, t_single = step_time("filter"), step_time("sample"), step_time("single")
print(f"split layers' parameters + optimizer state: {split_rank * mb:.1f} MiB per rank under filter 2, "
      f"{split_one * mb:.1f} MiB on one rank; whole model {whole_rank * mb:.1f} MiB per rank against {whole_one * mb:.1f} MiB")
print(f"median step time: filter {t_filter:.3f} s, sample {t_sample:.3f} s (2 ranks x 1 thread), "
      f"single {t_single:.3f} s (1 rank x 2 threads)")
sample_sent = end("sample")["sent_bytes"]
print("bytes sent per step by rank 0 under filter (counted / model): " + ", ".join(
    f"{k} {sent[k] / total_steps / 1e6:.3f}/{model[k] / 1e6:.3f} MB" for k in ("channel", "redistribution", "gradients")) +
    f"; under sample: gradients {sample_sent['gradients'] / end('sample')['steps'] / 1e6:.3f} MB")
KINDS = ("channel", "redistribution", "gradients", "halo", "weights")
counted = sum(sent[k] for k in KINDS) / total_steps
def per_step(name, kind):
    e = end(name)
    return e["sent_bytes"][kind] / e["steps"]
def all_bytes(name):
    return sum(per_step(name, k) for k in KINDS)
def formula(name):
    return json.load(open(f"{work}/{name}_bytes.json"))["total"]
print(f"dense stack at 8 ranks: all bytes of rank 0 per step {all_bytes('dense_grid8') / 1e6:.3f} MB under "
      f"channel 2 x filter 4, {all_bytes('dense_filter8') / 1e6:.3f} MB under filter 8")
p_grid = start("grid8")["parameters"]
grid_model = json.load(open(f"{work}/grid8_bytes.json"))
grid_counted = all_bytes("grid8")
print(f"8 ranks: split layers' parameters per rank {p_grid['sharded_per_rank']} of {p_grid['sharded_whole']} under "
      f"channel 2 x filter 4; activation exchanges of rank 0 per step: {per_step('grid8', 'channel') / 1e6:.3f} MB "
      f"(2-D) against {per_step('filter8', 'channel') / 1e6:.3f} MB (filter 8); all bytes {grid_counted / 1e6:.3f} MB "
      f"counted, {grid_model['total'] / 1e6:.3f} MB by the formulas")
p_cube = start("cube8")["parameters"]
act_cube, act_one = end("cube8")["activation_mb"], end("single8")["activation_mb"]
print(f"8 ranks, cube 2: split layers' parameters per rank {p_cube['sharded_per_rank']} of {p_cube['sharded_whole']}; "
      f"activations of rank 0 {act_cube:.2f} MiB against {act_one:.2f} MiB on one rank; all bytes of rank 0 per step "
      f"{all_bytes('cube8') / 1e6:.3f} MB counted ({per_step('cube8', 'weights') / 1e6:.3f} MB of them sharded "
      f"weights), {formula('cube8') / 1e6:.3f} MB by the formulas")
for tag, label in (("", "batch 8"), ("_big", f"batch {big}")):
    splits = (("filter 8", "filter"), ("channel 2 x filter 4", "grid"), ("cube 2", "cube"))
    rows = ", ".join(f"{split} {all_bytes(f'dense_{name}8{tag}') / 1e6:.3f} MB" for split, name in splits)
    print(f"dense stack at 8 ranks, {label}: all bytes of rank 0 per step: {rows}")
for name in ("dense_filter8", "dense_cube8", "dense_filter8_big", "dense_grid8_big", "dense_cube8_big"):
    print(f"  {name}: counted/formulas {all_bytes(name) / formula(name):.3f}")
print(f"param_state_mb_ratio={split_rank / split_one:.3f} whole_model_ratio={whole_rank / whole_one:.3f} "
      f"step_time_ratio_vs_sample={t_filter / t_sample:.3f} comm_bytes_ratio_vs_model={counted / model['total']:.3f} "
      f"mp2d_weight_ratio={p_grid['sharded_per_rank'] / p_grid['sharded_whole']:.4f} "
      f"mp2d_vs_1d_bytes={per_step('grid8', 'channel') / per_step('filter8', 'channel'):.3f} "
      f"mp2d_bytes_vs_model={grid_counted / grid_model['total']:.3f} "
      f"mp2d_dense_vs_1d_bytes={all_bytes('dense_grid8') / all_bytes('dense_filter8'):.3f} "
      f"mp3d_weight_ratio={p_cube['sharded_per_rank'] / p_cube['sharded_whole']:.4f} "
      f"mp3d_activation_ratio={act_cube / act_one:.4f} "
      f"mp3d_bytes_vs_model={all_bytes('cube8') / formula('cube8'):.3f} "
      f"mp3d_vs_1d_bytes={all_bytes('dense_cube8') / all_bytes('dense_filter8'):.3f} "
      f"mp3d_vs_1d_bytes_big={all_bytes('dense_cube8_big') / all_bytes('dense_filter8_big'):.3f} "
      f"mp3d_vs_2d_bytes_big={all_bytes('dense_cube8_big') / all_bytes('dense_grid8_big'):.3f}")
PY
