#!/usr/bin/env bash
# Bring your own model: TorchScript modules written in Python (torch.jit.script(model).save) train
# from `blr train|compare --model-file` on Fashion-MNIST (an MLP and a small CNN, IVON and AdamW)
# and on a CSV regression table, learn split tasks one after another (`blr continual`) and are
# timed by `blr bench epoch|predict`; VOGN, OGN and kfac train Linear/Conv modules and VOGN refuses a
# BatchNorm and a GRU module naming the layer's parameters; checkpoints embed the module, so
# `blr eval` and `--resume` work after the .pt file is deleted, and the resumed run is bitwise the
# uninterrupted one, and `--init` takes a checkpoint of the same module under another file name
# (but not one of another module or of a built-in model); every bad model file is one sentence on
# stderr with exit status 2 and no LibTorch backtrace.
# Needs Debian's python3-torch (/usr/bin/python3, installed by scripts/setup.sh): without it this
# test fails, as the feature cannot be checked otherwise.
# Usage: torch_model_file.sh <path-to-blr> <source-dir>
set -uo pipefail
blr=${1:?usage: torch_model_file.sh <path-to-blr> <source-dir>}
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"
require_torch
if ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  echo "FAIL: /usr/bin/python3 cannot import torch (Debian's python3-torch, installed by scripts/setup.sh); --model-file cannot be tested." >&2
  exit 1
fi
check() {
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert $2, d" "$work/$1.json" \
    2>"$work/py.err" || { fail "$1: JSON fails $2"; tail -1 "$work/py.err" >&2; }
}
# A user error: exit status 2, one line on stderr containing TEXT, no C++ backtrace.
expect_error() {
  local name=$1 text=$2
  shift 2
  "$blr" "$@" >"$work/out" 2>"$work/err"
  local rc=$?
  if [ "$rc" -ne 2 ]; then
    fail "$name: exit status $rc, expected 2"; cat "$work/err" >&2
  elif ! grep -qiF -- "$text" "$work/err"; then
    fail "$name: stderr lacks '$text':"; cat "$work/err" >&2
  elif [ "$(wc -l <"$work/err")" -ne 1 ] || grep -q "frame #" "$work/err"; then
    fail "$name: stderr is not one line:"; cat "$work/err" >&2
  fi
}
quiet=(--threads 1 --quiet)
small=(--train-limit 1024 --test-limit 256 --epochs 1 --batch-size 32 "${quiet[@]}")

# torch.jit.script reads the classes' source, so the script is a file, not stdin.
cat >"$work/models.py" <<'PY'
import random, sys, zipfile
import torch
from torch import nn
d = sys.argv[1]
torch.manual_seed(0)

class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(784, 32)
        self.out = nn.Linear(32, 10)
    def forward(self, x):
        return self.out(torch.relu(self.hidden(x.flatten(1))))

class Cnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 5)
        self.out = nn.Linear(4 * 12 * 12, 10)
    def forward(self, x):
        return self.out(torch.max_pool2d(torch.relu(self.conv(x)), 2).flatten(1))

