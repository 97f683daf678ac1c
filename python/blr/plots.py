"""Reliability diagrams as PNG images, drawn by gnuplot like the CLI's plots.

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


def reliability_diagram(log_probs, labels, path, bins=15, title=None):
    """Writes the reliability diagram of log-probabilities (N x C) against labels (N) to the PNG
    file ``path``; returns the bins (``blr.reliability_bins``). Needs gnuplot (Debian
    gnuplot-nox)."""
    table = _blr.reliability_bins(log_probs, labels, bins)
    ece = _blr.classification_metrics(log_probs, labels, bins)["ece"]
    if shutil.which("gnuplot") is None:
        raise _blr.Error("gnuplot is not installed; install gnuplot-nox to draw reliability "
                         "diagrams.")
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
        with open(os.path.join(work, "diagram.gp"), "w", encoding="utf-8") as gp:
            gp.write(script)
        done = subprocess.run(["gnuplot", "diagram.gp"], cwd=work, capture_output=True,
                              text=True, check=False)
        if done.returncode != 0 or not os.path.exists(os.path.join(work, "diagram.png")):
            first = (done.stderr.strip().splitlines() or ["no message"])[-1]
            raise _blr.Error(f"gnuplot failed to draw the reliability diagram: {first}")
        try:
            shutil.copyfile(os.path.join(work, "diagram.png"), os.fspath(path))
        except OSError as e:
            raise _blr.Error(f"Cannot write the reliability diagram to '{os.fspath(path)}': "
                             f"{e.strerror}.") from None
    return table
