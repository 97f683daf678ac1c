#!/usr/bin/env python3
"""Selection and tables for scripts/comparison_table.sh (docs/results.md, "One table").

  comparison_table.py rank OUT SOURCE MODEL OPTIMIZER N
      prints the flags of OPTIMIZER's N-th best setting among the runs OUT/SOURCE/MODEL-*.json
      (each with its OUT/SOURCE/MODEL-*.flags), ranked by validation NLL of the prediction the
      method is used for (the posterior predictive where there is one, else the mean); a diverged
      run or a non-finite NLL ranks last.
  comparison_table.py table OUT
      prints the markdown tables: what was tried (validation), and the test results of the final
      runs (mean of the seeds, then each seed).
"""
import json
import math
import pathlib
import sys

TITLES = {"mlp": "MLP 784-500-300-10", "lenet": "LeNet-5",
          "binary-mlp": "Binary MLP 784-500-300-10 (BayesBiNN vs STE)"}
BAYESIAN = {"ivon", "vadam", "vogn", "kfac", "bsam", "mc-dropout", "adabayes", "adabayes-fp",
            "bayesbinn", "laplace"}
ORDER = ["ivon", "vogn", "vadam", "adabayes", "adabayes-fp", "kfac", "bsam", "sam", "mc-dropout",
         "laplace diag probit", "laplace kron probit", "laplace kron mc", "adamw", "sgd",
         "bayesbinn", "ste"]


def validation_nll(run):
    if run.get("diverged"):
        return math.inf
    v = run.get("validation", {})
    nll = v.get("predictive", v.get("mean", {})).get("nll", math.inf)
    return nll if math.isfinite(nll) else math.inf


def tried(out, source, model):
    """[(optimizer, flags, validation nll, validation accuracy, run file)] of every run."""
    rows = []
    for path in sorted((out / source).glob(f"{model}-*.json")):
        flags = dict(line.split("\t", 1) for line in
                     path.with_suffix(".flags").read_text().splitlines() if line)
        runs = json.loads(path.read_text())["optimizers"]
        for opt, run in runs.items():
            v = run.get("validation", {})
            acc = v.get("predictive", v.get("mean", {})).get("accuracy", math.nan)
            rows.append((opt, flags[opt].strip(), validation_nll(run), acc, path.name))
    return rows


def rank(out, source, model, optimizer, n):
    rows = sorted((r for r in tried(out, source, model) if r[0] == optimizer),
                  key=lambda r: (r[2], r[4]))
    if len(rows) < n:
        sys.exit(f"comparison_table: {optimizer} has {len(rows)} runs in {out / source}, "
                 f"fewer than the {n} asked for.")
    print(rows[n - 1][1])


def final_runs(out, model):
    """{row name: [metrics per seed]}; each metrics dict has the table's columns."""
    rows = {}
    for seed in (0, 1):
        path = out / "final" / f"{model}-seed{seed}.json"
        if not path.exists():
            continue
        for opt, run in json.loads(path.read_text())["optimizers"].items():
            add_rows(rows, opt, run, seed)
        for lap in sorted((out / "final").glob(f"{model}-seed{seed}-laplace-*.json")):
            structure, predictive = lap.stem.split("-laplace-")[1].split("-")
            run = json.loads(lap.read_text())["optimizers"]["laplace"]
            fit = json.loads(lap.read_text())["laplace"]["fit_seconds"]
            add_rows(rows, f"laplace {structure} {predictive}", run, seed, seconds=fit,
                     predictive_only=True)
    return rows


def add_rows(rows, name, run, seed, seconds=None, predictive_only=False):
    test = run["test"]
    ood = test.get("ood", {})
    epoch_s = run.get("epoch_seconds") or [math.nan]
    secs = seconds if seconds is not None else sum(epoch_s) / len(epoch_s)
    predictive = test.get("predictive", {})
    bayes = predictive.get("samples", 0) > 0 or predictive.get("method") == "probit"
    kinds = [("predictive", "auroc_predictive")] if bayes else [("mean", "auroc_mean")]
    if bayes and not predictive_only:
        kinds.insert(0, ("mean", "auroc_mean"))
    for kind, auroc in kinds:
        m = test[kind]
        label = name if not bayes else f"{name} ({'@ mean' if kind == 'mean' else 'predictive'})"
        rows.setdefault(label, {})[seed] = {
            "accuracy": m["accuracy"], "nll": m["nll"], "ece": m["ece"], "brier": m["brier"],
            "auroc": ood.get(f"{auroc}", math.nan), "seconds": secs,
            "diverged": run.get("diverged", False)}


def fmt(values, key, digits=4):
    vals = [v[key] for v in values]
    if any(isinstance(v, float) and math.isnan(v) for v in vals):
        return "—"
    mean = sum(vals) / len(vals)
    if key == "seconds":
        return f"{mean:.1f}" if len(vals) == 1 else f"{mean:.1f} ({' / '.join(f'{v:.1f}' for v in vals)})"
    if len(vals) == 1:
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} ({' / '.join(f'{v:.{digits}f}' for v in vals)})"


def order_key(label):
    base = label.split(" (")[0]
    return (ORDER.index(base) if base in ORDER else len(ORDER), label)


def table(out):
    for model in ("mlp", "lenet", "binary-mlp"):
        rows = final_runs(out, model)
        if not rows:
            continue
        seeds = sorted({s for r in rows.values() for s in r})
        print(f"\n### {TITLES[model]}: test set, mean of seeds {' and '.join(map(str, seeds))} "
              "(then each seed)\n")
        print("| method | accuracy | NLL | ECE | Brier | OOD AUROC | s/epoch (Laplace: fit s) |")
        print("|---|---|---|---|---|---|---|")
        for label in sorted(rows, key=order_key):
            per_seed = [rows[label][s] for s in sorted(rows[label])]
            flag = " **diverged**" if any(v["diverged"] for v in per_seed) else ""
            print(f"| {label}{flag} | " + " | ".join(
                fmt(per_seed, k) for k in ("accuracy", "nll", "ece", "brier", "auroc")) +
                f" | {fmt(per_seed, 'seconds')} |")
    for source, model in (("probe", "mlp"), ("confirm", "mlp"), ("probe", "lenet")):
        if not (out / source).exists():
            continue
        rows = tried(out, source, model)
        if not rows:
            continue
        print(f"\n### What was tried: {source}, {model} (validation NLL, accuracy; best first)\n")
        print("| optimizer | settings, best first: flags → validation NLL / accuracy |")
        print("|---|---|")
        for opt in sorted({r[0] for r in rows}, key=lambda o: order_key(o)):
            mine = sorted((r for r in rows if r[0] == opt), key=lambda r: (r[2], r[4]))
            cells = "; ".join(f"`{r[1]}` → {r[2]:.4f} / {r[3]:.4f}" for r in mine)
            print(f"| {opt} | {cells} |")


def main(argv):
    if len(argv) >= 2 and argv[0] == "rank" and len(argv) == 6:
        rank(pathlib.Path(argv[1]), argv[2], argv[3], argv[4], int(argv[5]))
    elif len(argv) == 2 and argv[0] == "table":
        table(pathlib.Path(argv[1]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
