"""irbench.arrays: the column helpers against the numpy functions they stand in for."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from irbench.arrays import distinct, segment_reverse_cummax


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


def test_segment_reverse_cummax_is_each_suffix_maximum():
    rng = np.random.default_rng(7)
    counts = rng.integers(0, 6, 40)
    offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    values = rng.integers(1, 8, offsets[-1]) / rng.integers(1, 9, offsets[-1])
    got = segment_reverse_cummax(values, offsets)
    want = [max(values[i:offsets[np.searchsorted(offsets, i, side="right")]])
            for i in range(len(values))]
    assert got.tolist() == want
