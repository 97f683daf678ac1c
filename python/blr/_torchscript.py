"""A Python model as the bytes of a TorchScript archive, for the C++ posterior tools (blr.Laplace,
blr.sensitivity): ``torch.jit.script``, or ``torch.jit.trace`` on an example input for a model that
does not script, saved in evaluation mode. The C++ side reads the bytes behind the model file's
defences (include/blr/torch/nn/script_file.hpp) and works on that copy; the model is not changed.
"""

import io

import torch

from ._blr import Error


def _first_line(error):
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def script_archive(model, example_input, who):
    """(bytes of torch.jit.save, a name for messages) of ``model``; ``who`` starts every sentence."""
    if not isinstance(model, torch.nn.Module):
        raise Error(f"{who}: the model must be a torch.nn.Module; got {type(model).__name__}.")
    if isinstance(model, torch.jit.ScriptModule):
        scripted = model
    else:
        try:
            scripted = torch.jit.script(model)
        except Exception as scripting:  # TorchScript's own errors are many types
            if example_input is None:
                raise Error(f"{who}: torch.jit.script could not compile the model "
                            f"({_first_line(scripting)}); pass example_input= to trace it "
                            "instead.") from None
            try:
                scripted = torch.jit.trace(model, example_input)
            except Exception as tracing:
                raise Error(f"{who}: the model can be neither scripted nor traced "
                            f"({_first_line(tracing)}).") from None
    was_training = scripted.training
    scripted.eval()
    buffer = io.BytesIO()
    try:
        torch.jit.save(scripted, buffer)
    finally:
        scripted.train(was_training)
    return buffer.getvalue(), f"the model ({type(model).__name__})"


def examples(data, who):
    """(x, y) from an (x, y) pair of tensors or an iterable of (x, y) batches (a DataLoader)."""
    if isinstance(data, (tuple, list)) and len(data) == 2 and all(
            isinstance(t, torch.Tensor) for t in data):
        return data[0], data[1]
    xs, ys = [], []
    try:
        for batch in data:
            if not (isinstance(batch, (tuple, list)) and len(batch) >= 2):
                raise Error(f"{who}: each batch must be an (inputs, labels) pair; got "
                            f"{type(batch).__name__}.")
            xs.append(batch[0])
            ys.append(batch[1])
    except TypeError:
        raise Error(f"{who}: give a DataLoader of (inputs, labels) batches or an (x, y) pair of "
                    f"tensors; got {type(data).__name__}.") from None
    if not xs:
        raise Error(f"{who}: the data have no batches.")
    return torch.cat(xs), torch.cat(ys)
