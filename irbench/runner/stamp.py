"""The run stamp: how ``irbench run`` answers a rerun with nothing changed without starting up.

After a run that ended without a failure, ``irbench run`` writes a small JSON stamp in the
user's cache folder (``$IRBENCH_CACHE_DIR``, else ``$XDG_CACHE_HOME/irbench``, else
``~/.cache/irbench``), one per config file (keyed by its real path). It records:

- the config's sha256 and the irbench version;
- size, mtime, ctime and inode of every input the run read (topics, qrels sets, runs, the
  known-documents qrels, validation rules and their docnos list), taken before the run began
  and checked again after it ended (a file changed meanwhile means no stamp). As in git's
  "racy clean" rule, a file whose mtime or ctime is not clearly older than the moment before
  the config was read gets no stamp either: it may have changed after irbench read it, or
  change again within one timestamp tick and keep every fact. Whole-second timestamps are
  taken to mean a coarse file system (2 s window; a store there is never stamped), others a
  fine one (50 ms window);
- each ``glob:`` pattern with the files it matched when the config was read;
- size, mtime, ctime and inode of the store file once the run had closed it, and the store
  schema this irbench writes (a store damaged in place changes its ctime; a store of an older
  schema is migrated by the long way);
- the summary counts and the leaderboard the run printed.

A config with ``collections:`` gets one such stamp per collection (keyed by the config's real
path and the collection's name), each recording that collection's inputs, globs, summary and
leaderboard, all written once every collection ran without failure (so each records the store
as the last collection left it), and then an index keyed by the config alone naming the
collections and a token the collections' stamps share (stamps of different runs never mix).
An unchanged rerun is answered only when every collection's stamp still holds; it then prints
what the long way prints, collection by collection. ``irbench run --collection NAME`` writes no
stamp; a collection with a system given as a command gets none either (its command's inputs and
environment decide, which only the long way checks).

The next ``irbench run CONFIG`` (alone or with ``--quiet``, ``--workers``, ``--wait``,
``--fail-fast``) reads the stamp with the standard library only, before numpy, DuckDB or the
measures are imported. When every recorded fact still holds, no input and no stored result can
differ from what the stamp describes, so it prints the same summary (0 evaluated) and
leaderboard and exits 0, leaving the store untouched. Any difference (an edited or touched
file, a new match of a glob, a store written by another command or config, a write-ahead log
beside the store, another irbench version) or ``--rehash`` takes the normal path, which decides
by content hashes and writes a fresh stamp. A stamp that cannot be read or written is ignored.
"""

from __future__ import annotations

import glob as globbing
import hashlib
import json
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

from .. import __version__
from ..cache import cache_folder

FORMAT = 2
STORE_SCHEMA = 22  # len(irbench.store.MIGRATIONS), without importing DuckDB (a test checks)
FINE_WINDOW_NS = 50_000_000  # ns-stamping file systems tick every few ms
COARSE_WINDOW_NS = 2_000_000_000  # whole-second (FAT: 2 s) stamping
# ``irbench run`` options that cannot change what an unchanged rerun does (with their arity)
_HARMLESS = {"--quiet": 0, "--fail-fast": 0, "--workers": 1, "--wait": 1, "--cluster": 1}


def stamp_path(config_path: str, collection: str | None = None) -> str:
    """Where the stamp of ``config_path`` is (with ``collection``: that collection's stamp of
    a config with ``collections:``)."""
    key = os.path.realpath(config_path) + ("" if collection is None else "\0" + collection)
    digest = hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()
    return os.path.join(cache_folder(), "run-stamps", digest[:32] + ".json")


