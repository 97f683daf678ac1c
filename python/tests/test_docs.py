"""docs/python.md's optimizer reference is what the option tables generate (python3 -m blr.docs)."""

from pathlib import Path

import blr.docs

DOC = Path(__file__).resolve().parents[2] / "docs" / "python.md"


def test_the_generated_reference_is_current():
    text = DOC.read_text()
    begin = text.index(blr.docs.BEGIN) + len(blr.docs.BEGIN) + 1
    end = text.index(blr.docs.END)
    assert text[begin:end] == blr.docs.markdown() + "\n", \
        "docs/python.md is out of date: regenerate its reference with `python3 -m blr.docs`."
