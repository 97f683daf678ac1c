"""Reliability diagrams and coefficient (forest) plots as PNG images, drawn by gnuplot like the
CLI's plots.

``reliability_diagram(log_probs, labels, path)`` bins the predictions by confidence (the ECE's
equal-width bins, ``blr.reliability_bins``) and draws each bin's accuracy against its confidence,
with the diagonal of perfect calibration (Guo et al. 2017, Fig. 1). gnuplot runs without a shell
in a temporary directory, on a script that names only its own files there; the title goes in as a
single-quoted gnuplot string with control bytes replaced (apps/blr/torch/gnuplot_text.hpp's
rules), and the image is copied to ``path`` afterwards, so no path or text reaches gnuplot as a
command.
"""

import os
import shutil
import subprocess
import tempfile

from . import _blr


def _gnuplot_string(text):
    """A gnuplot string literal: single quotes (no escapes or substitutions inside), control bytes
    replaced by '?', a single quote doubled."""
    clean = "".join("?" if ord(ch) < 0x20 or ord(ch) == 0x7F else ch for ch in str(text))
    return "'" + clean.replace("'", "''") + "'"


def _draw(work, script, image, path, what):
    """Runs gnuplot on `script` in the directory `work` and copies its `image` to `path`; every
    failure is one blr.Error naming `what`."""
    with open(os.path.join(work, "plot.gp"), "w", encoding="utf-8") as gp:
        gp.write(script)
    done = subprocess.run(["gnuplot", "plot.gp"], cwd=work, capture_output=True, text=True,
                          check=False)
    if done.returncode != 0 or not os.path.exists(os.path.join(work, image)):
        first = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise _blr.Error(f"gnuplot failed to draw {what}: {first}")
    try:
        shutil.copyfile(os.path.join(work, image), os.fspath(path))
    except OSError as e:
        raise _blr.Error(f"Cannot write {what} to '{os.fspath(path)}': {e.strerror}.") from None


def _require_gnuplot(what):
    if shutil.which("gnuplot") is None:
        raise _blr.Error(f"gnuplot is not installed; install gnuplot-nox to draw {what}.")


def coefficient_plot(names, mean, lower, upper, path, level=0.95, title=None):
    """A forest plot, as ``blr infer --out DIR`` draws coefficients.png: each coefficient's
    posterior mean and credible interval at ``level`` on its own row, with a dashed line at zero.
    Writes the PNG file ``path``; returns the rows drawn as (name, mean, lower, upper)."""
    rows = [(str(n), float(m), float(lo), float(hi))
            for n, m, lo, hi in zip(names, mean, lower, upper)]
    if not rows:
        raise _blr.Error("A coefficient plot needs at least one coefficient.")
    _require_gnuplot("coefficient plots")
    k = len(rows)
    heading = title if title is not None else "posterior coefficients"
    with tempfile.TemporaryDirectory(prefix="blr-coefficients-") as work:
        with open(os.path.join(work, "coefficients.dat"), "w", encoding="ascii") as data:
            data.write("# row mean lower upper\n")
            for i, (_, m, lo, hi) in enumerate(rows):
                data.write(f"{k - i} {m!r} {lo!r} {hi!r}\n")
        tics = ", ".join(f"{_gnuplot_string(n)} {k - i}" for i, (n, _, _, _) in enumerate(rows))
        script = "\n".join([
            f"set terminal pngcairo size 640,{max(240, 60 + 28 * k)} font ',10'",
            "set output 'coefficients.png'",
            "set title " + _gnuplot_string(heading) + " noenhanced",
            "set xlabel " + _gnuplot_string(f"posterior mean and {100 * level:g}% credible "
                                            "interval") + " noenhanced",
            f"set yrange [0.5:{k + 0.5}]", f"set ytics ({tics}) noenhanced", "set grid xtics",
            "set key off",
            "set arrow from 0, graph 0 to 0, graph 1 nohead dt 2 lc 'grey40'",
            "plot 'coefficients.dat' using 2:1:3:4 with xerrorbars pt 7 ps 1 lc 'blue'", ""])
        _draw(work, script, "coefficients.png", path, "the coefficient plot")
    return rows


def reliability_diagram(log_probs, labels, path, bins=15, title=None):
    """Writes the reliability diagram of log-probabilities (N x C) against labels (N) to the PNG
    file ``path``; returns the bins (``blr.reliability_bins``). Needs gnuplot (Debian
    gnuplot-nox)."""
    table = _blr.reliability_bins(log_probs, labels, bins)
    ece = _blr.classification_metrics(log_probs, labels, bins)["ece"]
    _require_gnuplot("reliability diagrams")
    heading = title if title is not None else f"reliability diagram: ECE {ece:.4f} ({bins} bins)"
    with tempfile.TemporaryDirectory(prefix="blr-reliability-") as work:
        with open(os.path.join(work, "bins.dat"), "w", encoding="ascii") as data:
            data.write("# centre lower upper count confidence accuracy\n")
            for b in table:
                data.write(f"{(b['lower'] + b['upper']) / 2!r} {b['lower']!r} {b['upper']!r} "
                           f"{b['count']} {b['confidence']!r} {b['accuracy']!r}\n")
        script = "\n".join([
            "set terminal pngcairo size 500,500 font ',10'",
            "set output 'diagram.png'",
            "set title " + _gnuplot_string(heading) + " noenhanced",
            "set xrange [0:1]", "set yrange [0:1]", "set size ratio 1", "set grid",
            "set xlabel 'confidence'", "set ylabel 'accuracy'", "set key top left",
            "set style fill solid 0.5 border -1",
            "plot x with lines lc rgb 'gray' dt 2 title 'perfect', 'bins.dat' using "
            "1:($4 > 0 ? $6 : NaN):($3-$2) with boxes lc rgb '#4477aa' title 'accuracy', "
            "'bins.dat' using 1:($4 > 0 ? $5 : NaN) with points pt 7 lc rgb '#cc3311' "
            "title 'confidence'",
            ""])
        _draw(work, script, "diagram.png", path, "the reliability diagram")
    return table
