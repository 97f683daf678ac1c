#!/usr/bin/env bash
# Measures data-parallel step times of `blr train` at 1-4 ranks, each rank in a network namespace
# of its own, joined by a bridge inside a further namespace (scripts/netns.sh), under tbf limits
# on every link, for the scaling model (scripts/scaling_model.py, docs/distributed.md "Scaling").
# Needs root (or CAP_NET_ADMIN), iproute2 and Fashion-MNIST. Nothing leaves the namespaces: no
# default route, no link to the host. Every run is bounded by `timeout`; the namespaces are
# deleted on any exit.
#
# Usage: scripts/netns_scaling.sh BLR OUT_DIR
#   environment: RATES (Mbit/s, 0 = no limit; default "0 1000 100 10"), WORLDS ("2 3 4"),
#   OPTIMIZERS ("adamw ivon"), BATCH (global batch, divisible by every world size; 120),
#   STEPS (steps per run; 20), ROUNDS (repeats of the whole plan, medians taken by the model; 1)
# Writes OUT_DIR/measurements.csv with one row per run:
#   kind        compute: K independent one-process runs at once, each with batch BATCH/K (no
#               network), the compute a rank has when K ranks share this machine's cores;
#               dist: one data-parallel run of W ranks (the global batch BATCH, --dist-split data)
#   round, optimizer, world_size (W or K), mbit (0 = no limit), batch_per_rank,
#   step_ms (mean over the run's steps, rank 0 / mean over the K processes),
#   allreduce_ms (rank 0's time inside the all-reduce per step, waiting included), allreduce_bytes,
#   parameter_digest, cores (nproc), load (1-minute load average before the run)
# and OUT_DIR/parameters.csv: model,parameters — LeNet-5, ResNet-20 and the GPT of docs/results.md
# as blr builds them (from the AdamW all-reduce payload, 4 bytes a parameter, of a 2-rank run).
set -uo pipefail
blr=${1:?usage: netns_scaling.sh BLR OUT_DIR}
out=${2:?usage: netns_scaling.sh BLR OUT_DIR}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/netns.sh
source "$here/netns.sh"
read -ra rates <<<"${RATES:-0 1000 100 10}"
read -ra worlds <<<"${WORLDS:-2 3 4}"
read -ra optimizers <<<"${OPTIMIZERS:-adamw ivon}"
batch=${BATCH:-120}
steps=${STEPS:-20}
rounds=${ROUNDS:-1}
py=/usr/bin/python3
maxw=1
for w in "${worlds[@]}"; do
  [ $((batch % w)) -eq 0 ] || { echo "netns_scaling: BATCH=$batch is not divisible by the world size $w." >&2; exit 2; }
  if [ "$w" -lt 2 ] || [ "$w" -gt 8 ]; then
    echo "netns_scaling: world sizes run from 2 to 8; got $w." >&2
    exit 2
  fi
  [ "$w" -gt "$maxw" ] && maxw=$w
