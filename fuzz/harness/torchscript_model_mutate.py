# Random mutations of small TorchScript archives for fuzz/harness/torchscript_model.cpp (run with
# the replay build: build/fuzz/fuzz_replay_torchscript_model DIR).
# Usage: torchscript_model_mutate.py SEED_DIR OUT_DIR COUNT SEED
# Writes COUNT mutated inputs from the seeds (fuzz/corpus/torchscript_model/*.pt): byte-level (bit
# flips, truncations, insertions, chunk copies) and structured (one record of the zip replaced:
# its bytes mutated, TorchScript source with tokens swapped or deleted, a pickle cut short, a record
# dropped or duplicated), re-zipped so the zip layer accepts them and the inner readers are reached.
import io, os, random, sys, zipfile
from byte_mutations import mutate_bytes
seeds, out, n, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
rng = random.Random(seed)
os.makedirs(out, exist_ok=True)
base = [open(os.path.join(seeds, f), "rb").read() for f in sorted(os.listdir(seeds))]
TOKENS = [b"forward", b"self", b"Tensor", b"torch", b"(", b")", b":", b",", b"\n", b"    ",
          b"return", b"def", b"0", b"-1", b"999999999999", b"__torch__", b"List[int]", b"None"]

def mutate_source(b):
    for _ in range(rng.choice([1, 2, 3])):
        t = rng.choice(TOKENS)
        if t in b and rng.random() < 0.6:
            b = b.replace(t, rng.choice(TOKENS), 1)
        else:
            p = rng.randrange(len(b) + 1); b = b[:p] + rng.choice(TOKENS) + b[p:]
    return b

def structured(archive):
    zin = zipfile.ZipFile(io.BytesIO(archive))
    names = zin.namelist()
    victim = rng.choice(names)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as zout:
        for name in names:
            data = zin.read(name)
            if name == victim:
                k = rng.random()
                if k < 0.15: continue                      # record dropped
                if name.endswith(".py"): data = mutate_source(data)
                elif name.endswith(".pkl") and k < 0.5: data = data[: rng.randrange(len(data) + 1)]
                else: data = mutate_bytes(rng, data)
                if k > 0.95: zout.writestr(name + "_copy", data)
            zout.writestr(name, data)
    return buf.getvalue()

for i in range(n):
    b = rng.choice(base)
    try:
        b = structured(b) if rng.random() < 0.6 else mutate_bytes(rng, b)
    except zipfile.BadZipFile:
        b = mutate_bytes(rng, b)
    open(f"{out}/m{i:06d}", "wb").write(b)
