#!/usr/bin/env python3
"""The data-parallel scaling model of docs/distributed.md ("Scaling"): fit, validate, project.

Step time of W ranks, each with a per-rank batch m, all-reducing B bytes per step over links of
R bit/s (a ring: each rank sends and receives 2(W-1)/W * B bytes, in 2(W-1) messages):

    T(W, R, m) = rho(W) * (c0_o + c1_o * m)                    compute (optimizer o)
               + 2(W-1)/W * 8 B / (eta R)                      bandwidth (eta: efficiency)
               + 2(W-1) * alpha                                latency (alpha: per message)
               - overlap                                       (0 in blr: the all-reduce follows
                                                               the backward pass)

rho(W) = max(1, W / cores) is the contention of W one-thread ranks on this machine's cores
(`cores` is recorded with each measurement; 1 when there is a core per rank). Unlimited links
(mbit 0) have no bandwidth term. The parameters enter linearly and are fitted by least squares on
the relative error (each row divided by its measured time), all at once, from the medians over
rounds of the rows of scripts/netns_scaling.sh: the compute rows (one process, and K processes
at once) and the data-parallel runs; alpha is bounded below by 0.

Projection (``--parameters``): per-rank compute = 3 * forward FLOPs * per-rank batch / F (the
backward pass costs twice the forward; F the sustained FLOP/s of one rank, an assumption given
with --flops); bytes = 4 P (AdamW: the gradient) or 8 P (IVON: the gradient and noise * gradient,
docs/distributed.md "What is reduced"); eta and alpha as fitted; overlap 0 (blr) or the DDP ideal
(the all-reduce hidden behind the backward pass, 2/3 of the compute).

Usage:
  scaling_model.py MEASUREMENTS.csv [--parameters PARAMETERS.csv] [--json OUT] [--plot PNG]
                   [--max-rms-residual X] [--flops F] [--alpha-us A] [--gbits 10,25,100]
                   [--ranks 8,32,128,512]
Exit status 1 with one sentence when the data do not fit (RMS relative residual above
--max-rms-residual, or a fitted efficiency or latency that is not positive).
"""
import argparse
import csv
import json
import os
import shutil
import subprocess
import sys

import numpy as np


class Failure(Exception):
    pass


def read_rows(path):
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        raise Failure(f"Cannot read the measurements {path}: {e.strerror}.")
    need = {"kind", "optimizer", "world_size", "mbit", "batch_per_rank", "step_ms",
            "allreduce_ms", "allreduce_bytes", "cores"}
    if not rows or not need <= set(rows[0]):
        raise Failure(f"{path} is not a measurements CSV of scripts/netns_scaling.sh (columns "
                      f"{', '.join(sorted(need))}).")
    # medians over rounds of the same configuration
    groups = {}
    for r in rows:
        key = (r["kind"], r["optimizer"], int(r["world_size"]), int(r["mbit"]))
        groups.setdefault(key, []).append(r)
    out = []
    for (kind, opt, w, mbit), rs in sorted(groups.items()):
        med = lambda k: float(np.median([float(r[k]) for r in rs]))  # noqa: E731
        out.append({"kind": kind, "optimizer": opt, "world_size": w, "mbit": mbit,
                    "batch_per_rank": med("batch_per_rank"), "step_ms": med("step_ms"),
                    "allreduce_ms": med("allreduce_ms"), "bytes": med("allreduce_bytes"),
                    "cores": med("cores"), "rounds": len(rs)})
    return out


def design(rows, optimizers):
    """The rows of the linear model: columns c0_o, c1_o per optimizer, then 1/eta, alpha (ms)."""
    n = 2 * len(optimizers) + 2
    x = np.zeros((len(rows), n))
    for i, r in enumerate(rows):
        w = r["world_size"]
        rho = max(1.0, w / r["cores"])
        j = 2 * optimizers.index(r["optimizer"])
        x[i, j] = rho
        x[i, j + 1] = rho * r["batch_per_rank"]
        if r["kind"] == "dist" and w > 1:
            if r["mbit"] > 0:
                x[i, n - 2] = 2 * (w - 1) / w * 8 * r["bytes"] / (r["mbit"] * 1e6) * 1e3  # ms
            x[i, n - 1] = 2 * (w - 1)
    return x