def file_facts(path: str) -> list[int] | None:
    """What tells a file changed without reading it: size, mtime, ctime, inode (None: gone)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def racy(facts: list[int], checked_ns: int) -> bool:
    """Whether a file's mtime or ctime is too close to ``checked_ns`` (just before irbench read
    anything) to tell a change after that moment, of the same size, from no change."""
    _, mtime, ctime, _ = facts
    coarse = mtime % 1_000_000_000 == 0 and ctime % 1_000_000_000 == 0
    window = COARSE_WINDOW_NS if coarse else FINE_WINDOW_NS
    return max(mtime, ctime) >= checked_ns - window


def glob_matches(pattern: str) -> list[str]:
    """The files ``pattern`` matches, sorted (as the config builds its systems)."""
    return sorted(p for p in globbing.glob(pattern) if os.path.isfile(p))


def summary_line(systems: int, qrels: int, measures: int, evaluated: int, reused: int,
                 failed: int, seconds: float, store: str) -> str:
    """The line ``irbench run`` ends with (on stderr), parseable by scripts."""
    return (f"irbench run: {systems} systems x {qrels} qrels sets x {measures} measures: "
            f"{evaluated} evaluated, {reused} reused, {failed} failed in {seconds:.2f} s; "
            f"store {store}")


@dataclass
class Stamp:
    """What a run that ended without failure leaves for the next one to compare with."""

    config_sha256: str
    store: str
    inputs: dict[str, list[int] | None]  # path -> file_facts before the run
    globs: dict[str, list[str]]  # pattern -> matched files
    systems: int
    qrels: int
    measures: int
    results: int  # stored (system, qrels set) results a rerun finds
    leaderboard: str | None  # None after a --quiet run: a rerun that prints it goes the long way
    checked_ns: int = 0  # time.time_ns() just before the config (and so any input) was read
    store_facts: list[int] | None = None
    version: str = __version__
    format: int = FORMAT
    schema: int = STORE_SCHEMA
    written: float = field(default_factory=time.time)
    collection: str | None = None  # the collection of a config with collections:
    token: str = ""  # shared with the index and the other collections' stamps of the run

    def write(self, config_path: str) -> bool:
        """Record the stamp once the run has closed the store; False if it could not be."""
        if any(file_facts(p) != facts for p, facts in self.inputs.items()):
            return False  # an input changed while the run read it: decide by hashes next time
        if any(facts is None or racy(facts, self.checked_ns) for facts in self.inputs.values()):
            return False
        self.store_facts = _store_facts(self.store)
        if self.store_facts is None or self.store_facts[1] % 1_000_000_000 == 0:
            return False
        return _write_json(stamp_path(config_path, self.collection), asdict(self))


def write_collections(config_path: str, stamps: Sequence[Stamp]) -> bool:
    """Record the stamps of every collection of a config with ``collections:`` (in order, once
    the run has closed the store after the last one), then the index that lets a rerun use
    them; False (and no index) if any could not be written."""
    token = f"{os.getpid()}-{time.time_ns()}"
    for one in stamps:
        one.token = token
        if one.collection is None or not one.write(config_path):
            return False
    index = {"format": FORMAT, "version": __version__, "schema": STORE_SCHEMA,
             "config_sha256": stamps[0].config_sha256 if stamps else None, "token": token,
             "collections": [one.collection for one in stamps]}
    return bool(stamps) and _write_json(stamp_path(config_path), index)


def _write_json(path: str, data: dict) -> bool:
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(data, f)
        os.replace(tmp, path)
    except OSError:
        return False
    return True


def forget(config_path: str) -> None:
    """Drop the stamp of ``config_path`` (before a run that may change the store)."""
    try:
        os.unlink(stamp_path(config_path))
    except OSError:
        pass


def _store_facts(store: str) -> list[int] | None:
    """Size, mtime, ctime and inode of the store: any write to it, even one that puts the
    mtime back (a store damaged in place), moves its ctime."""
    if os.path.exists(store + ".wal"):
        return None  # uncheckpointed writes: the file alone does not say what the store holds
    return file_facts(store)


def _config_sha256(path: str) -> str | None:
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return None


def _run_arguments(argv: Sequence[str]) -> tuple[str, bool] | None:
    """(config, quiet) when ``argv`` is ``run CONFIG`` with only harmless options, else None."""
    if not argv or argv[0] != "run":
        return None
    config, quiet, i = None, False, 1
    while i < len(argv):
        arg = argv[i]
        name = arg.split("=", 1)[0]
        if name in _HARMLESS:
            quiet |= name == "--quiet"
            i += 1 + (_HARMLESS[name] if "=" not in arg else 0)
        elif arg.startswith("-") or config is not None:
            return None  # --rehash, --help, an abbreviation, a mistake: argparse decides
        else:
            config, i = arg, i + 1
    if config is None or i != len(argv):
        return None
    return config, quiet


def _still_true(stamp: dict, config: str) -> bool:
    if stamp.get("format") != FORMAT or stamp.get("version") != __version__ or \
            stamp.get("schema") != STORE_SCHEMA:
        return False  # another irbench, or another store schema: migrate, decide by hashes
    if stamp.get("config_sha256") != _config_sha256(config):
        return False
    if stamp.get("store_facts") is None or _store_facts(stamp["store"]) != stamp["store_facts"]:
        return False
    if any("://" in p for p in [*stamp["inputs"], *stamp["globs"]]):
        return False  # objects in object storage: only their store can tell a change
    if any(glob_matches(pattern) != matched for pattern, matched in stamp["globs"].items()):
        return False
    return all(file_facts(path) == facts for path, facts in stamp["inputs"].items())


def _read_json(path: str) -> dict:
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    if not isinstance(data, dict):
        raise TypeError(path)
    return data


def _holding(config: str, quiet: bool) -> list[dict] | None:
    """The stamps that answer ``irbench run CONFIG`` (one, or one per collection), when every
    one still holds; else None. Raises what a damaged stamp raises."""
    index = _read_json(stamp_path(config))
    if "collections" not in index:
        stamps = [index]
    else:  # a config with collections: every collection's stamp, all of the same run
        if index["format"] != FORMAT or index["version"] != __version__ or \
                index["config_sha256"] != _config_sha256(config) or not index["collections"]:
            return None
        stamps = [_read_json(stamp_path(config, name)) for name in index["collections"]]
        if any(s["collection"] != name or s["token"] != index["token"]
               for s, name in zip(stamps, index["collections"], strict=True)):
            return None
    for stamp in stamps:
        if (not quiet and stamp["leaderboard"] is None) or not _still_true(stamp, config):
            return None
    return stamps


def answer_unchanged_run(argv: Sequence[str]) -> int | None:
    """Answer ``irbench run CONFIG`` from its stamp (or its collections' stamps) when nothing
    changed (exit code 0), else None."""
    started = time.perf_counter()
    parsed = _run_arguments(argv)
    if parsed is None:
        return None
    config, quiet = parsed
    try:
        stamps = _holding(config, quiet)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    if stamps is None:
        return None
    for stamp in stamps:  # what the long way prints, collection by collection
        if stamp.get("collection") is not None:
            print(f"irbench run: collection '{stamp['collection']}'", file=sys.stderr)
        print(summary_line(stamp["systems"], stamp["qrels"], stamp["measures"], 0,
                           stamp["results"], 0, time.perf_counter() - started, stamp["store"]),
              file=sys.stderr)
        if not quiet and stamp["leaderboard"]:
            print(stamp["leaderboard"])
    return 0
