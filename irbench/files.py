"""Writing output files so that a failure (a full disk, a file-size limit, an interrupt)
leaves the previous file as it was: :func:`replacing` writes to a temporary name beside the
target and renames it onto the target only once everything is written and flushed to disk.
The new file keeps the old one's mode; through a symlink, the link's target is replaced. A
target that is not a regular file (``/dev/stdout``, a FIFO), or a writable file in a folder
we may not write, is written directly; a file with other hard links gets a new inode (they
keep the old content)."""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@contextmanager
def replacing_name(path: str | os.PathLike) -> Iterator[str]:
    """A temporary file name beside ``path`` for its new content, written by the block (by
    any writer); renamed onto ``path`` once the block ends without an exception and the file
    is on disk, else removed, ``path`` left as it was."""
    path = os.path.realpath(os.fspath(path))  # through a symlink: its target is replaced
    try:
        info: os.stat_result | None = os.stat(path)
    except OSError:
        info = None
    if info is not None and not stat.S_ISREG(info.st_mode):  # /dev/stdout, a FIFO
        yield path
        return
    folder = os.path.dirname(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)[:100]}.", suffix=".part",
                                   dir=folder)
    except PermissionError:  # a file we may write in a folder we may not: in place, then
        yield path
        return
    try:  # the mode the file had, else the one open() would have given it
        os.fchmod(fd, stat.S_IMODE(info.st_mode) if info is not None else 0o666 & ~_umask())
        os.close(fd)
        yield tmp
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


@contextmanager
def replacing(path: str | os.PathLike, binary: bool = False) -> Iterator[IO[Any]]:
    """A file object for ``path``'s new content (text in UTF-8, or ``binary``); ``path`` is
    replaced when the block ends without an exception, else left as it was."""
    with replacing_name(path) as name:
        with open(name, "wb" if binary else "w", encoding=None if binary else "utf-8") as fh:
            yield fh


def write_file(path: str | os.PathLike, data: str | bytes) -> None:
    """``path`` replaced by ``data`` whole (see :func:`replacing`)."""
    with replacing(path, binary=isinstance(data, bytes)) as fh:
        fh.write(data)


@contextmanager
def replacing_folder(path: str | os.PathLike) -> Iterator[str]:
    """A new, empty folder to fill; renamed onto ``path`` (an older folder there is removed
    after the rename) when the block ends without an exception, else removed."""
    path = os.path.realpath(os.fspath(path))
    parent = os.path.dirname(path)
    work = tempfile.mkdtemp(prefix=f".{os.path.basename(path)[:100]}.", suffix=".part",
                            dir=parent)
    try:
        os.chmod(work, 0o777 & ~_umask())
        yield work
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    old = None
    if os.path.lexists(path):
        old = tempfile.mkdtemp(prefix=f".{os.path.basename(path)[:100]}.", suffix=".old",
                               dir=parent)
        os.rmdir(old)
        os.rename(path, old)
    os.rename(work, path)
    if old is not None:
        if os.path.isdir(old) and not os.path.islink(old):
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.unlink(old)
