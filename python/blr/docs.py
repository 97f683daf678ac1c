"""The Python API reference of the optimizers, generated from the C++ option tables.

``python3 -m blr.docs`` prints the Markdown that docs/python.md holds between its
``<!-- generated: python optimizers -->`` markers; the test suite fails when the two differ, so the
reference cannot drift from the tables.
"""

from . import _blr
from .optim import _class_name

BEGIN = "<!-- generated: python optimizers -->"
END = "<!-- end generated -->"


def _value(value):
    if isinstance(value, float) and value == float("inf"):
        return "math.inf"
    return repr(value)


def markdown():
    lines = []
    for entry in _blr.optimizers():
        name = _class_name(entry["owner"])
        lines.append(f"### `blr.{name}`")
        lines.append("")
        lines.append(entry["summary"] + ".")
        lines.append("")
        lines.append("| keyword | default | allowed | meaning |")
        lines.append("|---|---|---|---|")
        for o in entry["options"]:
            default = "required" if o["required"] else f"`{_value(o['default'])}`"
            allowed = o["range"] or ", ".join(f"`{c}`" for c in o["choices"]) or o["type"]
            scope = " (whole optimizer)" if o["scope"] == "optimizer" else ""
            lines.append(f"| `{o['key']}` | {default} | {allowed}{scope} | {o['help']} |")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    print(markdown(), end="")