def fit(rows):
    """All rows at once: the compute rows (one process, and K processes at once: the contention
    of K ranks on this machine's cores) and the data-parallel runs, on their step times. alpha is
    bounded below by 0: when the free fit makes it negative (the latency is below what the data
    resolve), it is fixed at 0 and the rest refitted."""
    fit_rows = [r for r in rows if r["kind"] in ("compute", "dist")]
    optimizers = sorted({r["optimizer"] for r in fit_rows})
    x = design(fit_rows, optimizers)
    t = np.array([r["step_ms"] for r in fit_rows])
    if np.any(t <= 0):
        raise Failure("A measured step time is not positive.")
    if len(fit_rows) <= x.shape[1]:
        raise Failure(f"{len(fit_rows)} measurements cannot fit {x.shape[1]} parameters.")
    theta, *_ = np.linalg.lstsq(x / t[:, None], np.ones_like(t), rcond=None)
    alpha_free = float(theta[-1])
    at_bound = alpha_free < 0
    if at_bound:
        theta = np.zeros(x.shape[1])
        theta[:-1], *_ = np.linalg.lstsq(x[:, :-1] / t[:, None], np.ones_like(t), rcond=None)
    pred = x @ theta
    rel = (pred - t) / t
    params = {"optimizers": {}}
    for k, o in enumerate(optimizers):
        params["optimizers"][o] = {"c0_ms": theta[2 * k], "c1_ms_per_example": theta[2 * k + 1]}
    inv_eta, alpha = theta[-2], theta[-1]
    params["eta"] = 1.0 / inv_eta if inv_eta > 0 else float("nan")
    params["alpha_ms"] = alpha
    params["alpha_at_bound"] = at_bound
    params["alpha_free_ms"] = alpha_free
    params["rms_relative_residual"] = float(np.sqrt(np.mean(rel ** 2)))
    params["max_relative_residual"] = float(np.max(np.abs(rel)))
    for r, p, e, xr in zip(fit_rows, pred, rel, x):
        r["predicted_ms"], r["relative_residual"] = float(p), float(e)
        # the model's communication term, beside the all-reduce time rank 0 measured
        r["predicted_allreduce_ms"] = float(xr[-2:] @ theta[-2:])
    params["rows"] = fit_rows
    if not inv_eta > 0:
        raise Failure(f"The fit gives a bandwidth efficiency that is not positive (1/eta = "
                      f"{inv_eta:.3g}); the measurements do not follow the model.")
    return params


def validation_table(params):
    lines = ["| optimizer | ranks | link | per-rank batch | measured step | predicted | residual "
             "| measured all-reduce | predicted all-reduce |",
             "|---|---|---|---|---|---|---|---|---|"]
    order = lambda r: (r["optimizer"], r["kind"], -r["mbit"] if r["mbit"] else -1e9,  # noqa: E731
                       r["world_size"])
    for r in sorted(params["rows"], key=order):
        w = r["world_size"]
        if r["kind"] == "compute":
            link = "— (one process)" if w == 1 else f"— ({w} processes at once, no network)"
        else:
            link = f"{r['mbit']} Mbit/s" if r["mbit"] else "no limit"
        dist = r["kind"] == "dist"
        ar = f"{r['allreduce_ms']:.1f} ms" if dist else "—"
        par = f"{r['predicted_allreduce_ms']:.1f} ms" if dist else "—"
        lines.append(f"| {r['optimizer']} | {w} | {link} | {r['batch_per_rank']:g} "
                     f"| {r['step_ms']:.1f} ms | {r['predicted_ms']:.1f} ms "
                     f"| {100 * r['relative_residual']:+.1f} % | {ar} | {par} |")
    return "\n".join(lines)


# ---- the projected models: parameters P and forward FLOPs per example ----------------------------

