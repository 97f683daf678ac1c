"""docs/python.md's optimizer reference is what the option tables generate (python3 -m blr.docs),
and its examples marked "# example:" run."""

import contextlib
import io
import re
from pathlib import Path

import blr.docs

DOC = Path(__file__).resolve().parents[2] / "docs" / "python.md"


def test_the_generated_reference_is_current():
    text = DOC.read_text()
    begin = text.index(blr.docs.BEGIN) + len(blr.docs.BEGIN) + 1
    end = text.index(blr.docs.END)
    assert text[begin:end] == blr.docs.markdown() + "\n", \
        "docs/python.md is out of date: regenerate its reference with `python3 -m blr.docs`."


def examples():
    blocks = re.findall(r"```python\n(# example:.*?)```", DOC.read_text(), flags=re.S)
    assert blocks, "docs/python.md has no '# example:' block"
    return blocks


def test_the_examples_run():
    for block in examples():
        printed = io.StringIO()
        namespace = {}
        with contextlib.redirect_stdout(printed):
            exec(compile(block, "docs/python.md", "exec"), namespace)
        assert printed.getvalue(), block.splitlines()[0]
        if "continual learning" in block.splitlines()[0]:
            # Both tasks are better known with the posterior as the prior than by fine-tuning.
            lines = printed.getvalue().strip().splitlines()
            means = [sum(float(part.split()[-1]) for part in line.split(":")[1].split(",")) / 2
                     for line in lines]
            assert means[0] > means[1], lines
