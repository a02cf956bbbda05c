"""Where a file comes from: a path, stdin, a file object or a URL (fsspec), read whole;
gzip decompressed within a bound (no gzip bomb), a byte-order mark dropped."""

from __future__ import annotations

import io
import os
import re
import sys
import zlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol

from ..errors import FormatError
from .ids import UTF8_BOM, Loaded, Source

GZIP_MAGIC = b"\x1f\x8b"


GUNZIP_RATIO, GUNZIP_FLOOR = 100, 1 << 28  # a gzip file may expand to max(100x, 256 MiB)


def read_source(source: Source) -> tuple[str, bytes]:
    """Return (display path, raw bytes), decompressing gzip."""
    if isinstance(source, Loaded):
        path, data = source
    elif isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        if path == "-":
            data = sys.stdin.buffer.read()
            path = "<stdin>"
        elif is_url(path):  # read whole through fsspec
            try:
                data = read_url(path)
            except OSError as exc:
                raise FormatError([f"{path}: cannot read ({exc.strerror})"]) from None
        else:
            try:
                with open(path, "rb") as fh:
                    data = fh.read()
            except FileNotFoundError:
                raise FormatError([f"{path}: no such file"]) from None
            except IsADirectoryError:
                raise FormatError([f"{path}: is a directory, not a file"]) from None
            except OSError as exc:
                raise FormatError([f"{path}: cannot read ({exc.strerror})"]) from None
    else:
        path = getattr(source, "name", None) or "<memory>"
        content = source.read()
        data = content.encode("utf-8") if isinstance(content, str) else content
    if data[:2] == GZIP_MAGIC or path.endswith(".gz"):
        data = gunzip_or_fail(path, data)
    data = without_bom(data)
    nul = data.find(b"\x00")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        raise FormatError([f"{path}:{line}: not a text file (NUL byte)"])
    return path, data


def without_bom(data: bytes) -> bytes:
    """``data`` without a UTF-8 byte-order mark at its start. trec_eval reads the mark as part
    of the first topic id, so that topic loses a judgment or a document (a documented
    difference: see docs/trec_eval.md)."""
    return data[len(UTF8_BOM):] if data.startswith(UTF8_BOM) else data


def gunzip(data: bytes) -> bytes:
    """``data`` decompressed (every gzip member), at most ``max(GUNZIP_RATIO x its size,
    GUNZIP_FLOOR)`` bytes: ValueError with the reason for a file that is not gzip or
    expands further (a gzip bomb), found before more than that limit is held in memory."""
    return b"".join(inflate([data], gunzip_limit(len(data))))


def gunzip_limit(compressed: int) -> int:
    """The most bytes a gzip file of ``compressed`` bytes may expand to."""
    return max(GUNZIP_RATIO * compressed, GUNZIP_FLOOR)


def inflate(blocks: Iterable[bytes], limit: int) -> Iterator[bytes]:
    """The decompressed bytes of gzip data arriving in ``blocks`` (every member), at most
    ``limit`` bytes in all: ValueError with the reason for data that is not gzip, is cut
    short, or expands further (found before more than one block's worth is held)."""
    size = 0
    inflater = None
    try:
        for block in blocks:
            data = block
            while data:
                if inflater is None:
                    data = data.lstrip(b"\x00")  # padding between members
                    if not data:
                        break
                    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
                chunk = inflater.decompress(data, limit - size + 1)
                while True:
                    size += len(chunk)
                    if size > limit:
                        raise ValueError(
                            f"gzip file expands to more than {limit:,} bytes (irbench allows "
                            f"{GUNZIP_RATIO} times the compressed size, at least "
                            f"{GUNZIP_FLOOR >> 20} MiB)")
                    yield chunk
                    if not inflater.unconsumed_tail:
                        break
                    chunk = inflater.decompress(inflater.unconsumed_tail, limit - size + 1)
                if inflater.eof:
                    data, inflater = inflater.unused_data, None  # the next member, if any
                else:
                    data = b""
    except zlib.error as exc:
        raise ValueError(f"not a valid gzip file ({exc})") from None
    if inflater is not None:
        raise ValueError("not a valid gzip file (Compressed file ended before the "
                         "end-of-stream marker was reached)")


def gunzip_or_fail(path: str, data: bytes) -> bytes:
    try:
        return gunzip(data)
    except ValueError as exc:
        raise FormatError([f"{path}:1: {exc}"]) from None


_URL_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")


def is_url(path: object) -> bool:
    """Whether ``path`` is a URL (``s3://``, ``gs://``, ``https://``, ``file://`` ...) read
    through fsspec rather than a local path."""
    return isinstance(path, str) and _URL_RE.match(path) is not None


