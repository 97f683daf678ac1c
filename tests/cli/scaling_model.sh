#!/usr/bin/env bash
# scripts/scaling_model.py (docs/distributed.md "Scaling"): on synthetic measurements made here
# from known parameters (compute per optimizer, bandwidth efficiency, latency; 1 % noise), the fit
# recovers them and its residuals are small; measurements whose communication grows as W² (not as
# the ring's 2(W-1)/W) are refused with a sentence; the projection is compute + all-reduce with
# those parameters, IVON's bytes twice AdamW's; a parameter count the model formulas cannot give
# is refused; bad input gets one sentence.
# Usage: scaling_model.sh <path-to-blr> <source-dir>
set -uo pipefail
blr=${1:?usage: scaling_model.sh <path-to-blr> <source-dir>}
src=${2:?usage: scaling_model.sh <path-to-blr> <source-dir>}
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"
py=/usr/bin/python3
if ! $py -c "import numpy" 2>/dev/null; then
  echo "SKIP: NumPy is not installed for $py." >&2
  exit 77
fi
model="$src/scripts/scaling_model.py"
synth() {  # OUT COMM: synthetic measurements; COMM "ring" (the model) or "square" (W² instead)
  $py - "$1" "$2" <<'PY'
import random, sys
random.seed(7)
out, comm = sys.argv[1:]
c0 = {"adamw": 4.0, "ivon": 6.0}
c1 = {"adamw": 0.20, "ivon": 0.23}
nbytes = {"adamw": 246824, "ivon": 493648}
eta, alpha, cores, batch = 0.85, 0.25, 2, 120
with open(out, "w") as f:
    f.write("kind,round,optimizer,world_size,mbit,batch_per_rank,step_ms,allreduce_ms,allreduce_bytes,parameter_digest,cores,load\n")
    for o in c0:
        for w in (1, 2, 3, 4):
            m = batch // w
            rho = max(1, w / cores)
            compute = rho * (c0[o] + c1[o] * m)
            f.write(f"compute,1,{o},{w},0,{m},{compute * random.gauss(1, 0.01)},0,0,x,{cores},0\n")
            if w == 1:
                continue
            for mbit in (0, 1000, 100, 10):
                sent = 2 * (w - 1) / w if comm == "ring" else w * w / 2
                a = (sent * 8 * nbytes[o] / (eta * mbit * 1e6) * 1e3 if mbit else 0) + 2 * (w - 1) * alpha
                t = (compute + a) * random.gauss(1, 0.01)
                f.write(f"dist,1,{o},{w},{mbit},{m},{t},{a},{nbytes[o]},x,{cores},0\n")
PY
}
synth "$work/good.csv" ring
synth "$work/square.csv" square
printf 'model,parameters\nresnet20,269434\ngpt,%s\n' $((96 * 128 + 128 * 128 + 4 * (12 * 128 * 128 + 13 * 128) + 2 * 128)) >"$work/params.csv"

# ---- the fit recovers the parameters that made the data -----------------------------------------
$py "$model" "$work/good.csv" --parameters "$work/params.csv" --max-rms-residual 0.03 \
  --json "$work/good.json" --gbits 25 --ranks 8,512 >"$work/good.out" 2>"$work/good.err" ||
  { fail "good data: exit $?"; cat "$work/good.err" >&2; }
$py - "$work/good.json" <<'PY' || fail "the fit does not recover the parameters of the synthetic data"
import json, sys
d = json.load(open(sys.argv[1]))
f = d["fit"]
def near(x, y, tol, what):
    assert abs(x - y) <= tol * abs(y), (what, x, y)
near(f["eta"], 0.85, 0.03, "eta")
near(f["alpha_ms"], 0.25, 0.15, "alpha")
for o, c0, c1 in (("adamw", 4.0, 0.20), ("ivon", 6.0, 0.23)):
    near(f["optimizers"][o]["c0_ms"], c0, 0.15, o + " c0")
    near(f["optimizers"][o]["c1_ms_per_example"], c1, 0.05, o + " c1")
assert f["rms_relative_residual"] < 0.02, f["rms_relative_residual"]
assert len(f["rows"]) == 2 * (4 + 3 * 4), len(f["rows"])
# the projection: compute + ring all-reduce with the fitted eta and alpha, IVON twice the bytes
p = d["projection"]
models = {r["model"] for r in p}
assert any(m.startswith("GPT 4x128 (vocabulary 96)") for m in models), models
assert "GPT-2 124M" in models and "ResNet-50 (ImageNet)" in models, models
for r in p:
    if r["model"] == "GPT-2 124M":
        assert r["parameters"] == 124439808, r["parameters"]
        assert r["bytes"] == (4 if r["optimizer"] == "adamw" else 8) * 124439808
    if r["model"].startswith("ResNet-20"):
        assert r["parameters"] == 269722, r["parameters"]
    for c in r["ranks"]:
        w = c["ranks"]
        comm = 2 * (w - 1) / w * 8 * r["bytes"] / (f["eta"] * r["gbit"] * 1e9) * 1e3 + 2 * (w - 1) * f["alpha_ms"]
        near(c["step_ms"], r["compute_ms"] + comm, 1e-9, "step")
        near(c["step_ms_overlap"], r["compute_ms"] + max(0, comm - 2 / 3 * r["compute_ms"]), 1e-9, "overlap")
PY
grep -qF "| ivon | 4 | 10 Mbit/s | 30 |" "$work/good.out" || fail "good data: no validation row for IVON, 4 ranks, 10 Mbit/s"

# ---- communication that grows as W² does not fit: refused with a sentence -----------------------
$py "$model" "$work/square.csv" --max-rms-residual 0.03 >"$work/sq.out" 2>"$work/sq.err" &&
  fail "W² communication: exit 0"
grep -qE "^scaling_model: (The model does not fit the measurements: the RMS relative residual is|The fit gives)" "$work/sq.err" ||
  { fail "W² communication: no sentence"; cat "$work/sq.err" >&2; }

# ---- bad input ----------------------------------------------------------------------------------
printf 'model,parameters\nresnet20,269435\n' >"$work/bad-params.csv"
$py "$model" "$work/good.csv" --parameters "$work/bad-params.csv" >"$work/out" 2>"$work/err" &&
  fail "a wrong ResNet-20 count: exit 0"
grep -qF "blr's ResNet-20 has 269435 parameters, not the 269434 of the formula" "$work/err" ||
  { fail "a wrong ResNet-20 count: no sentence"; cat "$work/err" >&2; }
printf 'a,b\n1,2\n' >"$work/junk.csv"
$py "$model" "$work/junk.csv" >"$work/out" 2>"$work/err" && fail "junk CSV: exit 0"
grep -qF "is not a measurements CSV of scripts/netns_scaling.sh" "$work/err" || { fail "junk CSV: no sentence"; cat "$work/err" >&2; }
$py "$model" "$work/good.csv" --gbits 10,x >"$work/out" 2>"$work/err" && fail "--gbits x: exit 0"
grep -qF "Option '--gbits' must be a comma-separated list of numbers" "$work/err" || { fail "--gbits x: no sentence"; cat "$work/err" >&2; }
finish
echo "all scaling-model checks passed"
