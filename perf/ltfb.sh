#!/usr/bin/env bash
# Tournament training (LTFB, docs/ltfb.md) on the built-in CosmoFlow example, made a task
# where hyper-parameters matter: a constant learning rate (no schedule) drawn per trainer
# log-uniformly from [1e-4, 1e-2], 5 epochs (60 steps each), tournaments every 32 steps from the
# second epoch on, 16 tournament samples per trainer, 512 validation samples. For each seed:
#   * ltfb:           4 trainers x 1 rank, pairwise tournaments with perturbation;
#   * independent:    the same 4 trainers (same seeds, draws, held-out data and steps), no
#                     tournaments (selection "none");
#   * data_parallel:  one trainer on the same 4 ranks (the config's learning rate, the same
#                     batch, steps and training samples).
# Each prints the best trainer's final validation loss. Then the trainer efficiency: the
# samples/s of 2 trainers x 1 rank x 1 thread (the population's sum, tournaments included)
# over twice the samples/s of one 1-thread trainer run alone, training the same samples
# (side_by_side: over the sum of two such trainers run at the same time as separate
# processes, which share the machine as the population does: what the population itself
# costs), and the tournament overhead per round.
# Usage: perf/ltfb.sh [--seeds "1 2 3"] [--epochs N] [--repeats R] [--round-steps S]
#                    [--tournament-samples T] [--build DIR | --tessera PATH]
#                    (--seeds "": the efficiency only; R rotations of lone/side-by-side/pair
#                    runs, default 7; S, T: the round interval and tournament samples of every
#                    run, default 32 and 16; --tessera: use this tessera command instead of
#                    building one in DIR)
# Last line: ltfb_best_val=… independent_best_val=… data_parallel_val=… trainer_efficiency=…
#            side_by_side_efficiency=… ltfb_wins=W/N (means over the seeds; the per-seed
#            figures are printed above)
set -euo pipefail
cd "$(dirname "$0")/.."
seeds="1 2 3" epochs=5 repeats=7 round_steps=32 tournament_samples=16 build=build/perf tessera=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --seeds) seeds=$2; shift ;;
    --epochs) epochs=$2; shift ;;
    --repeats) repeats=$2; shift ;;
    --round-steps) round_steps=$2; shift ;;
    --tournament-samples) tournament_samples=$2; shift ;;
    --build) build=$2; shift ;;
    --tessera) tessera=$2; shift ;;
    -h|--help) sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "ltfb.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
source perf/common.sh
if [[ -z $tessera ]]; then
  build_perf "$build" tessera_cli
  tessera=$build/tessera
fi
export OMP_PROC_BIND=false OMP_NUM_THREADS=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# config SELECTION TRAINERS SEED FILE: the benchmark's run config.
config() {
  /usr/bin/python3 - "$1" "$2" "$3" "$4" "$epochs" "$round_steps" "$tournament_samples" <<'PY'
import json, sys
selection, trainers, seed, path, epochs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
round_steps, tournament_samples = int(sys.argv[6]), int(sys.argv[7])
c = json.load(open("examples/cosmoflow_tiny.json"))
c["optimizer"].pop("schedule", None)
c["training"].update({"epochs": epochs, "seed": seed, "log_every": 1000})
c["data"]["validation_samples"] = 512  # the figure compared is a validation loss: less noise
ltfb = {"trainers": trainers, "round_steps": round_steps, "start_step": 56, "tournament_samples": tournament_samples,
        "selection": selection, "hyperparameters": {"lr": {"min": 1e-4, "max": 1e-2, "scale": "log"}}}
if selection != "none":
    ltfb["perturb"] = True
c["training"]["ltfb"] = ltfb
json.dump(c, open(path, "w"))
PY
}
# lone_config SEED FILE HELD_OUT: one trainer without a population, trained on the samples a
# population trainer trains on (HELD_OUT fewer: what the population keeps for its tournaments).
lone_config() {
  /usr/bin/python3 - "$@" "$epochs" <<'PY'
import json, sys
seed, path, held_out, epochs = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
c = json.load(open("examples/cosmoflow_tiny.json"))
c["optimizer"].pop("schedule", None)
c["training"].update({"epochs": epochs, "seed": seed, "log_every": 1000})
c["data"]["samples"] -= held_out
c["data"]["validation_samples"] = 512
json.dump(c, open(path, "w"))
PY
}
# best_val METRICS: the lowest final validation loss over the population's trainers.
best_val() {
  /usr/bin/python3 - "$1" <<'PY'
import json, sys
events = [json.loads(l) for l in open(sys.argv[1])]
population = [e for e in events if e["event"] == "population"]
if population:
    print(f"{min(population[-1]['validation_loss']):.5f}")
else:
    print(f"{[e for e in events if e['event'] == 'validation'][-1]['loss']:.5f}")
PY
}
run() {  # RANKS CONFIG METRICS [flags]
  local ranks=$1 cfg=$2 metrics=$3
  shift 3
  mpirun --bind-to none -np "$ranks" "$tessera" train "$cfg" --metrics "$metrics" --quiet \
    --kokkos-threads=1 --kokkos-disable-warnings "$@" >"$metrics.out" 2>&1 || { cat "$metrics.out"; exit 1; }
}

