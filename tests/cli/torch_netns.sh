#!/usr/bin/env bash
# Issue 33, item 2: data-parallel training between "hosts" without leaving this machine. Two
# network namespaces made here, joined by one veth pair with addresses this test assigns
# (10.231.7.1 and .2, nothing else reachable: no default route, no bridge, no NAT); rank 0 runs
# in the first, rank 1 in the second, with torchrun's variables (MASTER_ADDR = the first
# namespace's address) and GLOO_SOCKET_IFNAME = the namespace's veth. Checks:
#   * IVON, 2 ranks x 1 Monte Carlo sample (--dist-split samples) = 1 process x 2 samples:
#     the same parameter digest, per-epoch losses and test metrics, bitwise (as torch_launch.sh);
#   * AdamW with the data split gives bitwise the parameters of `blr launch --nproc 2` (loopback);
#   * the IVON run started by torchrun (one node per namespace, static rendezvous: the ranks use
#     the store of torchrun's agent) gives the same digest (skipped without python3-torch);
#   * the IVON run again with tbf limits of 1 Gbit/s and 100 Mbit/s on both veth ends: the same
#     digest, and an all-reduce time per step at least 80 % of what the limit allows (so the limit
#     is in the path); the step times are printed.
# Without the right to make namespaces (not root) it prints SKIP and exits 77 (ctest's
# SKIP_RETURN_CODE for the CLI tests). Every command runs under `timeout`; the namespaces are
# deleted on any exit.
# Usage: torch_netns.sh <path-to-blr> <source-dir>
set -uo pipefail
blr=${1:?usage: torch_netns.sh <path-to-blr> <source-dir>}
src=${2:?usage: torch_netns.sh <path-to-blr> <source-dir>}
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=scripts/netns.sh
source "$src/scripts/netns.sh"
require_torch
py=/usr/bin/python3
data_dir=${BLR_FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}
if [ ! -f "$data_dir/train-images-idx3-ubyte.gz" ]; then
  echo "SKIP: Fashion-MNIST is not installed." >&2
  exit 77
fi
if ! command -v ip >/dev/null || ! command -v tc >/dev/null; then
  echo "SKIP: iproute2 (ip, tc) is not installed." >&2
  exit 77