def _fsspec(url: str):
    """(file system, path) of ``url``; a scheme without its package is an OSError naming it."""
    try:
        import fsspec
    except ModuleNotFoundError:
        raise OSError(0, "URLs need the cloud extra: pip install 'irbench[cloud]'") from None
    try:
        return fsspec.core.url_to_fs(url)
    except (ImportError, ValueError) as exc:
        scheme = url.split("://", 1)[0]
        raise OSError(0, f"no fsspec file system for {scheme}:// ({exc}); for s3:// pip "
                      "install 'irbench[cloud]'") from None


def _url_error(url: str, exc: BaseException) -> OSError:
    unreachable = _connection_problem(exc)
    if unreachable is not None:  # fsspec's http file system says "not found" for these too
        return ConnectionError(111, f"cannot connect ({unreachable})", url)
    if isinstance(exc, FileNotFoundError):
        return FileNotFoundError(2, "no such object", url)
    if isinstance(exc, PermissionError):
        return PermissionError(13, "permission denied", url)
    if isinstance(exc, OSError) and exc.strerror:
        return exc
    return OSError(5, f"{type(exc).__name__}: {str(exc)[:300]}", url)


def _connection_problem(exc: BaseException) -> str | None:
    """What failed, when ``exc`` (or an error it came from) is a failure to reach the server:
    a refused connection, an unknown host, a timeout."""
    seen: set[int] = set()
    error: BaseException | None = exc
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        name = type(error).__name__
        if isinstance(error, (ConnectionError, TimeoutError)) or "Connect" in name \
                or "Timeout" in name or "DNS" in name:
            return " ".join(str(error).split())[:200] or name
        error = error.__cause__ or error.__context__
    return None


def url_stat(url: str) -> tuple[int, int]:
    """(size, a version token) of the object at ``url``: the token is a hash of its ETag or
    modification time (0 when the store reports neither: then it is always read again)."""
    fs, path = _fsspec(url)
    try:
        info = fs.info(path)
    except Exception as exc:  # each file system raises its own errors
        raise _url_error(url, exc) from None
    if info.get("type") == "directory":
        raise IsADirectoryError(21, "a folder, not a file", url)
    version = next((str(info[k]) for k in ("ETag", "etag", "VersionId", "LastModified",
                                           "mtime", "last_modified", "updated", "created")
                    if info.get(k) not in (None, "")), "")
    token = int.from_bytes(_digest(version.encode())[:7], "big") if version else 0
    return int(info.get("size") or 0), token


def _digest(data: bytes) -> bytes:
    import hashlib  # here: 7 ms of irbench eval's start-up (OpenSSL); URL inputs only

    return hashlib.sha256(data).digest()


class Stream(Protocol):
    """What the streaming readers use of a binary file."""

    def read(self, size: int = -1) -> bytes: ...

    def readline(self, size: int = -1) -> bytes: ...


@contextmanager
def open_binary(path: str) -> Iterator[Stream]:
    """A binary file object of a local path or of the object at a URL, read as a stream
    (never whole in memory); a URL's errors are OSErrors naming it, as :func:`read_url`'s."""
    if not is_url(path):
        with open(path, "rb") as fh:
            yield fh
        return
    fs, inner = _fsspec(path)
    try:
        fh = fs.open(inner, "rb")
    except Exception as exc:
        raise _url_error(path, exc) from None
    with fh:
        yield _UrlReader(fh, path)


class _UrlReader:
    """An fsspec file whose read errors are OSErrors naming the URL."""

    def __init__(self, fh: Any, url: str):
        self.fh, self.url = fh, url

    def read(self, size: int = -1) -> bytes:
        try:
            return self.fh.read(size)
        except Exception as exc:
            raise _url_error(self.url, exc) from None

    def readline(self, size: int = -1) -> bytes:
        try:
            return self.fh.readline(size)
        except Exception as exc:
            raise _url_error(self.url, exc) from None



class Prefixed(io.RawIOBase):
    """Bytes already read from a stream, then the rest of it, as one readable file."""

    def __init__(self, first: bytes, rest: Stream):
        self.first, self.rest = first, rest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self.first:
            data, self.first = self.first[:len(buffer)], self.first[len(buffer):]
        else:
            data = self.rest.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)


def source_size(path: str) -> int:
    """The size of a local file or of the object at a URL."""
    return url_stat(path)[0] if is_url(path) else os.path.getsize(path)


def read_url(url: str) -> bytes:
    """The bytes of the object at ``url`` (read once, whole)."""
    fs, path = _fsspec(url)
    try:
        with fs.open(path, "rb") as fh:
            return fh.read()
    except Exception as exc:
        raise _url_error(url, exc) from None


def glob_url(pattern: str) -> list[str]:
    """The URLs an fsspec glob pattern matches (``s3://bucket/runs/*.txt``), sorted."""
    fs, path = _fsspec(pattern)
    try:
        found = fs.glob(path, detail=True)
    except Exception as exc:
        raise _url_error(pattern, exc) from None
    return sorted(fs.unstrip_protocol(p) for p, info in found.items()
                  if info.get("type") != "directory")
