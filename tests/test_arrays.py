"""irbench.arrays: the column helpers against the numpy functions they stand in for."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from irbench.arrays import distinct, suffix_max_at


@pytest.mark.parametrize("kind", ["int64", "bytes", "object"])
@pytest.mark.parametrize("n", [0, 1, 2, 3, 17, 400])
def test_distinct_equals_numpy_unique(kind, n):
    rng = np.random.default_rng(n)
    raw = rng.integers(0, 9, n)
    blocks = np.repeat(raw, rng.integers(1, 4, n))  # topic blocks, in no order, some again
    values = {"int64": blocks, "bytes": blocks.astype("S3"),
              "object": np.array([f"q{x}" for x in blocks], dtype=object)}[kind]
    got, want = distinct(values), np.unique(values)
    assert got.dtype == want.dtype
    assert got.tolist() == want.tolist()


def test_distinct_does_not_import_numpy_ma():
    """numpy's unique imports numpy.ma on first use (15 ms in each of the runner's workers)."""
    code = ("import sys, numpy as np; from irbench.arrays import distinct; "
            "distinct(np.array([b'2', b'2', b'1'])); print('numpy.ma' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "False"


def test_scoring_the_core_measures_does_not_import_numpy_ma():
    """Nor does any measure of the core suite (nDCG's gain set-up used numpy's unique)."""
    code = ("import sys, irbench; irbench.evaluate({'q1': {'d1': 2, 'd2': 0, 'd3': 1}}, "
            "{'q1': {'d1': 1.0, 'd3': 0.5, 'd4': 0.2}}, ['nDCG', 'nDCG@10', 'AP', 'GMAP', "
            "'P@10', 'Bpref', 'infAP', 'Rprec', 'RR', 'R@1000']); "
            "print('numpy.ma' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "False"


def test_suffix_max_at_is_each_suffix_maximum():
    rng = np.random.default_rng(7)
    counts = rng.integers(0, 6, 40)
    offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    values = rng.integers(1, 8, offsets[-1]) / rng.integers(1, 9, offsets[-1])
    # each segment asked at 5 nondecreasing starts within it (its end: nothing)
    starts = np.sort(rng.integers(0, counts[:, None] + 1, (40, 5)), axis=1) + offsets[:-1, None]
    got = suffix_max_at(values, starts, offsets[1:])
    want = [[max(values[s:end], default=0.0) for s in row]
            for row, end in zip(starts.tolist(), offsets[1:].tolist())]
    assert got.tolist() == want
    assert suffix_max_at(values, np.zeros((0, 3), dtype=np.int64),
                         np.zeros(0, dtype=np.int64)).shape == (0, 3)
