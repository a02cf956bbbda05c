"""The sha256 of each collection file, remembered between opens by the file's size and
modification time, so that an unchanged collection is not read again to be checked.

A stamp per file (``<cache>/documents/stamps/<hash of the path>.json``) holds the path, size,
``mtime_ns`` and sha256, and when it was written. It is trusted only while the file's size and
``mtime_ns`` are those stamped, and only if it was written at least :data:`RACY_NS` after the
file's modification (a file changed again within the same clock tick would keep its
``mtime_ns``: such a stamp is not trusted and the file is hashed again, as git does for its
index). A stamp is a help, not a need: one that cannot be read or written is ignored.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Sequence
from typing import NamedTuple

from ..files import write_file

RACY_NS = 2_000_000_000
BLOCK = 4 << 20


class FileHash(NamedTuple):
    """A collection file's sha256 with the size and mtime it was taken at; ``known``: taken
    from a stamp rather than computed now."""

    path: str
    size: int
    mtime_ns: int
    sha256: str
    known: bool


def stamp_path(folder: str, path: str) -> str:
    name = hashlib.blake2b(os.fsencode(path), digest_size=16).hexdigest()
    return os.path.join(folder, f"{name}.json")


def sha256_file(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(BLOCK):
            digest.update(block)
    return digest.hexdigest()


def read_stamp(folder: str, path: str) -> dict:
    try:
        with open(stamp_path(folder, path), encoding="utf-8") as fh:
            stamp = json.load(fh)
    except (OSError, ValueError):
        return {}
    return stamp if isinstance(stamp, dict) else {}


def file_hash(path: str, folder: str) -> FileHash:
    """``path``'s sha256: from its stamp in ``folder`` if the stamp still holds, else read."""
    info = os.stat(path)
    stamp = read_stamp(folder, path)
    trusted = (stamp.get("path") == path and stamp.get("size") == info.st_size
               and stamp.get("mtime_ns") == info.st_mtime_ns
               and isinstance(stamp.get("stamped_ns"), int)
               and stamp["stamped_ns"] >= info.st_mtime_ns + RACY_NS
               and isinstance(stamp.get("sha256"), str))
    if trusted:
        return FileHash(path, info.st_size, info.st_mtime_ns, stamp["sha256"], True)
    return FileHash(path, info.st_size, info.st_mtime_ns, sha256_file(path), False)


def hash_files(paths: Sequence[str], folder: str) -> list[FileHash]:
    return [file_hash(path, folder) for path in paths]


def save_stamps(hashes: Sequence[FileHash], folder: str) -> None:
    """Stamps for the files hashed now whose size and mtime are still those hashed (call it
    last, after the index is built: a stamp written long after the file's modification is one
    that can be trusted)."""
    for found in hashes:
        if found.known:
            continue
        try:
            info = os.stat(found.path)
            if (info.st_size, info.st_mtime_ns) != (found.size, found.mtime_ns):
                continue
            os.makedirs(folder, exist_ok=True)
            stamp = {"path": found.path, "size": found.size, "mtime_ns": found.mtime_ns,
                     "sha256": found.sha256, "stamped_ns": time.time_ns()}
            write_file(stamp_path(folder, found.path), json.dumps(stamp) + "\n")
        except OSError:
            continue


def combined_sha256(digests: Sequence[str]) -> str:
    """One sha256 for a collection of files: that of their sha256 digests (hex), one per
    line, in the order given."""
    return hashlib.sha256("".join(f"{d}\n" for d in digests).encode("ascii")).hexdigest()
