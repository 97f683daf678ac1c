#!/usr/bin/env bash
# Model merging on a Fashion-MNIST class split (issue 11, docs/posterior.md "Merging on a class
# split"): one base model, fine-tuned once per task (classes 0-4 and 5-9) from the base, then
# merged by uncertainty weighting, task arithmetic and averaging; every model is scored on each
# task's test set and on all of it. Prints a markdown table; the checkpoints stay in OUT, and a
# step whose checkpoint is already there is not run again.
#   scripts/merging_demo.sh BLR OUT [OPTIMIZER] [BASE_LIMIT] [TASK_LIMIT] [EPOCHS] [THREADS]
# OPTIMIZER (default ivon) trains the base and the tasks; its posterior precision is the merge's
# curvature (AdamW/SGD: the exact diagonal GGN over each model's own training set).
set -euo pipefail
blr=${1:?usage: merging_demo.sh BLR OUT [OPTIMIZER] [BASE_LIMIT] [TASK_LIMIT] [EPOCHS] [THREADS]}
out=${2:?usage: merging_demo.sh BLR OUT [OPTIMIZER] [BASE_LIMIT] [TASK_LIMIT] [EPOCHS] [THREADS]}
optimizer=${3:-ivon}
base_limit=${4:-3000}
task_limit=${5:-60000}
epochs=${6:-3}
threads=${7:-2}
mkdir -p "$out"
common=(--optimizer "$optimizer" --threads "$threads" --quiet --test-samples 16)
tasks=("0,1,2,3,4" "5,6,7,8,9")

[ -f "$out/base/$optimizer.ckpt" ] ||
  "$blr" train "${common[@]}" --train-limit "$base_limit" --epochs "$epochs" --out "$out/base" \
    >/dev/null
models=()
for t in 0 1; do
  [ -f "$out/task$t/$optimizer.ckpt" ] ||
    "$blr" train "${common[@]}" --train-limit "$task_limit" --epochs "$epochs" \
      --classes "${tasks[$t]}" --init "$out/base/$optimizer.ckpt" --out "$out/task$t" >/dev/null
  models+=("$out/task$t/$optimizer.ckpt")
done
joined=$(IFS=,; echo "${models[*]}")
for method in uncertainty task-arithmetic average; do
  [ -f "$out/merged-$method.ckpt" ] ||
    "$blr" merge --base "$out/base/$optimizer.ckpt" --models "$joined" --method "$method" \
    --threads "$threads" --quiet --out "$out/merged-$method.ckpt" >/dev/null
done

score() {  # CHECKPOINT CLASSES -> "accuracy nll" (a task's checkpoint keeps its own training set)
  "$blr" eval --checkpoint "$1" --classes "$2" --threads "$threads" --quiet --json "$out/score.json" \
    >/dev/null
  python3 -c 'import json,sys; r=next(iter(json.load(open(sys.argv[1]))["optimizers"].values()))["test"]["mean"]; print("%.4f %.4f" % (r["accuracy"], r["nll"]))' "$out/score.json"
}
echo "| model | acc. classes 0-4 | acc. classes 5-9 | acc. all | NLL all |"
echo "|---|---:|---:|---:|---:|"
for entry in "base:$out/base/$optimizer.ckpt" "fine-tuned on 0-4:${models[0]}" \
             "fine-tuned on 5-9:${models[1]}" "merged, uncertainty:$out/merged-uncertainty.ckpt" \
             "merged, task arithmetic:$out/merged-task-arithmetic.ckpt" \
             "merged, average:$out/merged-average.ckpt"; do
  name=${entry%%:*} path=${entry#*:}
  read -r a0 _ < <(score "$path" "${tasks[0]}")
  read -r a1 _ < <(score "$path" "${tasks[1]}")
  read -r aa nll < <(score "$path" 0,1,2,3,4,5,6,7,8,9)
  echo "| $name | $a0 | $a1 | $aa | $nll |"
done
