# Random mutations of small torch.save dicts for fuzz/harness/tensor_file.cpp (run with the replay
# build: build/fuzz/fuzz_replay_tensor_file DIR). Usage: tensor_file_mutate.py DIR COUNT SEED
# Writes N mutated tensor-file inputs (byte-level: flips, truncations, insertions, chunk copies;
# and structured: odd dtypes, shapes, NaN/inf, huge labels, wrong types) for the replay harness.
import io, os, random, sys
import torch
from byte_mutations import mutate_bytes
out, n, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(seed)
torch.manual_seed(seed)
os.makedirs(out, exist_ok=True)
def saved(obj):
    b = io.BytesIO(); torch.save(obj, b); return b.getvalue()
def structured():
    n_ = rng.choice([0, 1, 2, 5, 7])
    dt = rng.choice([torch.float32, torch.float64, torch.float16, torch.int64, torch.int32, torch.uint8, torch.bool, torch.bfloat16])
    shape = [n_] + [rng.choice([1, 2, 3]) for _ in range(rng.choice([0, 1, 2]))]
    x = (torch.randn(shape) * rng.choice([1, 1e30, 1e300])).to(dt) if dt.is_floating_point else torch.randint(-3, 5, shape).to(dt)
    if dt.is_floating_point and x.numel() and rng.random() < 0.3:
        x.view(-1)[rng.randrange(x.numel())] = rng.choice([float("nan"), float("inf")])
    ydt = rng.choice([torch.int64, torch.float32, torch.float64, torch.int8, torch.bool])
    yshape = [rng.choice([n_, n_, n_ + 1])] + ([rng.choice([1, 2])] if rng.random() < 0.3 else [])
    y = torch.randint(-1, rng.choice([2, 3, 10**6, 2**40]), yshape).to(ydt) if not ydt.is_floating_point else torch.randn(yshape).to(ydt)
    d = {"x": x, "y": y}
    if rng.random() < 0.4:
        d["x_test"] = x[: max(0, n_ - 1)]
        if rng.random() < 0.9: d["y_test"] = y[: max(0, n_ - 1)]
    if rng.random() < 0.1: d[rng.choice(["z", "X"])] = x
    if rng.random() < 0.05: d = [x, y]
    if rng.random() < 0.05: d = {"x": 3, "y": "s"}
    return saved(d)
base = [structured() for _ in range(50)]
for i in range(n):
    b = rng.choice(base) if rng.random() < 0.7 else structured()
    b = mutate_bytes(rng, b, rounds=(0, 1, 1, 2, 4, 8))
    open(f"{out}/m{i:06d}", "wb").write(bytes([rng.randrange(3)]) + b)
