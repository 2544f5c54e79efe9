# embedding-inputs.py DIR: the host inputs of embedding.yaml as .npy files:
# a table of Normal values (128 x 128), and index tiles whose first words
# name table rows in a shuffled order (one 0xffffffff: a zero row); the
# words past num_indices are arbitrary and must be ignored.
import os
import sys

import numpy as np

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(7)
np.save(os.path.join(out, "table.npy"), rng.standard_normal((1, 128, 128)).astype(np.float32))
x = rng.integers(0, 1 << 32, size=(1, 32, 32), dtype=np.uint64).astype(np.uint32)
x.reshape(-1)[:64] = rng.permutation(128)[:64]
x.reshape(-1)[5] = 0xFFFFFFFF
np.save(os.path.join(out, "x.npy"), x)
x2 = rng.integers(0, 1 << 32, size=(1, 64, 32), dtype=np.uint64).astype(np.uint32)
x2[0, 0, :] = rng.permutation(128)[:32]   # core row 0: words 0-31 of its tile
x2[0, 32, :] = rng.permutation(128)[:32]  # core row 1
np.save(os.path.join(out, "x2.npy"), x2)