def resnet_cifar(n=3, in_channels=3, size=32, classes=10):
    """ResNet-(6n+2) of He et al. 2016 for CIFAR (option-A shortcuts, batch norm with affine
    parameters): (parameters, forward multiply-adds per image)."""
    params = macs = 0
    c_in, s = in_channels, size
    params += c_in * 16 * 9 + 2 * 16
    macs += s * s * 16 * c_in * 9
    c_in = 16
    for stage, c in enumerate((16, 32, 64)):
        for block in range(n):
            for conv in range(2):
                if stage > 0 and block == 0 and conv == 0:
                    s //= 2
                params += c_in * c * 9 + 2 * c
                macs += s * s * c * c_in * 9
                c_in = c
    params += 64 * classes + classes
    macs += 64 * classes
    return params, macs


def gpt_parameters(vocabulary, context, layers, width):
    """blr's GPT (nn/gpt.hpp; GPT-2's shape): tied embedding, position table, pre-norm blocks."""
    return vocabulary * width + context * width + layers * (12 * width ** 2 + 13 * width) + 2 * width


def gpt_forward_flops_per_token(vocabulary, context, layers, width):
    """2 FLOPs per multiply-add of the blocks' matrices, the attention scores and mix of a causal
    window (Kaplan et al. 2020: 2 * layers * context * width) and the output layer (vocabulary)."""
    return 2 * 12 * layers * width ** 2 + 2 * layers * context * width + 2 * vocabulary * width


def projected_models(parameter_counts):
    """Name -> (parameters, forward FLOPs per example, examples per rank, unit)."""
    models = {}
    p20, macs20 = resnet_cifar()
    if "resnet20" in parameter_counts:
        # blr builds ResNet-20 for Fashion-MNIST: one input channel, 2 * 16 * 9 fewer weights
        if parameter_counts["resnet20"] != p20 - 2 * 16 * 9:
            raise Failure(f"blr's ResNet-20 has {parameter_counts['resnet20']} parameters, not the "
                          f"{p20 - 2 * 16 * 9} of the formula; the FLOP count would be wrong.")
    models["ResNet-20 (CIFAR-10)"] = (p20, 2 * macs20, 128, "images")
    if "gpt" in parameter_counts:
        ctx, layers, width = 128, 4, 128
        rest = gpt_parameters(0, ctx, layers, width)
        vocab, r = divmod(parameter_counts["gpt"] - rest, width)
        if r != 0 or vocab <= 0:
            raise Failure(f"blr's GPT has {parameter_counts['gpt']} parameters, which the formula "
                          f"for width {width}, {layers} layers, context {ctx} cannot give.")
        models[f"GPT 4x128 (vocabulary {vocab})"] = (
            parameter_counts["gpt"], gpt_forward_flops_per_token(vocab, ctx, layers, width) * ctx,
            32, "sequences of 128")
    # ResNet-50: torchvision's model table, 25 557 032 parameters and 4.09 G multiply-adds per
    # 224 x 224 image (listed as "GFLOPS", a multiply-add counted once)
    models["ResNet-50 (ImageNet)"] = (25_557_032, 2 * 4.09e9, 64, "images")
    v, ctx, layers, width = 50257, 1024, 12, 768
    models["GPT-2 124M"] = (gpt_parameters(v, ctx, layers, width),
                            gpt_forward_flops_per_token(v, ctx, layers, width) * ctx, 8,
                            "sequences of 1024")
    return models


def step_time(compute_ms, bytes_, w, gbit, eta, alpha_ms, overlap):
    comm = 2 * (w - 1) / w * 8 * bytes_ / (eta * gbit * 1e9) * 1e3 + 2 * (w - 1) * alpha_ms
    if overlap:
        return compute_ms + max(0.0, comm - 2.0 / 3.0 * compute_ms), comm
    return compute_ms + comm, comm