fi
pids=()
cleanup() {
  netns_stop "${pids[@]}"
  netns_cleanup
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
tag="bt$$"
subnet=10.231.7
if ! netns_pair "$tag" "$subnet" 2>"$work/netns.err"; then
  echo "SKIP: cannot make network namespaces (needs root or CAP_NET_ADMIN): $(head -1 "$work/netns.err")" >&2
  exit 77
fi

tiny=(--train-limit 256 --test-limit 200 --batch-size 64 --threads 1 --hidden 32 --quiet
      --dist-timeout 60)
ivon2=(--optimizer ivon --ivon-mc-samples 1 --dist-split samples --epochs 2 --test-samples 4)
# pair NAME FLAGS...: rank 1 in the second namespace, rank 0 in the first; both must exit 0
pair() {
  local name=$1 r rc
  shift
  pids=()
  for r in 1 0; do
    netns_exec "$r" env RANK=$r WORLD_SIZE=2 MASTER_ADDR=$subnet.1 MASTER_PORT=29500 \
      GLOO_SOCKET_IFNAME="${NETNS_RANK_DEV[$r]}" timeout 120 "$blr" train "$@" "${tiny[@]}" \
      --json "$work/$name.json" >/dev/null 2>"$work/$name.$r.err" &
    pids+=($!)
  done
  for r in 0 1; do
    wait "${pids[$r]}"
    rc=$?
    [ "$rc" -eq 0 ] || { fail "$name: rank $((1 - r)) exited $rc"; cat "$work/$name.$((1 - r)).err" >&2; }
  done
  pids=()
}
same() {  # A B: the same digest, history and test metrics
  $py - "$work/$1.json" "$work/$2.json" <<'PY' || fail "$2 differs from $1"
import json, sys
a, b = (json.load(open(f))["optimizers"] for f in sys.argv[1:])
(name, a), = a.items()
b = b[name]
assert a["parameter_digest"] == b["parameter_digest"], (a["parameter_digest"], b["parameter_digest"])
keys = ["train_loss", "test_accuracy", "test_nll"]
assert [[r[k] for k in keys] for r in a["history"]] == [[r[k] for k in keys] for r in b["history"]]
for r in (a, b):
    r["test"].pop("seconds", None)
assert a["test"] == b["test"], (a["test"], b["test"])
PY
}

# ---- the namespaces: each rank sees only its own address and the other's ---------------------
netns_exec 0 ip -4 -o addr show | grep -qF "$subnet.1/24" || fail "rank 0's namespace lacks $subnet.1"
[ "$(netns_exec 0 ip route show default | wc -l)" -eq 0 ] || fail "rank 0's namespace has a default route"
ip -o link show | grep -qF "${tag}r" && fail "a veth of the test is in the caller's namespace"

# ---- IVON: 2 ranks in 2 namespaces x 1 sample = 1 process x 2 samples --------------------------
timeout 120 "$blr" train --optimizer ivon --ivon-mc-samples 2 --epochs 2 --test-samples 4 "${tiny[@]}" \
  --json "$work/one.json" >/dev/null 2>"$work/one.err" || { fail "ivon 1x2: exit $?"; cat "$work/one.err" >&2; }
pair ivon "${ivon2[@]}"
same one ivon
$py -c "import json,sys; d=json.load(open(sys.argv[1]))['distributed']; assert d['world_size'] == 2 and d['split'] == 'samples', d" \
  "$work/ivon.json" || fail "ivon: the report is not of 2 ranks with the samples split"

# ---- AdamW, data split: bitwise the run of blr launch over loopback ----------------------------
timeout 120 "$blr" launch --nproc 2 -- train --optimizer adamw --epochs 1 "${tiny[@]}" \
  --json "$work/launch.json" >/dev/null 2>"$work/launch.err" || { fail "launch adamw: exit $?"; cat "$work/launch.err" >&2; }
pair adamw --optimizer adamw --epochs 1
same launch adamw

# ---- torchrun (static rendezvous: its agent on node 0 serves the store, the ranks are clients) --
# Debian's torchrun 1.13 under Python 3.11 fails with its default --redirects 0 and --tee 0 (an
# IntFlag of value 0, or of two bits, is no longer iterated: "'NoneType' object has no attribute
# 'get'"), so both are set to one-bit values (stdout to its log, stderr to its log and here).
if [ -x /usr/bin/torchrun ] && $py -c "import torch.distributed.run" 2>/dev/null; then
  pids=()
  for r in 1 0; do
    netns_exec "$r" env GLOO_SOCKET_IFNAME="${NETNS_RANK_DEV[$r]}" timeout 120 /usr/bin/torchrun \
      --nnodes 2 --nproc_per_node 1 --node_rank $r --master_addr $subnet.1 --master_port 29400 \
      --max_restarts 0 --redirects 1 --tee 2 --log_dir "$work/torchrun-log-$r" \
      --no_python "$blr" train "${ivon2[@]}" "${tiny[@]}" \
      --json "$work/torchrun.json" >/dev/null 2>"$work/torchrun.$r.err" &
    pids+=($!)
  done
  for r in 0 1; do
    wait "${pids[$r]}" || { fail "torchrun: node $((1 - r)) exited $?"; tail -5 "$work/torchrun.$((1 - r)).err" >&2; }
  done
  pids=()
  same one torchrun
else
  echo "torch_netns: torchrun (python3-torch) is not installed; its check did not run." >&2
fi

# ---- the same IVON run under bandwidth limits: same digest, and the limit is in the path ------
for mbit in 1000 100; do
  netns_limit "$mbit" 2>"$work/tc.err" || { fail "tbf $mbit Mbit/s: $(head -1 "$work/tc.err")"; continue; }
  pair "ivon-$mbit" "${ivon2[@]}"
  same one "ivon-$mbit"
  # the ring sends 2(W-1)/W of the payload per rank and step; the bucket lets 2 ms pass at once
  $py - "$work/ivon-$mbit.json" "$mbit" <<'PY' || fail "ivon at $mbit Mbit/s: the all-reduce is faster than the limit allows"
import json, sys
d = json.load(open(sys.argv[1]))["distributed"]
mbit = float(sys.argv[2])
w = d["world_size"]
sent = 2 * (w - 1) / w * d["allreduce_bytes_per_step"]
floor = 1000 * 0.8 * max(0.0, sent * 8 - mbit * 1e6 * 0.002) / (mbit * 1e6)
assert d["allreduce_ms_per_step"] >= floor, (d["allreduce_ms_per_step"], floor)
PY
done
netns_limit 0
echo "torch_netns: IVON, 2 ranks in 2 namespaces, per step (rank 0):"
for run in ivon ivon-1000 ivon-100; do
  $py -c "
import json, sys
d = json.load(open(sys.argv[1]))
o, = d['optimizers'].values()
x = d['distributed']
print(f'  {sys.argv[2]:>14}: step {o[\"step_ms\"]:.1f} ms, all-reduce {x[\"allreduce_ms_per_step\"]:.1f} ms of {x[\"allreduce_bytes_per_step\"]} bytes')
" "$work/$run.json" "$(case $run in ivon) echo 'no limit';; ivon-1000) echo '1 Gbit/s';; *) echo '100 Mbit/s';; esac)" ||
    fail "$run: no report"
done
finish
echo "all namespace checks passed"
