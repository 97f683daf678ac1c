#!/usr/bin/env python3
"""Issue 29, item 6: one results table, every task x method, mean ± sd over seeds, from the JSON
files the result scripts write (no number is typed by hand; a *.recorded.json file holds the
digits reported for a run whose output was not kept, and says where they were reported):

  --demo FILE     `blr compare --seeds N` of scripts/demo.sh (the MLP, image-small recipe)
  --vision DIR    scripts/vision_results.sh's outputs (lenet-*.json, resnet20-*.json); a file
                  <name>-seed<S>.recorded.json holds the reported metrics of a run whose output
                  was not kept, with "recorded_from" naming where they were reported; repeated
                  for another protocol (PROTOCOL=uncertainty-baselines runs, whose task names
                  their budget; the published rows go under the last LeNet-5 table)
  --lm DIR        scripts/lm_results.sh's outputs (the learning rates run with 3 seeds); repeated
                  for other budgets (EPOCHS=2 runs in their own directory)

Columns: accuracy (perplexity for the language model), NLL (per token for the language model,
the logarithm of its perplexity), ECE (15 bins; next-token ECE for the language model), OOD AUROC (the test
images against the same images inverted; the language model has none), and the training seconds
per epoch as a ratio to AdamW's in the same runs. Published numbers go next to the task they were
measured on (same data and model; protocols differ, as the notes say).

Usage: scripts/results_table.py [--demo FILE] [--vision DIR] [--lm DIR] > table.md
"""
import argparse
import json
import math
import pathlib
import re
import statistics
import sys

PUBLISHED = {
    # google/uncertainty-baselines, baselines/mnist/README.md (LeNet-5 on Fashion-MNIST;
    # deterministic.py: the first 50 000 training images, Adam 1e-3, batch 256, 5 000 steps):
    # ../shared/research/peers_update.md §3.
    "LeNet-5": [
        ("deterministic (uncertainty-baselines)", "0.910", "0.321", "", ""),
        ("ensemble of 10 (uncertainty-baselines)", "0.932", "0.200", "0.010", ""),
        ("VI (uncertainty-baselines)", "0.895", "0.292", "0.011", ""),
    ],
}


def mean_sd(values, digits):
    values = [v for v in values if v is not None]
    if not values:
        return "—"
    m = statistics.fmean(values)
    if len(values) == 1:
        return f"{m:.{digits}f} (1 seed)"
    return f"{m:.{digits}f} ± {statistics.stdev(values):.{digits}f}"


class Rows:
    """Per-method lists of per-seed metric values, in the order methods are first seen."""

    def __init__(self):
        self.rows = {}

    def add(self, method, accuracy, nll, ece, auroc, seconds):
        r = self.rows.setdefault(method, {"acc": [], "nll": [], "ece": [], "auroc": [], "s": []})
        for key, value in (("acc", accuracy), ("nll", nll), ("ece", ece), ("auroc", auroc),
                           ("s", seconds)):
            r[key].append(value)


def compare_run(rows, name, run, label):
    """One optimizer's run of `blr compare`/`blr train`: the predictive (the mean where there is
    none), and the temperature-scaled predictive when the run fitted one."""
    test = run["test"]
    pred = test["predictive"] if test["predictive"].get("samples", 0) else test["mean"]
    ood = test.get("ood", {})
    seconds = statistics.fmean(run["epoch_seconds"])
    k = test["predictive"].get("samples", 0)
    method = f"{label}, predictive (K = {k})" if k else label
    rows.add(method, pred["accuracy"], pred["nll"], pred["ece"],
             ood.get("auroc_predictive"), seconds)
    ts = test.get("temperature_scaled")
    if ts:
        t = ts["predictive"]
        rows.add(f"{label}, temperature-scaled", t["accuracy"], t["nll"], t["ece"],
                 t.get("ood_auroc"), seconds)


SCHEDULES = ("constant", "cosine", "warmup-cosine")
LABELS = {"ivon": "IVON", "adamw": "AdamW", "sgd": "SGD", "mc-dropout": "MC dropout",
          "vogn": "VOGN", "laplace": "Laplace"}


def demo_rows(path):
    d = json.load(open(path))
    rows = Rows()
    for name, runs in d["seeds"]["runs"].items():
        for run in runs:
            compare_run(rows, name, run, LABELS.get(name, name))
    return rows, d