class Regression(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(2, 8)
        self.out = nn.Linear(8, 1)
    def forward(self, x):
        return self.out(torch.tanh(self.hidden(x)))

class Norm(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(784, 16)
        self.norm = nn.BatchNorm1d(16)
        self.out = nn.Linear(16, 10)
    def forward(self, x):
        return self.out(self.norm(self.hidden(x.flatten(1))))

class Recurrent(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(28, 8, batch_first=True)
        self.out = nn.Linear(8, 10)
    def forward(self, x):
        y, h = self.gru(x.flatten(1, 2))
        return self.out(y[:, -1])

class NoForward(nn.Module):
    def __init__(self):
        super().__init__()
        self.out = nn.Linear(784, 10)
    @torch.jit.export
    def predict(self, x):
        return self.out(x)

class TwoInputs(nn.Module):
    def __init__(self):
        super().__init__()
        self.out = nn.Linear(784, 10)
    def forward(self, x, y):
        return self.out(x) + y

class ThrowsLater(nn.Module):  # fails at its 4th call: the probe and 2 training steps pass
    def __init__(self):
        super().__init__()
        self.out = nn.Linear(784, 10)
        self.calls = 0
    def forward(self, x):
        self.calls += 1
        if self.calls > 3:
            raise RuntimeError("boom later")
        return self.out(x.flatten(1))

class IntOut(nn.Module):
    def __init__(self):
        super().__init__()
        self.out = nn.Linear(784, 10)
    def forward(self, x):
        return self.out(x.flatten(1)).long()

class Detached(nn.Module):
    def __init__(self):
        super().__init__()
        self.out = nn.Linear(784, 10)
    def forward(self, x):
        return self.out(x.flatten(1)).detach()

class Alloc(nn.Module):  # 160 GB in one allocation
    def __init__(self):
        super().__init__()
        self.out = nn.Linear(784, 10)
    def forward(self, x):
        return self.out(x.flatten(1)) + torch.ones(200000, 200000).sum()

class DoubleParams(nn.Module):  # saved in float64, casts its input itself
    def __init__(self):
        super().__init__()
        self.out = nn.Linear(784, 10).double()
    def forward(self, x):
        return self.out(x.flatten(1).double()).float()

for name, module in (("throwslater", ThrowsLater()), ("intout", IntOut()), ("detached", Detached()),
                     ("alloc", Alloc()), ("double", DoubleParams())):
    torch.jit.script(module).save(f"{d}/{name}.pt")
for name, module in (("mlp", Mlp()), ("cnn", Cnn()), ("reg", Regression()), ("bn", Norm()),
                     ("gru", Recurrent()), ("noforward", NoForward()), ("two", TwoInputs()),
                     ("seven", nn.Sequential(nn.Flatten(), nn.Linear(784, 7))),
                     ("unflat", nn.Linear(100, 10)), ("three", nn.Linear(2, 3))):
    torch.jit.script(module).save(f"{d}/{name}.pt")
torch.save(torch.zeros(3), f"{d}/tensor.pt")
with zipfile.ZipFile(f"{d}/zip.pt", "w") as z:
    z.writestr("archive/hello.txt", "not a model")
rng = random.Random(3)
with open(f"{d}/random.pt", "wb") as f:
    f.write(bytes(rng.randrange(256) for _ in range(4096)))
with open(f"{d}/reg.csv", "w") as f:
    f.write("x1,x2,y\n")
    for _ in range(600):
        x1, x2 = rng.gauss(0, 1), rng.gauss(0, 1)
        f.write(f"{x1},{x2},{2 * x1 - x2 + rng.gauss(0, 0.5)}\n")
PY
/usr/bin/python3 "$work/models.py" "$work" || fail "python3 could not write the models"
[ -s "$work/mlp.pt" ] || { fail "python3 did not write the models"; finish; }

# ---- training: IVON and AdamW on an MLP and a CNN ----------------------------------------------
for m in mlp cnn; do
  "$blr" compare --model-file "$work/$m.pt" --optimizers ivon,adamw "${small[@]}" \
    --test-samples 4 --json "$work/$m.json" >"$work/$m.out" 2>"$work/err" ||
    { fail "compare $m: exit status $?"; cat "$work/err" >&2; }
  for o in ivon adamw; do
    check "$m" "d['optimizers']['$o']['model'].startswith('torchscript $work/$m.pt (')"
    check "$m" "len(d['optimizers']['$o']['history']) == 1"
    # 1 epoch on 1024 images: well above the 10 % of guessing (its sd over 256 test images is 1.9 %)
    check "$m" "d['optimizers']['$o']['test']['mean']['accuracy'] > 0.3"
  done
done

# ---- regression on a CSV table -------------------------------------------------------------------
"$blr" train --model-file "$work/reg.pt" --data "$work/reg.csv" --task regression \
  --optimizer adamw --adamw-lr 0.02 --epochs 30 --batch-size 50 --json "$work/reg.json" \
  "${quiet[@]}" >/dev/null 2>"$work/err" || { fail "regression: exit status $?"; cat "$work/err" >&2; }
# y = 2·x1 − x2 + ε, sd(ε) = 0.5: RMSE near 0.5 (sd over 120 held-out rows ≈ 0.03, plus the fit's error)
check reg "abs(d['optimizers']['adamw']['test']['mean']['rmse'] - 0.5) < 0.15"

# ---- VOGN: exact per-example squared gradients of Linear/Conv, refusal of BatchNorm and GRU ------
for m in mlp cnn; do
  "$blr" train --model-file "$work/$m.pt" --optimizer vogn "${small[@]}" --test-samples 4 \
    --json "$work/vogn_$m.json" >/dev/null 2>"$work/err" ||
    { fail "vogn $m: exit status $?"; cat "$work/err" >&2; }
  check "vogn_$m" "d['optimizers']['vogn']['test']['mean']['accuracy'] > 0.3"
done
# OGN (the same engine) on the MLP, kfac (Kronecker factors of Linear and Conv2d weights) on the CNN.
for run in "ogn mlp" "kfac cnn"; do
  set -- $run
  "$blr" train --model-file "$work/$2.pt" --optimizer "$1" "${small[@]}" --test-samples 4 \
    --json "$work/$1_$2.json" >/dev/null 2>"$work/err" || { fail "$1 $2: exit status $?"; cat "$work/err" >&2; }
  check "$1_$2" "d['optimizers']['$1']['test']['mean']['accuracy'] > 0.3"
done
expect_error vogn-batchnorm "the batch norm of 'norm.weight' and 'norm.bias'" train --model-file "$work/bn.pt" --optimizer vogn "${small[@]}"
expect_error vogn-gru "parameter 'gru.weight_ih_l0' is used by" train --model-file "$work/gru.pt" --optimizer vogn "${small[@]}"
# blr compare refuses before training any optimizer: IVON, listed first, leaves no checkpoint.
expect_error compare-vogn-batchnorm "the batch norm of 'norm.weight' and 'norm.bias'" compare \
  --model-file "$work/bn.pt" --optimizers ivon,vogn --out "$work/refused" "${small[@]}"
[ ! -e "$work/refused/ivon.ckpt" ] || fail "compare trained IVON before refusing VOGN's model"
# The same modules train with IVON (it needs no per-example gradients).
"$blr" train --model-file "$work/gru.pt" --optimizer ivon "${small[@]}" --test-samples 2 \
  >/dev/null 2>"$work/err" || { fail "ivon gru: exit status $?"; cat "$work/err" >&2; }

# ---- checkpoints embed the module: resume bitwise and eval after the file is gone ----------------
cp "$work/mlp.pt" "$work/gone.pt"
"$blr" train --model-file "$work/gone.pt" --optimizer ivon --train-limit 256 --test-limit 128 \
  --epochs 2 --batch-size 64 --test-samples 4 --checkpoint-every 1 --out "$work/run" \
  --json "$work/full.json" "${quiet[@]}" >/dev/null 2>"$work/err" ||
  { fail "checkpointed run: exit status $?"; cat "$work/err" >&2; }
rm -f "$work/gone.pt"
"$blr" train --resume "$work/run/checkpoints/ivon-epoch-1.ckpt" --epochs 2 --json "$work/resumed.json" \
  "${quiet[@]}" >/dev/null 2>"$work/err" || { fail "resume: exit status $?"; cat "$work/err" >&2; }
check resumed "d['optimizers']['ivon']['parameter_digest'] == json.load(open(sys.argv[1].replace('resumed', 'full')))['optimizers']['ivon']['parameter_digest']"
"$blr" eval --checkpoint "$work/run/ivon.ckpt" --json "$work/eval.json" "${quiet[@]}" >/dev/null \
  2>"$work/err" || { fail "eval: exit status $?"; cat "$work/err" >&2; }
check eval "d['optimizers']['ivon']['parameter_digest'] == json.load(open(sys.argv[1].replace('eval', 'full')))['optimizers']['ivon']['parameter_digest']"
check eval "d['optimizers']['ivon']['test']['mean'] == json.load(open(sys.argv[1].replace('eval', 'full')))['optimizers']['ivon']['test']['mean']"

# ---- --init: the same module under another file name starts from the checkpoint's parameters ----
cp "$work/mlp.pt" "$work/renamed.pt"
"$blr" train --model-file "$work/renamed.pt" --init "$work/run/ivon.ckpt" --optimizer adamw \
  --train-limit 256 --test-limit 128 --epochs 1 --batch-size 64 --json "$work/init.json" \
  "${quiet[@]}" >/dev/null 2>"$work/err" || { fail "init renamed: exit status $?"; cat "$work/err" >&2; }
# It starts where the checkpoint's 8 IVON steps left the module, below the fresh module's loss
# (about log 10 = 2.3), which the checkpointed run started from on the same images.
check init "d['optimizers']['adamw']['initial_loss'] < json.load(open(sys.argv[1].replace('init', 'full')))['optimizers']['ivon']['initial_loss'] - 0.1"
expect_error init-other-module "does not fit this run's model: The saved model has no parameter" \
  train --model-file "$work/cnn.pt" --init "$work/run/ivon.ckpt" "${small[@]}"
"$blr" train --optimizer adamw --hidden 16 --train-limit 256 --test-limit 128 --epochs 1 \
  --out "$work/builtin" "${quiet[@]}" >/dev/null 2>"$work/err" ||
  { fail "built-in run: exit status $?"; cat "$work/err" >&2; }
expect_error init-builtin "holds the built-in model 'mlp 784-16-10'" \
  train --model-file "$work/mlp.pt" --init "$work/builtin/adamw.ckpt" "${small[@]}"

# ---- continual learning on the user's model -------------------------------------------------------
# The file's MLP (25 450 parameters, not blr's 784-32-10 of the same size) through two split tasks,
# with IVON's posterior as the next prior and with retraining (every fresh model from the file).
continual=(--task-count 2 --train-limit 600 --test-limit 200 --batch-size 100 "${quiet[@]}")
for mode in posterior retrain; do
  extra=()
  [ "$mode" = retrain ] && extra=(--optimizer adamw --retrain)
  "$blr" continual --model-file "$work/mlp.pt" "${continual[@]}" "${extra[@]}" \
    --json "$work/continual-$mode.json" >"$work/continual-$mode.out" 2>"$work/err" ||
    { fail "continual $mode: exit status $?"; cat "$work/err" >&2; }
  check "continual-$mode" "d['model'] == 'torchscript $work/mlp.pt (25450 parameters)'"
  check "continual-$mode" "d['config']['model_file'] == '$work/mlp.pt'"
  check "continual-$mode" "[len(r) for r in d['accuracy']] == [1, 2]"
  # Each class pair is easy (T-shirt/trouser, pullover/dress): well above the 0.5 of chance.
  check "continual-$mode" "min(min(r) for r in d['accuracy']) > 0.75"
done
expect_error continual-shape "returns shape [2, 7] for inputs [2, 1, 28, 28]; continual learning" \
  continual --model-file "$work/seven.pt" "${continual[@]}"
expect_error continual-hidden "drop --hidden" continual --model-file "$work/mlp.pt" --hidden 10 \
  "${continual[@]}"
expect_error continual-missing "Cannot open the model file" continual \
  --model-file "$work/nothere.pt" "${continual[@]}"

# ---- benchmarks on the user's model -----------------------------------------------------------------
"$blr" bench epoch --model-file "$work/mlp.pt" --optimizers ivon,vogn,adamw --train-limit 256 \
  --rounds 1 --threads 1 --json "$work/bench.json" >"$work/bench.out" 2>"$work/err" ||
  { fail "bench epoch: exit status $?"; cat "$work/err" >&2; }
check bench "d['model'] == {'model_file': '$work/mlp.pt'} and d['steps_per_epoch'] == 2"
check bench "all(d[o]['median_epoch_seconds'] > 0 for o in ('ivon', 'vogn', 'adamw'))"
grep -qF "model torchscript $work/mlp.pt," "$work/bench.out" || fail "bench epoch: header lacks the model file"
"$blr" bench predict --model-file "$work/cnn.pt" --optimizer ivon --samples 2 --test-limit 64 \
  --repeats 1 --threads 1 --json "$work/predict.json" >/dev/null 2>"$work/err" ||
  { fail "bench predict: exit status $?"; cat "$work/err" >&2; }
check predict "d['samples'] == 2 and d['examples'] == 64 and d['predictive_seconds'] > 0"
expect_error bench-hidden "drop --hidden" bench epoch --model-file "$work/mlp.pt" --hidden 10
expect_error bench-shape "returns shape [2, 7]" bench epoch --model-file "$work/seven.pt" \
  --optimizers adamw --train-limit 256 --rounds 1 --threads 1

# ---- bad model files and flags: one sentence, exit status 2 --------------------------------------
expect_error missing "Cannot open the model file" train --model-file "$work/nothere.pt" "${small[@]}"
expect_error random "not a TorchScript archive" train --model-file "$work/random.pt" "${small[@]}"
expect_error zip "without TorchScript's records" train --model-file "$work/zip.pt" "${small[@]}"
expect_error torch-save "written by torch.save" train --model-file "$work/tensor.pt" "${small[@]}"
expect_error no-forward "has no forward method" train --model-file "$work/noforward.pt" "${small[@]}"
expect_error two-inputs "takes 2 inputs" train --model-file "$work/two.pt" "${small[@]}"
expect_error forward-fails "fails on an input batch of shape [2, 1, 28, 28]" \
  train --model-file "$work/unflat.pt" "${small[@]}"
expect_error wrong-shape "returns shape [2, 7] for inputs [2, 1, 28, 28]; expected [2, 10]" \
  train --model-file "$work/seven.pt" "${small[@]}"
expect_error regression-shape "returns shape [2, 3] for inputs [2, 2]; expected [2]" \
  train --model-file "$work/three.pt" \
  --data "$work/reg.csv" --task regression "${quiet[@]}"
truncate -s 1100M "$work/huge.pt"  # sparse: no disk space used
expect_error too-large "more than the 1073741824 bytes" train --model-file "$work/huge.pt" "${small[@]}"
rm -f "$work/huge.pt"
expect_error with-model "drop --model" train --model-file "$work/mlp.pt" --model lenet "${small[@]}"
expect_error with-hidden "drop --hidden" compare --model-file "$work/mlp.pt" --hidden 10 \
  --optimizers ivon "${small[@]}"
for o in mc-dropout bayesbinn ste; do
  expect_error "builtin-$o" "needs one of blr's own models" train --model-file "$work/mlp.pt" \
    --optimizer "$o" "${small[@]}"
done
expect_error resume-model-file "drop --model-file" train --resume "$work/run/ivon.ckpt" \
  --model-file "$work/mlp.pt" "${quiet[@]}"

# ---- a forward that goes wrong later or quietly: named at the call that fails ---------------------
# (before 2026-11-28: LibTorch's "The following operation failed in the TorchScript interpreter",
# "log_softmax_lastdim_kernel_impl not implemented for 'Long'", "element 0 of tensors does not
# require grad", the allocator's enforce text, and "mat1 and mat2 must have the same dtype")
expect_error throws-later "The model in '$work/throwslater.pt' fails on an input batch of shape [32, 1, 28, 28] (Float): boom later." \
  train --model-file "$work/throwslater.pt" "${small[@]}"
expect_error int-out "returns Long outputs for an input batch of shape [2, 1, 28, 28]; blr needs floating-point logits" \
  train --model-file "$work/intout.pt" "${small[@]}"
expect_error detached "returns outputs without an autograd graph to its parameters" \
  train --model-file "$work/detached.pt" "${small[@]}"
expect_error double "blr converted the model's Double parameters to Float; if its forward casts its inputs to Double" \
  train --model-file "$work/double.pt" "${small[@]}"
# One 160 GB allocation fails at once only where the kernel refuses what it cannot back
# (vm.overcommit_memory 0 or 2); with 1 it would be granted and filled.
if [ "$(cat /proc/sys/vm/overcommit_memory 2>/dev/null)" != 1 ]; then
  expect_error alloc "it ran out of memory (one allocation of 160000000000 bytes, 160 GB)" \
    train --model-file "$work/alloc.pt" "${small[@]}"
fi
finish
