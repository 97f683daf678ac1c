"""pybind11's "incompatible function arguments" as one ``blr.Error`` sentence.

When a call's arguments do not convert to the C++ types, pybind11 raises a ``TypeError`` that
lists the signature and then prints every argument (whole arrays: a hundred lines for a design
matrix). ``call`` makes that one sentence naming the first argument that does not fit and why
(an unknown keyword with its closest spelling, an array of the wrong dimension or of non-numbers,
an integer out of range, a value of another type), read from the signature pybind11 reports, so
the argument names are written once, in the C++ binding.
"""

import difflib
import re

import numpy as np

from ._blr import Error

_INCOMPATIBLE = "incompatible function arguments"


def _split_top_level(text):
    """Splits "a: X[1, 2], b: int = 3" at the commas outside brackets."""
    parts, depth, start = [], 0, 0
    for k, c in enumerate(text):
        if c in "[(":
            depth += 1
        elif c in "])":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(text[start:k].strip())
            start = k + 1
    if text[start:].strip():
        parts.append(text[start:].strip())
    return parts


def _signature(message):
    """[(name, annotation, has_default)] of the first signature in pybind11's message (None if
    unreadable)."""
    match = re.search(r"^\s*1\. \((.*)\) -> ", message, re.MULTILINE)
    if match is None:
        return None
    out = []
    for part in _split_top_level(match.group(1)):
        name, _, rest = part.partition(":")
        annotation = rest.split("=")[0].strip() if "=" in rest else rest.strip()
        out.append((name.strip(), annotation, "=" in rest))
    return out


def _describe(value):
    if isinstance(value, np.ndarray):
        return f"a {value.ndim}-D array of {value.dtype}"
    text = repr(value)
    return f"{text if len(text) <= 40 else text[:40] + '...'} (of type {type(value).__name__})"


def _problem(annotation, value):
    """Why `value` does not convert to `annotation`, or None when it seems to."""
    optional = re.fullmatch(r"Optional\[(.*)\]", annotation)
    if optional:
        if value is None:
            return None
        annotation = optional.group(1)
    array = re.fullmatch(r"numpy\.ndarray\[numpy\.float64\[(.*)\]\]", annotation)
    if array:
        dims = [d.strip() for d in array.group(1).split(",")]
        ndim = 1 if dims[-1] == "1" else len(dims)
        wanted = "a 1-D array (a vector)" if ndim == 1 else f"a {ndim}-D array (a matrix)"
        try:
            converted = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            return f"takes {wanted} of numbers; got {_describe(value)} that is not all numbers"
        if converted.ndim != ndim and not (ndim == 1 and converted.ndim == 2 and 1 in converted.shape):
            shape = " x ".join(str(n) for n in converted.shape) or "scalar"
            return f"takes {wanted} of numbers; got a {converted.ndim}-D array ({shape})"
        return None
    if annotation == "int":
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            return f"takes an integer; got {_describe(value)}"
        if not -2**31 <= int(value) < 2**31:
            return f"takes an integer from {-2**31} to {2**31 - 1}; got {int(value)}"
        return None
    if annotation == "float":
        if isinstance(value, (str, bytes)) or not hasattr(value, "__float__"):
            return f"takes a number; got {_describe(value)}"
        return None
    if annotation == "str":
        return None if isinstance(value, str) else f"takes a string; got {_describe(value)}"
    if annotation == "bool":
        return None if isinstance(value, (bool, np.bool_)) else f"takes True or False; got {_describe(value)}"
    if annotation.startswith("List["):
        if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
            return f"takes a list; got {_describe(value)}"
    return None


def _sentence(name, message, args, kwargs):
    signature = _signature(message)
    if signature is None:
        return f"{name}(): the arguments do not match its signature."
    names = [n for n, _, _ in signature]
    for key in kwargs:
        if key not in names:
            close = difflib.get_close_matches(key, names, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            return (f"{name}() has no argument '{key}'{hint}; its arguments are "
                    f"{', '.join(names)}.")
    if len(args) > len(names):
        return f"{name}() takes at most {len(names)} arguments ({', '.join(names)}); got {len(args)}."
    given = dict(zip(names, args))
    for key, value in kwargs.items():
        if key in given:
            return f"{name}() got the argument '{key}' twice (by position and by keyword)."
        given[key] = value
    for key, annotation, _ in signature:
        if key in given:
            problem = _problem(annotation, given[key])
            if problem:
                return f"{name}(): argument '{key}' {problem}."
    missing = [n for n, _, has_default in signature if n not in given and not has_default]
    if missing:
        return f"{name}() needs the argument{'s' if len(missing) > 1 else ''} {', '.join(missing)}."
    return f"{name}(): the arguments do not fit its signature ({', '.join(names)})."


def call(function, name, *args, **kwargs):
    """``function(*args, **kwargs)``; pybind11's argument TypeError becomes one ``blr.Error``
    sentence that starts with `name` (the public name, "blr.infer.glm")."""
    try:
        return function(*args, **kwargs)
    except TypeError as error:
        message = str(error)
        if _INCOMPATIBLE not in message:
            raise
        sentence = _sentence(name, message, args, kwargs)
    raise Error(sentence)


def wrap(function, name):
    """`function` with its arguments' TypeError as a blr.Error (call), and its docstring."""
    def checked(*args, **kwargs):
        return call(function, name, *args, **kwargs)
    checked.__name__ = name.rsplit(".", 1)[-1]
    checked.__qualname__ = checked.__name__
    checked.__doc__ = function.__doc__
    return checked
