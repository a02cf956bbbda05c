"""Compiled CSV readers against irbench's own on the 129-run campaign: does one pay?

Issue 26 asked for a compiled tokeniser (DuckDB's or Arrow's CSV reader) in front of
irbench's numpy reader. This measures, on one thread and with the files in memory, the time
to turn every run file of ``bench/data/full/campaign/runs`` into what ranking needs:

- irbench: ``trec.parse_run`` (topic ids and docnos as byte columns, scores, line numbers);
- pyarrow: ``pyarrow.csv.read_csv`` (single spaces, 6 columns, scores as float64), alone and
  with its topic id and docno columns turned into irbench's byte columns (the conversion
  ranking would need), and with them dictionary-encoded instead (codes, no conversion);
- DuckDB: ``read_csv`` of all the files into one table (nothing converted back).

The compiled readers do no checking here (no comment lines, field counts, line numbers);
irbench's numbers include all of it. Writes bench/results-readers.md.

    python bench/bench_readers.py [--reps 3]
"""

from __future__ import annotations

import argparse
import datetime as dt
import glob
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from irbench.runner.engine import reuse_freed_memory  # noqa: E402
from irbench.trec.ids import as_strings, token_words  # noqa: E402
from irbench.trec.text import parse_run  # noqa: E402


def _arrow(datas: list[bytes], convert: str) -> None:
    import pyarrow as pa
    import pyarrow.csv as pc

    read = pc.ReadOptions(column_names=["topic", "q0", "docno", "rank", "score", "tag"],
                          use_threads=False, block_size=1 << 24)
    parse = pc.ParseOptions(delimiter=" ", quote_char=False, escape_char=False,
                            double_quote=False)
    types = {"topic": pa.binary(), "docno": pa.binary(), "score": pa.float64()}
    options = pc.ConvertOptions(column_types=types, include_columns=list(types),
                                strings_can_be_null=False, null_values=[])
    for data in datas:
        table = pc.read_csv(pa.BufferReader(data), read_options=read, parse_options=parse,
                            convert_options=options)
        table.column("score").to_numpy()
        for name in ("topic", "docno"):
            column = table.column(name).combine_chunks()
            if convert == "bytes":
                _byte_column(column)
            elif convert == "codes":
                column.dictionary_encode()


def _byte_column(column) -> np.ndarray:
    offsets = np.frombuffer(column.buffers()[1], dtype=np.int32, count=len(column) + 1,
                            offset=column.offset * 4).astype(np.int64)
    data = np.frombuffer(column.buffers()[2], dtype=np.uint8)
    return as_strings(token_words(data, offsets[:-1], offsets[1:]), np.diff(offsets))


def _duckdb(paths: list[str]) -> None:
    import duckdb

    con = duckdb.connect()
    con.execute("SET threads = 1")
    con.execute("CREATE TABLE runs AS SELECT * FROM read_csv($files, delim = ' ', "
                "header = false, auto_detect = false, quote = '', escape = '', "
                "columns = {'topic': 'VARCHAR', 'q0': 'VARCHAR', 'docno': 'VARCHAR', "
                "'rank': 'BIGINT', 'score': 'DOUBLE', 'tag': 'VARCHAR'})", {"files": paths})
    con.close()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out", type=Path, default=HERE / "results-readers.md")
    args = ap.parse_args(argv)
    paths = sorted(glob.glob(str(HERE / "data/full/campaign/runs/*")))
    if not paths:
        raise SystemExit("no runs: python bench/make_data.py first")
    reuse_freed_memory()  # as irbench eval has it
    datas = [Path(p).read_bytes() for p in paths]
    import pyarrow as pa

    pa.set_cpu_count(1)
    pa.set_io_thread_count(1)
    cases = [
        ("irbench `trec.parse_run` (checked, byte columns, line numbers)",
         lambda: [parse_run([d]) for d in datas]),
        ("pyarrow `read_csv` only", lambda: _arrow(datas, "")),
        ("pyarrow `read_csv` + byte columns", lambda: _arrow(datas, "bytes")),
        ("pyarrow `read_csv` + dictionary codes", lambda: _arrow(datas, "codes")),
        ("DuckDB `read_csv` into a table", lambda: _duckdb(paths)),
    ]
    rows = []
    for name, fn in cases:
        fn()  # warm: imports, first allocations
        times = []
        for _ in range(args.reps):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        rows.append((name, statistics.median(times), min(times), max(times)))
        print(f"{name}: {rows[-1][1]:.3f} s", flush=True)
    ours = rows[0][1]
    import duckdb

    now = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M")
    size = sum(len(d) for d in datas)
    text = (f"# Compiled CSV readers against irbench's reader\n\nProduced by `python "
            f"bench/bench_readers.py` on {now} UTC ({os.cpu_count()} cores; one thread "
            f"each). {len(paths)} run files of the campaign, {size / 1e6:.0f} MB, in memory; "
            f"median of {args.reps}. pyarrow {pa.__version__}, DuckDB {duckdb.__version__}, "
            f"numpy {np.__version__}.\n\n| reader | seconds | min-max | x irbench |\n"
            "|---|---:|---:|---:|\n"
            + "".join(f"| {n} | {m:.3f} | {lo:.3f}-{hi:.3f} | {m / ours:.2f} |\n"
                      for n, m, lo, hi in rows))
    args.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