done
mkdir -p "$out/runs" || exit 2
pids=()
cleanup() {
  netns_stop "${pids[@]}"
  netns_cleanup
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
tag="bs$$"
subnet=10.231.8
netns_star "$tag" "$maxw" "$subnet" || { echo "netns_scaling: could not make the namespaces (root needed)." >&2; exit 2; }

common=(--model lenet --epochs 1 --test-limit 100 --threads 1 --quiet --dist-timeout 120)
csv="$out/measurements.csv"
echo "kind,round,optimizer,world_size,mbit,batch_per_rank,step_ms,allreduce_ms,allreduce_bytes,parameter_digest,cores,load" >"$csv"
field() {  # FILE EXPR: a value of a blr JSON report (o: the optimizer's entry, d: distributed)
  $py -c "import json,sys; r=json.load(open(sys.argv[1])); o,=r['optimizers'].values(); d=r.get('distributed',{}); print($2)" "$1"
}
load() { cut -d' ' -f1 /proc/loadavg; }

for ((round = 1; round <= rounds; round++)); do
  # ---- compute: K independent processes at once, batch BATCH/K each, no network ------------------
  for opt in "${optimizers[@]}"; do
    for k in 1 "${worlds[@]}"; do
      m=$((batch / k))
      l=$(load)
      pids=()
      for ((i = 0; i < k; i++)); do
        timeout 600 "$blr" train --optimizer "$opt" --batch-size "$m" --train-limit $((m * steps)) \
          --seed $((i + 1)) "${common[@]}" --json "$out/runs/compute-$round-$opt-$k-$i.json" \
          >/dev/null 2>"$out/runs/compute-$round-$opt-$k-$i.err" &
        pids+=($!)
      done
      ok=1
      netns_wait "${pids[@]}" || ok=0
      pids=()
      [ "$ok" -eq 1 ] || { echo "netns_scaling: a compute run ($opt, $k at once) failed; see $out/runs." >&2; exit 1; }
      ms=$($py -c "import json,sys; print(sum(list(json.load(open(f))['optimizers'].values())[0]['step_ms'] for f in sys.argv[1:]) / (len(sys.argv) - 1))" \
        "$out/runs/compute-$round-$opt-$k-"*.json)
      digest=$(field "$out/runs/compute-$round-$opt-$k-0.json" "o['parameter_digest']")
      echo "compute,$round,$opt,$k,0,$m,$ms,0,0,$digest,$(nproc),$l" >>"$csv"
      echo "netns_scaling: round $round compute $opt x$k (batch $m): $ms ms/step" >&2
    done
  done
  # ---- data-parallel: W ranks in W namespaces, every link limited to MBIT ------------------------
  for mbit in "${rates[@]}"; do
    netns_limit "$mbit" || { echo "netns_scaling: tc could not set $mbit Mbit/s." >&2; exit 1; }
    for w in "${worlds[@]}"; do
      for opt in "${optimizers[@]}"; do
        f="$out/runs/dist-$round-$opt-$w-$mbit.json"
        l=$(load)
        pids=()
        for ((r = w - 1; r >= 0; r--)); do
          netns_exec "$r" env RANK="$r" WORLD_SIZE="$w" MASTER_ADDR=$subnet.1 MASTER_PORT=29500 \
            GLOO_SOCKET_IFNAME="${NETNS_RANK_DEV[$r]}" timeout 600 "$blr" train --optimizer "$opt" \
            --batch-size "$batch" --train-limit $((batch * steps)) "${common[@]}" --json "$f" \
            >/dev/null 2>"${f%.json}.$r.err" &
          pids+=($!)
        done
        ok=1
        netns_wait "${pids[@]}" || ok=0
        pids=()
        [ "$ok" -eq 1 ] || { echo "netns_scaling: the run of $opt on $w ranks at $mbit Mbit/s failed; see ${f%.json}.*.err." >&2; exit 1; }
        row=$(field "$f" "o['step_ms'], d['allreduce_ms_per_step'], d['allreduce_bytes_per_step'], o['parameter_digest'], sep=','")
        ms=${row%%,*}
        echo "dist,$round,$opt,$w,$mbit,$((batch / w)),$row,$(nproc),$l" >>"$csv"
        echo "netns_scaling: round $round $opt W=$w at $mbit Mbit/s: $ms ms/step" >&2
      done
    done
  done
  netns_limit 0
done

# ---- parameter counts of the projected models, as blr builds them ---------------------------------
echo "model,parameters" >"$out/parameters.csv"
count() {  # NAME FLAGS...: a 2-rank AdamW run of one step; P = bytes per step / 4
  local name=$1
  shift
  timeout 600 "$blr" launch --nproc 2 -- train --optimizer adamw --epochs 1 --threads 1 --quiet \
    "$@" --json "$out/runs/count-$name.json" >/dev/null 2>"$out/runs/count-$name.err" ||
    { echo "netns_scaling: the parameter count of $name failed; see $out/runs/count-$name.err." >&2; exit 1; }
  echo "$name,$(field "$out/runs/count-$name.json" "d['allreduce_bytes_per_step'] // 4")" >>"$out/parameters.csv"
}
count lenet --model lenet --train-limit 8 --batch-size 8 --test-limit 8
count resnet20 --model resnet20 --train-limit 8 --batch-size 8 --test-limit 8
count gpt --model gpt --data fortunes --gpt-context 128 --gpt-layers 4 --gpt-heads 4 --gpt-width 128 \
  --train-limit 4 --batch-size 4 --test-limit 4
echo "netns_scaling: wrote $csv and $out/parameters.csv" >&2
