"""Dump an irbench DuckDB store to sorted CSVs, and diff two dumps.

    python bench/compare_stores.py dump STORE.duckdb OUT_DIR [--root DIR]
    python bench/compare_stores.py diff DIR_A DIR_B [--lines N]

dump: one OUT_DIR/<name>.csv per table and view (sorted by name), rows ORDER BY ALL, without
the columns that differ from run to run (times, hosts, pids, environment, ...). With --root,
the campaign folder's absolute path in every value is replaced by '<CAMPAIGN>'. An
evaluation_id (numbered in the order parallel workers finish) is shown as 'system/qrels'.
diff: names the tables whose dumps differ (with their first differing lines); exit 1 if any.
"""
from __future__ import annotations

import argparse
import csv
import difflib
import os
import sys
from pathlib import Path

import duckdb

# Run-dependent columns: a name containing one of these, or ending in '_at'.
VOLATILE = "time started finished seconds environment pid host argv created secret".split()


def volatile(column: str) -> bool:
    return any(w in column.lower() for w in VOLATILE) or column.lower().endswith("_at")


def text(value, roots: list[str]) -> str:
    if value is None:
        return "<NULL>"
    out = repr(value) if isinstance(value, float) else bytes(value).hex() \
        if isinstance(value, (bytes, bytearray, memoryview)) else str(value)
    for root in roots:
        out = out.replace(root, "<CAMPAIGN>")
    return out


def evaluation_keys(con) -> dict:
    """evaluation_id -> 'system/qrels' (evaluations not current keep their number)."""
    try:
        return {i: f"{system}/{qrels}" for system, qrels, i in con.execute(
            "SELECT system, qrels, evaluation_id FROM current").fetchall()}
    except duckdb.Error:
        return {}


def dump(store: str, out_dir: str, root: str | None) -> int:
    # the longest first, so that a path that contains another is replaced whole
    roots = sorted({os.path.abspath(root), os.path.realpath(root)}, key=len, reverse=True) \
        if root else []
    (out := Path(out_dir)).mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(store, read_only=True)
    keys = evaluation_keys(con)
    tables = con.execute(
        "SELECT table_schema, table_name FROM information_schema.tables "
        "WHERE table_catalog = current_database() ORDER BY table_name, table_schema").fetchall()
    for schema, name in tables:
        columns = [c for (c,) in con.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = ? "
            "AND table_name = ? AND table_catalog = current_database() "
            "ORDER BY ordinal_position", [schema, name]).fetchall()]
        kept, dropped = [c for c in columns if not volatile(c)], [c for c in columns if volatile(c)]
        with open(out / f"{name}.csv", "w", newline="", encoding="utf-8") as f:
            writer = csv.writer(f, lineterminator="\n")
            writer.writerow(kept + ([f"# dropped: {' '.join(dropped)}"] if dropped else []))
            select = ", ".join('"' + c.replace('"', '""') + '"' for c in kept)
            cursor = con.execute(f'SELECT {select} FROM "{schema}"."{name}" ORDER BY ALL')
            if "evaluation_id" not in kept:
                while rows := cursor.fetchmany(10_000):
                    writer.writerows([text(v, roots) for v in row] for row in rows)
                continue
            at = kept.index("evaluation_id")  # renamed: sorted again after the renaming
            writer.writerows(sorted([text(keys.get(v, v) if i == at else v, roots)
                                     for i, v in enumerate(row)] for row in cursor.fetchall()))
    print(f"{len(tables)} tables and views of {store} dumped into {out}")
    return 0


def diff(dir_a: str, dir_b: str, lines: int) -> int:
    a, b = Path(dir_a), Path(dir_b)
    names = sorted({p.name for p in a.glob("*.csv")} | {p.name for p in b.glob("*.csv")})
    differ = 0
    for name in names:
        pa, pb = a / name, b / name
        if not pa.exists() or not pb.exists():
            differ += 1
            print(f"{name}: only in {pa.parent if pa.exists() else pb.parent}")
            continue
        if pa.read_bytes() == pb.read_bytes():
            continue
        differ += 1
        la, lb = (p.read_text(encoding="utf-8").splitlines() for p in (pa, pb))
        print(f"{name}: differs ({len(la) - 1} rows vs {len(lb) - 1} rows)")
        shown = list(difflib.unified_diff(la, lb, n=0, lineterm=""))[2:]  # no ---/+++ lines
        more = [f"... {len(shown) - lines} more diff lines"] if len(shown) > lines else []
        print("\n".join("    " + line[:300] for line in shown[:lines] + more))
    print(f"{len(names)} tables compared, {differ} differ")
    return 1 if differ else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dump", help="dump a store into CSV files")
    d.add_argument("store"), d.add_argument("out_dir")
    d.add_argument("--root", help="campaign folder, replaced by <CAMPAIGN> in values")
    c = sub.add_parser("diff", help="compare two dumps; exit 1 if they differ")
    c.add_argument("dir_a"), c.add_argument("dir_b")
    c.add_argument("--lines", type=int, default=8, help="diff lines shown per table (8)")
    args = parser.parse_args()
    return dump(args.store, args.out_dir, args.root) if args.command == "dump" else \
        diff(args.dir_a, args.dir_b, args.lines)


if __name__ == "__main__":
    sys.exit(main())