def tag_setting(tag, name, d, run):
    """What a compare-TAG run changed, as the words after its method: a schedule's name (compare-
    cosine), essN (IVON's effective sample size), wdX (the weight decay), each with the value the
    run used; a tag of other words (compare-adamw4e3, a learning rate) names the rate. The
    optimizer's own name in a tag says only which part of compare it is."""
    words = [w for w in tag.split("-") if w and w != name]
    if not words:
        return ""
    parts = []
    for w in words:
        if w in SCHEDULES:
            parts.append(f"{d['schedule']} schedule")
        elif re.fullmatch(r"ess\d+", w):
            parts.append(f"ess {run['options']['ess']:g}")
        elif re.fullmatch(r"wd[0-9.e-]+", w):
            parts.append(f"weight decay {run['options']['weight_decay']:g}")
        else:
            return f" (lr {run['options']['lr']:g})"
    return f" ({', '.join(parts)})"


def vision_rows(directory, model):
    rows = Rows()
    files = sorted(pathlib.Path(directory).glob(f"{model}-*-seed*.json"))
    by_kind = {}
    for f in files:
        named = re.fullmatch(rf"{model}-(.*)-seed\d+(\.recorded)?\.json", f.name)
        if not named:
            sys.exit(f"results_table.py: {f} is not named "
                     "<model>-<what>-seed<S>[.recorded].json.")
        by_kind.setdefault(named.group(1), []).append(f)
    has_separate_dropout = "mc-dropout" in by_kind
    # compare-TAG: a part of compare run on its own (vision_results.sh's TAG), read alike.
    # A tag other than the optimizer's name is another setting of it (e.g. compare-adamw4e3):
    # its rows carry the learning rate.
    compare_files = [(kind.partition("-")[2], f) for kind, fs in sorted(by_kind.items())
                     if kind.split("-")[0] == "compare" for f in fs]
    for tag, f in compare_files:
        d = json.load(open(f))
        for name, run in d["optimizers"].items():
            if name == "mc-dropout" and has_separate_dropout:
                continue  # superseded by the run with the model's input kept whole
            compare_run(rows, name, run, LABELS.get(name, name) + tag_setting(tag, name, d, run))
    for f in by_kind.get("mc-dropout", []):
        d = json.load(open(f))
        compare_run(rows, "mc-dropout", d["optimizers"]["mc-dropout"], "MC dropout")
    # laplace[-grid][-TAG]: the post-hoc Laplace of the AdamW run of compare[-TAG].
    laplace_kinds = sorted(k for k in by_kind if re.fullmatch(r"laplace(-grid)?(-.+)?", k))
    for kind in laplace_kinds:
        grid = kind.startswith("laplace-grid")
        for f in by_kind[kind]:
            d = json.load(open(f))
            run = d["optimizers"]["laplace"]
            subset = "last layer, " if d["laplace"].get("subset") in ("last-layer", "last_layer") else ""
            label = (f"Laplace, {subset}δ by validation NLL, on AdamW" if grid
                     else f"Laplace ({subset}Kronecker GGN, probit) on AdamW")
            tag = kind[len("laplace-grid" if grid else "laplace"):].lstrip("-")
            lr = re.fullmatch(r"adamw(\d+)e(\d+)", tag)
            if lr:  # compare-adamw8e3: AdamW at lr 8e-3
                label += f" (lr {float(lr.group(1)) * 10 ** -int(lr.group(2)):g})"
            elif tag:
                label += f" ({tag})"
            test = run["test"]
            p = test["predictive"]
            rows.add(label, p["accuracy"], p["nll"], p["ece"],
                     test.get("ood", {}).get("auroc_predictive"), None)
    for f in by_kind.get("ensemble", []):
        d = json.load(open(f))
        e = d["ensemble"]
        # all members, evaluation included; a recorded run has no time
        per_epoch = d["seconds"] / d["epochs"] if d.get("seconds") else None
        rows.add(f"deep ensemble, {e['members']} AdamW", e["test"]["accuracy"], e["test"]["nll"],
                 e["test"]["ece"], e["ood_auroc"], per_epoch)
        t = e["temperature_scaled"]
        rows.add("deep ensemble, temperature-scaled", t["accuracy"], t["nll"], t["ece"],
                 t.get("ood_auroc"), per_epoch)
    epochs, setting = None, ""
    if files:
        first = json.load(open(files[0]))
        epochs = first.get("epochs")
        if compare_files and not compare_files[0][0]:  # an untagged compare: the budget's setting
            d = json.load(open(compare_files[0][1]))
            run = next(iter(d["optimizers"].values()))
            if d.get("batch_size", 128) != 128:
                images = f"{run['train_size']:,}".replace(",", " ")
                setting = (f"{d['epochs']} epochs, batch {d['batch_size']}, {d['schedule']} rate, "
                           f"{images} training images")
    return rows, epochs, setting