def projection(params, parameter_counts, flops, gbits, ranks):
    rows = []
    for name, (p, fwd, batch, unit) in projected_models(parameter_counts).items():
        compute = 3 * fwd * batch / flops * 1e3
        for opt, bpp in (("adamw", 4), ("ivon", 8)):
            for g in gbits:
                cells = []
                for w in ranks:
                    t0, comm = step_time(compute, bpp * p, w, g, params["eta"], params["alpha_ms"], False)
                    t1, _ = step_time(compute, bpp * p, w, g, params["eta"], params["alpha_ms"], True)
                    cells.append({"ranks": w, "step_ms": t0, "allreduce_ms": comm,
                                  "efficiency": compute / t0, "step_ms_overlap": t1,
                                  "efficiency_overlap": compute / t1})
                rows.append({"model": name, "parameters": p, "forward_flops": fwd, "batch": batch,
                             "unit": unit, "optimizer": opt, "bytes": bpp * p, "gbit": g,
                             "compute_ms": compute, "ranks": cells})
    return rows


def projection_table(rows, ranks):
    head = "| model (per-rank batch) | optimizer | bytes/step | compute | link | " + \
        " | ".join(f"{w} ranks" for w in ranks) + " |"
    lines = [head, "|" + "---|" * (5 + len(ranks))]
    for r in rows:
        ms = lambda v: f"{v:.0f}" if v >= 100 else f"{v:.3g}"  # noqa: E731
        cells = " | ".join(f"{ms(c['step_ms'])} ms ({100 * c['efficiency']:.0f} % / "
                           f"{100 * c['efficiency_overlap']:.0f} %)" for c in r["ranks"])
        lines.append(f"| {r['model']}, P = {r['parameters']:,} ({r['batch']} {r['unit']}) | "
                     f"{r['optimizer']} | {r['bytes'] / 1e6:.1f} MB | {r['compute_ms']:.1f} ms | "
                     f"{r['gbit']:g} Gbit/s | {cells} |")
    return "\n".join(lines)


def plot(params, proj, png):
    gnuplot = shutil.which("gnuplot")
    if gnuplot is None:
        raise Failure("gnuplot is not installed, so --plot cannot draw.")
    base = os.path.splitext(png)[0]
    with open(base + "-validation.dat", "w") as f:
        for r in params["rows"]:
            f.write(f"{r['step_ms']} {r['predicted_ms']} {0 if r['optimizer'] == 'adamw' else 1}\n")
    blocks = []
    with open(base + "-projection.dat", "w") as f:
        for r in proj:
            if r["gbit"] != 25:
                continue
            f.write(f"# {r['model']} {r['optimizer']}\n")
            for c in r["ranks"]:
                f.write(f"{c['ranks']} {100 * c['efficiency']} {100 * c['efficiency_overlap']}\n")
            f.write("\n\n")
            blocks.append(f"{r['model']}, {r['optimizer']}".replace('"', "'"))
    lo = min(min(r["step_ms"], r["predicted_ms"]) for r in params["rows"]) / 1.5
    hi = max(max(r["step_ms"], r["predicted_ms"]) for r in params["rows"]) * 1.5
    plots = ", ".join(f"'{base}-projection.dat' index {i} using 1:2 with linespoints lc {i // 2 + 1} "
                      f"dt {1 + i % 2} pt {7 if i % 2 else 5} title \"{b}\""
                      for i, b in enumerate(blocks))
    script = f"""set terminal pngcairo size 1400,560 font ',10'
set output '{png}'
set multiplot layout 1,2
set title 'LeNet-5, 1-4 ranks in network namespaces: measured vs model'
set logscale xy
set xlabel 'measured step (ms)'
set ylabel 'predicted step (ms)'
set xrange [{lo}:{hi}]
set yrange [{lo}:{hi}]
set key top left
plot x with lines lc rgb 'gray' title 'predicted = measured', \\
  '{base}-validation.dat' using 1:($3==0?$2:1/0) with points pt 7 title 'AdamW', \\
  '' using 1:($3==1?$2:1/0) with points pt 5 title 'IVON'
set title 'Projection at 25 Gbit/s, no overlap (blr): compute / step time'
unset logscale
set logscale x 2
set xrange [6:700]
set yrange [0:105]
set xlabel 'ranks'
set ylabel 'scaling efficiency (%)'
set key top right font ',8'
plot {plots}
unset multiplot
"""
    with open(base + ".gp", "w") as f:
        f.write(script)
    res = subprocess.run([gnuplot, base + ".gp"], capture_output=True, text=True)
    if res.returncode != 0:
        raise Failure(f"gnuplot failed: {res.stderr.strip().splitlines()[-1] if res.stderr.strip() else res.returncode}.")


