# transposed.py IN.npy OUT.npy: OUT = IN with its last two axes swapped
# (float32), the independent expectation of a transposing datacopy.
import sys

import numpy as np

a = np.load(sys.argv[1])
np.save(sys.argv[2], np.ascontiguousarray(np.swapaxes(a, -1, -2)).astype(np.float32))