def lm_rows(directory):
    """The (optimizer, learning rate) pairs that were run with three or more seeds (the chosen
    ones; the grid's other rates have one seed)."""
    rows = Rows()
    groups = {}
    for f in sorted(pathlib.Path(directory).glob("*-seed*.json")):
        if not re.fullmatch(r".*-seed\d+\.json", f.name):
            continue  # the seed0 diagnostics (another noise draw, two epochs) are not table rows
        d = json.load(open(f))
        (name, run), = d["optimizers"].items()
        groups.setdefault((name, run["options"]["lr"]), {})[d["seed"]] = run
    chosen = {key: runs for key, runs in groups.items() if len(runs) >= 3}
    # The seeds every chosen rate was run with, so that the rows compare the same seeds.
    seeds = set.intersection(*(set(runs) for runs in chosen.values())) if chosen else set()
    epochs = set()
    for (name, lr), runs in sorted(chosen.items(), key=lambda item: item[0][0]):
        for seed in sorted(seeds):
            run = runs[seed]
            epochs.add(len(run["history"]))
            lm = run["language_model"]
            seconds = statistics.fmean(run["epoch_seconds"])
            label = f"{LABELS.get(name, name)} (lr {lr:g})"
            if name == "ivon":
                rows.add(f"{label}, predictive (K = 16)", lm["test_perplexity_predictive"],
                         math.log(lm["test_perplexity_predictive"]),
                         lm["test_next_token_ece_predictive"], None, seconds)
                rows.add(f"{label}, at the mean", lm["test_perplexity_mean"],
                         math.log(lm["test_perplexity_mean"]), lm["test_next_token_ece_mean"], None,
                         seconds)
            else:
                rows.add(label, lm["test_perplexity_mean"], math.log(lm["test_perplexity_mean"]),
                         lm["test_next_token_ece_mean"], None, seconds)
    if len(epochs) > 1:
        raise SystemExit(f"{directory}: runs of {sorted(epochs)} epochs in one directory; give "
                         "each budget its own --lm directory.")
    return rows, (epochs.pop() if epochs else 1)


def print_task(task, rows, first_column="accuracy", published=None):
    adamw = [m for m in rows.rows if m.startswith("AdamW") and "temperature" not in m]
    base = statistics.fmean(rows.rows[adamw[0]]["s"]) if adamw and rows.rows[adamw[0]]["s"][0] else None
    for method, r in rows.rows.items():
        seconds = [s for s in r["s"] if s is not None]
        ratio = f"{statistics.fmean(seconds) / base:.2f}×" if base and seconds else "—"
        acc = mean_sd(r["acc"], 3 if first_column == "perplexity" else 4)
        print(f"| {task} | {method} | {acc} | {mean_sd(r['nll'], 4)} | {mean_sd(r['ece'], 4)} | "
              f"{mean_sd(r['auroc'], 3)} | {ratio} | {len(r['acc'])} |")
    for method, acc, nll, ece, auroc in PUBLISHED.get(published, []):
        print(f"| {task} | *published:* {method} | {acc} | {nll} | {ece or '—'} | {auroc or '—'} | — | — |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--demo")
    parser.add_argument("--vision", action="append", default=[],
                        help="a directory of vision_results.sh (repeat for another protocol)")
    parser.add_argument("--lm", action="append", default=[],
                        help="a directory of lm_results.sh (repeat for other budgets)")
    args = parser.parse_args()
    if not (args.demo or args.vision or args.lm):
        parser.error("give at least one of --demo, --vision and --lm")
    print("| task | method | accuracy (perplexity) | NLL | ECE | OOD AUROC | s/epoch ÷ AdamW | seeds |")
    print("|---|---|---|---|---|---|---|---|")
    if args.demo:
        rows, d = demo_rows(args.demo)
        print_task(f"MLP 784-500-300-10, {d['epochs']} epochs", rows)
    # The published LeNet-5 rows go under the last LeNet-5 table (the published protocol's when
    # its directory is given last, as docs/results.md does).
    tables = [(model, label, *vision_rows(directory, model)) for directory in args.vision
              for model, label in (("lenet", "LeNet-5"), ("resnet20", "ResNet-20"))]
    tables = [t for t in tables if t[2].rows]
    last_lenet = max((i for i, t in enumerate(tables) if t[0] == "lenet"), default=None)
    for i, (model, label, rows, epochs, setting) in enumerate(tables):
        task = f"{label}, {setting}" if setting else (
            label if model == "lenet" else f"{label}, {epochs} epochs")
        print_task(task, rows, published="LeNet-5" if i == last_lenet else None)
    for directory in args.lm:
        rows, epochs = lm_rows(directory)
        tokens = "2.32 M tokens" if epochs == 1 else f"{epochs} epochs of 2.32 M tokens"
        print_task(f"GPT 4×128, {tokens}", rows, "perplexity")
    return 0


if __name__ == "__main__":
    sys.exit(main())