def parse_list(text, kind, name):
    try:
        values = [kind(v) for v in text.split(",")]
    except ValueError:
        raise Failure(f"Option '{name}' must be a comma-separated list of numbers; got '{text}'.")
    if not values or any(v <= 0 for v in values):
        raise Failure(f"Option '{name}' must list positive numbers; got '{text}'.")
    return values


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("measurements")
    ap.add_argument("--parameters", help="parameters.csv of scripts/netns_scaling.sh")
    ap.add_argument("--json")
    ap.add_argument("--plot", help="PNG to draw (gnuplot)")
    ap.add_argument("--max-rms-residual", type=float, default=0.25)
    ap.add_argument("--flops", type=float, default=100e12,
                    help="sustained FLOP/s of one rank for the projection (100e12)")
    ap.add_argument("--alpha-us", type=float,
                    help="latency per message for the projection (default: the fitted one)")
    ap.add_argument("--gbits", default="10,25,100")
    ap.add_argument("--ranks", default="8,32,128,512")
    a = ap.parse_args(argv)
    gbits = parse_list(a.gbits, float, "--gbits")
    ranks = parse_list(a.ranks, int, "--ranks")
    if not a.flops > 0:
        raise Failure(f"Option '--flops' must be positive; got {a.flops}.")
    params = fit(read_rows(a.measurements))
    print("Fitted (relative least squares, medians over rounds):")
    for o, c in params["optimizers"].items():
        print(f"  {o}: compute = {c['c0_ms']:.3f} ms + {c['c1_ms_per_example']:.4f} ms per example")
    print(f"  bandwidth efficiency eta = {params['eta']:.3f}, latency alpha = "
          f"{1e3 * params['alpha_ms']:.1f} us per message")
    if params["alpha_at_bound"]:
        print(f"  (the free fit gives alpha = {1e3 * params['alpha_free_ms']:.1f} us, below 0: "
              f"held at its bound 0, not resolved by these data)")
    print(f"  step times, relative residuals: RMS {100 * params['rms_relative_residual']:.1f} %, "
          f"max {100 * params['max_relative_residual']:.1f} % over {len(params['rows'])} "
          f"configurations")
    print()
    print(validation_table(params))
    proj = []
    if a.parameters:
        try:
            with open(a.parameters, newline="") as f:
                counts = {r["model"]: int(r["parameters"]) for r in csv.DictReader(f)}
        except (OSError, KeyError, ValueError):
            raise Failure(f"{a.parameters} is not a parameters CSV (model,parameters).")
        net = dict(params)
        if a.alpha_us is not None:
            if not a.alpha_us >= 0:
                raise Failure(f"Option '--alpha-us' must be at least 0; got {a.alpha_us}.")
            net["alpha_ms"] = a.alpha_us / 1e3
        proj = projection(net, counts, a.flops, gbits, ranks)
        print()
        print(f"Projection: eta {net['eta']:.3f}, alpha {1e3 * net['alpha_ms']:.1f} us "
              f"({'given' if a.alpha_us is not None else 'fitted'}), compute at "
              f"{a.flops / 1e12:g} TFLOP/s per rank; step time "
              f"(efficiency without overlap / with the all-reduce hidden behind the backward pass)")
        print()
        print(projection_table(proj, ranks))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"fit": params, "projection": proj}, f, indent=1)
    if a.plot:
        if not proj:
            raise Failure("--plot needs --parameters (its right panel is the projection).")
        plot(params, proj, a.plot)
    if not params["rms_relative_residual"] <= a.max_rms_residual:
        raise Failure(f"The model does not fit the measurements: the RMS relative residual is "
                      f"{100 * params['rms_relative_residual']:.1f} %, above the "
                      f"{100 * a.max_rms_residual:.1f} % of --max-rms-residual.")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except Failure as e:
        print(f"scaling_model: {e}", file=sys.stderr)
        sys.exit(1)
