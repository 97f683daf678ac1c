# Byte-level mutations shared by the input generators of the LibTorch fuzz harnesses
# (tensor_file_mutate.py, torchscript_model_mutate.py): a few rounds, each one of a bit flip, a byte
# set to an edge value, a deletion, an insertion of random bytes, or a copy of a chunk of the input.
def mutate_bytes(rng, data, rounds=(1, 1, 2, 4, 8)):
    """`data` mutated rng.choice(rounds) times (random.Random `rng`); returns bytes."""
    b = bytearray(data)
    for _ in range(rng.choice(rounds)):
        if not b:
            break
        p, k = rng.randrange(len(b)), rng.random()
        if k < 0.4: b[p] ^= 1 << rng.randrange(8)
        elif k < 0.55: b[p] = rng.choice([0, 0xff, 0x7f, 0x80])
        elif k < 0.7: del b[p:p + rng.randrange(1, 64)]
        elif k < 0.85: b[p:p] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 16)))
        else:
            q = rng.randrange(len(b)); b[p:p] = b[q:q + rng.randrange(1, 32)]
    return bytes(b)
