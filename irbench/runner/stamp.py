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


def stamp_path(config_path: str) -> str:
    key = hashlib.sha256(os.path.realpath(config_path).encode("utf-8", "surrogateescape"))
    return os.path.join(cache_folder(), "run-stamps", key.hexdigest()[:32] + ".json")


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

    def write(self, config_path: str) -> bool:
        """Record the stamp once the run has closed the store; False if it could not be."""
        if any(file_facts(p) != facts for p, facts in self.inputs.items()):
            return False  # an input changed while the run read it: decide by hashes next time
        if any(facts is None or racy(facts, self.checked_ns) for facts in self.inputs.values()):
            return False
        self.store_facts = _store_facts(self.store)
        if self.store_facts is None or self.store_facts[1] % 1_000_000_000 == 0:
            return False
        path = stamp_path(config_path)
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            tmp = f"{path}.{os.getpid()}.tmp"
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump(asdict(self), f)
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


def answer_unchanged_run(argv: Sequence[str]) -> int | None:
    """Answer ``irbench run CONFIG`` from its stamp when nothing changed (exit code 0), else
    None."""
    started = time.perf_counter()
    parsed = _run_arguments(argv)
    if parsed is None:
        return None
    config, quiet = parsed
    try:
        with open(stamp_path(config), encoding="utf-8") as f:
            stamp = json.load(f)
        if (not quiet and stamp["leaderboard"] is None) or not _still_true(stamp, config):
            return None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    print(summary_line(stamp["systems"], stamp["qrels"], stamp["measures"], 0, stamp["results"],
                       0, time.perf_counter() - started, stamp["store"]), file=sys.stderr)
    if not quiet and stamp["leaderboard"]:
        print(stamp["leaderboard"])
    return 0