for seed in $seeds; do
  config pairwise 4 "$seed" "$work/ltfb.json"
  config none 4 "$seed" "$work/independent.json"
  lone_config "$seed" "$work/dp.json" $((4 * tournament_samples))
  run 4 "$work/ltfb.json" "$work/ltfb_$seed.jsonl"
  run 4 "$work/independent.json" "$work/independent_$seed.jsonl"
  run 4 "$work/dp.json" "$work/dp_$seed.jsonl" --distribution '{"sample": 4}'
  l=$(best_val "$work/ltfb_$seed.jsonl")
  i=$(best_val "$work/independent_$seed.jsonl")
  d=$(best_val "$work/dp_$seed.jsonl")
  echo "seed $seed: ltfb_best_val=$l independent_best_val=$i data_parallel_val=$d"
  echo "$l $i $d" >>"$work/per_seed"
done

# Efficiency: 2 trainers x 1 rank x 1 thread on the 2 cores against one trainer alone and
# against two trainers side by side, run in rotation `repeats` times; the median of the
# rounds' ratios.
config pairwise 2 1 "$work/pair.json"
lone_config 1 "$work/lone.json" $((2 * tournament_samples))
: >"$work/efficiency"
for r in $(seq 1 "$repeats"); do
  run 1 "$work/lone.json" "$work/lone.jsonl"
  run 1 "$work/lone.json" "$work/side_a.jsonl" & side=$!
  run 1 "$work/lone.json" "$work/side_b.jsonl"
  wait "$side"
  run 2 "$work/pair.json" "$work/pair.jsonl"
  /usr/bin/python3 - "$work" >>"$work/efficiency" <<'PY'
import json, sys
work = sys.argv[1]
def events(name, kind):
    return [e for e in map(json.loads, open(f"{work}/{name}.jsonl")) if e["event"] == kind]
def rate(*names):
    return sum(events(n, "end")[0]["samples_per_s"] for n in names)
pair = rate("pair", "pair.trainer1")
rounds = [e["seconds"] for e in events("pair", "tournament")]
print(f"{pair / (2 * rate('lone')):.3f} {pair / rate('side_a', 'side_b'):.3f} "
      f"{sum(rounds) / max(len(rounds), 1):.4f} {rate('lone'):.1f}")
PY
done
read -r efficiency side_by_side overhead < <(/usr/bin/python3 - "$work/efficiency" <<'PY'
import sys
rows = [tuple(map(float, line.split())) for line in open(sys.argv[1])]
median = lambda k: sorted(r[k] for r in rows)[len(rows) // 2]
print(f"{median(0):.3f} {median(1):.3f} {median(2):.4f}")
for k, what in ((0, "against a lone trainer"), (1, "against two side by side")):
    print(f"  {what}: " + " ".join(f"{r[k]:.3f}" for r in rows), file=sys.stderr)
PY
)
echo "trainer efficiency (2 trainers x 1 rank x 1 thread, a round every $round_steps steps on $tournament_samples" \
     "samples, median of $repeats" \
     "rotations): $efficiency against a lone trainer, $side_by_side against two side by side;" \
     "tournament overhead $overhead s per round"
touch "$work/per_seed"
/usr/bin/python3 - "$work/per_seed" "$efficiency" "$side_by_side" <<'PY'
import sys
rows = [list(map(float, line.split())) for line in open(sys.argv[1])]
if not rows:
    print(f"ltfb_best_val=n/a independent_best_val=n/a data_parallel_val=n/a trainer_efficiency={sys.argv[2]} "
          f"side_by_side_efficiency={sys.argv[3]}")
    sys.exit(0)
mean = [sum(r[k] for r in rows) / len(rows) for k in range(3)]
wins = sum(1 for r in rows if r[0] < r[1])
print(f"ltfb_best_val={mean[0]:.5f} independent_best_val={mean[1]:.5f} data_parallel_val={mean[2]:.5f} "
      f"trainer_efficiency={sys.argv[2]} side_by_side_efficiency={sys.argv[3]} ltfb_wins={wins}/{len(rows)}")
PY
