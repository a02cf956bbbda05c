"""Systems given as commands (issue 41): a command line that writes a run file, what it depends
on, the key that says whether it must run again, and one execution of it.

- :class:`CommandSpec`: the command (a template with placeholders, never run through a shell),
  its ``inputs`` (files and folders whose content it depends on), ``env`` (the environment
  variables whose values are part of its key), ``timeout`` and ``cwd`` (the config's folder);
- :func:`command_argv`: the template split into arguments first (``shlex``), then each argument
  filled, so a path with spaces stays one argument;
- :func:`command_key`: sha256 of the command, the inputs' contents, the named variables'
  values and the collection's inputs' contents; no file-system order, no modification time;
- :func:`execute`: the command run once under a supervisor (:mod:`.command_usage`), writing
  ``{run}`` to a temporary name beside the run file that replaces the run file only when the
  command exits 0 having written something; stopped at its timeout (SIGTERM to its process
  group, SIGKILL after a grace period); its process group killed if irbench dies.
"""

from __future__ import annotations

import hashlib
import json
import os
import select
import shlex
import signal
import stat
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from string import Formatter

from ..documents.hashing import sha256_file
from ..errors import CommandError
from .command_usage import (
    PACKAGES,
    Usage,
    environment,
    exit_code,
    parse_report,
    supervisor_argv,
    usage_of,
)

PLACEHOLDERS = ("topics", "qrels", "documents", "run", "collection")
PATHS = ("topics", "qrels", "documents", "run")  # placeholders whose values are paths
STATUSES = ("ok", "failed", "timeout", "no-output")
MAX_FOLDER_FILES = 100_000  # an input folder with more files is refused
MAX_FOLDER_BYTES = 64 << 30  # an input folder bigger than this is refused (64 GiB)
GRACE = 5.0  # seconds between SIGTERM and SIGKILL of a command past its timeout
STDERR_TAIL = 4096  # bytes of a command's stderr kept: the last ones


# ---- the command and its placeholders ------------------------------------------------------


def _known() -> str:
    return ", ".join("{" + name + "}" for name in PLACEHOLDERS)


def _parse(command: str) -> list[list[tuple[str, str | None]]]:
    """Each argument of ``command`` as (literal text, placeholder or None) pieces."""
    try:
        tokens = shlex.split(command)
    except ValueError as exc:
        raise CommandError(f"command {command!r}: {exc}") from None
    if not tokens:
        raise CommandError("the command is empty")
    parsed = []
    for token in tokens:
        try:
            pieces = list(Formatter().parse(token))
        except ValueError:
            raise CommandError(
                f"command {command!r}: a stray brace in {token!r} (write {{{{ or }}}} for a "
                f"brace itself); the placeholders are {_known()}") from None
        for _, name, spec, conversion in pieces:
            if name is not None and (name not in PLACEHOLDERS or spec or conversion):
                shown = name + (f"!{conversion}" if conversion else "") + \
                    (f":{spec}" if spec else "")
                raise CommandError(f"command {command!r}: unknown placeholder {{{shown}}}; "
                                   f"the placeholders are {_known()}")
        parsed.append([(literal, name) for literal, name, _, _ in pieces])
    return parsed


def placeholders_used(command: str) -> frozenset[str]:
    """The placeholders ``command`` uses (:class:`CommandError` for a malformed one)."""
    return frozenset(name for token in _parse(command) for _, name in token
                     if name is not None)


def command_argv(command: str, values: Mapping[str, str]) -> list[str]:
    """The arguments of ``command`` with each placeholder replaced by its value in
    ``values``: split first, then filled, so a value stays inside its argument."""
    argv = []
    for token in _parse(command):
        parts = []
        for literal, name in token:
            parts.append(literal)
            if name is None:
                continue
            if name not in values:
                raise CommandError(f"command {command!r} uses {{{name}}}, which has no value "
                                   f"here (given: {', '.join(sorted(values)) or 'none'})")
            parts.append(values[name])
        argv.append("".join(parts))
    return argv


@dataclass(frozen=True)
class CommandSpec:
    """A system given as a command. ``command``: a template (see :data:`PLACEHOLDERS`), split
    like a shell would split it but never run by one; ``inputs``: files and folders (relative
    to ``cwd``) whose content the system depends on; ``env``: names of environment variables
    whose values are part of its key; ``timeout``: seconds; ``cwd``: where the command runs
    (the config's folder). A malformed command is refused here (:class:`CommandError`)."""

    command: str
    inputs: tuple[str, ...] = ()
    env: tuple[str, ...] = ()
    timeout: float = 3600.0
    cwd: str = "."

    def __post_init__(self) -> None:
        _parse(self.command)
        if not self.timeout > 0:
            raise CommandError(f"command {self.command!r}: the timeout must be a positive "
                               f"number of seconds, not {self.timeout!r}")


# ---- the key -------------------------------------------------------------------------------


file_sha256 = sha256_file  # the sha256 of a file's bytes, read in chunks


def _folder_entries(root: str, max_files: int, max_bytes: int) -> list[tuple[str, str, int]]:
    """(kind, path relative to ``root`` with /, size) of everything under the folder, sorted
    by path; links are not followed (a link is its target's name)."""
    entries: list[tuple[str, str, int]] = []
    total = 0

    def refuse(what: str) -> CommandError:
        return CommandError(f"input folder {root}: {what}; name the files the system depends "
                            f"on instead")

    def failed(exc: OSError) -> None:
        raise CommandError(f"input folder {root}: {exc.strerror}: {exc.filename}")

    for folder, dirs, files in os.walk(root, onerror=failed, followlinks=False):
        dirs.sort()
        for name in sorted(dirs + files):
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, root).replace(os.sep, "/")
            try:
                info = os.lstat(path)
            except OSError as exc:
                failed(exc)
                raise  # not reached: failed raises
            kind = ("file" if stat.S_ISREG(info.st_mode) else "dir" if stat.S_ISDIR(
                info.st_mode) else "link" if stat.S_ISLNK(info.st_mode) else "other")
            size = info.st_size if kind == "file" else 0
            total += size
            entries.append((kind, rel, size))
            if len(entries) > max_files:
                raise refuse(f"more than {max_files:,} files")
            if total > max_bytes:
                raise refuse(f"more than {max_bytes / (1 << 30):g} GiB")
    entries.sort(key=lambda entry: entry[1])
    return entries


def _folder_digest(root: str, hasher: Callable[[str], str], max_files: int,
                   max_bytes: int) -> str:
    listed = []
    for kind, rel, _ in _folder_entries(root, max_files, max_bytes):
        path = os.path.join(root, rel)
        what = (hasher(path) if kind == "file" else os.readlink(path) if kind == "link"
                else "")
        listed.append([kind, rel, what])
    return _sha256_of(listed)


def _input_digest(cwd: str, path: str, hasher: Callable[[str], str], max_files: int,
                  max_bytes: int) -> str:
    if "://" in path:  # an object at a URL: the caller's hasher knows its source
        return hasher(path)
    full = os.path.join(cwd, path)
    try:
        info = os.stat(full)
        if stat.S_ISDIR(info.st_mode):
            return _folder_digest(full, hasher, max_files, max_bytes)
        if not stat.S_ISREG(info.st_mode):
            raise CommandError(f"input {full}: not a file or a folder")
        return hasher(full)
    except OSError as exc:
        raise CommandError(f"input {full}: {exc.strerror}") from None


def _sha256_of(value: object) -> str:
    text = json.dumps(value, ensure_ascii=True, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def command_key(spec: CommandSpec, placeholders_that_are_inputs: Mapping[str, str], *,
                environ: Mapping[str, str] | None = None,
                hasher: Callable[[str], str] = file_sha256,
                max_files: int = MAX_FOLDER_FILES, max_bytes: int = MAX_FOLDER_BYTES) -> str:
    """The sha256 that changes when anything the command's run depends on changes: the
    command's text; the content of each of ``spec.inputs`` (a folder: its files' relative
    paths and contents, its links' targets, not their modification times); the values of the
    variables ``spec.env`` names in ``environ`` (default ``os.environ``; a variable that is
    not set differs from an empty one); the content of the collection's inputs given
    (``{"topics": path, "qrels": path, "documents": path}``). ``hasher``: a file's sha256
    (e.g. one the store has cached). A missing input, or a folder of more than ``max_files``
    files or ``max_bytes`` bytes, is a :class:`CommandError`."""
    environ = os.environ if environ is None else environ

    def digest(path: str) -> str:
        return _input_digest(spec.cwd, path, hasher, max_files, max_bytes)

    return _sha256_of({
        "command": spec.command,
        "inputs": [[path, digest(path)] for path in sorted(set(spec.inputs))],
        "env": [[name, environ.get(name)] for name in sorted(set(spec.env))],
        "collection": [[name, digest(path)] for name, path
                       in sorted(placeholders_that_are_inputs.items())],
    })


# ---- one execution -------------------------------------------------------------------------


@dataclass(frozen=True)
class CommandOutcome:
    """One execution of a command. ``status``: one of :data:`STATUSES`; ``exit_code``: the
    command's (minus the signal's number if a signal ended it; None if it never started);
    ``cpu_seconds``: user+system time of the command and the children it waited for;
    ``peak_rss_bytes``: its largest resident memory (of it or one of those children);
    ``stderr_tail``: the last :data:`STDERR_TAIL` bytes it wrote to stderr; ``argv``: its
    arguments with ``{run}`` the run file; ``started_at``: UTC, ISO 8601."""

    status: str
    exit_code: int | None
    wall_seconds: float
    cpu_seconds: float
    peak_rss_bytes: int
    stderr_tail: str
    argv: tuple[str, ...]
    started_at: str

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def environment(self, packages: tuple[str, ...] = PACKAGES) -> dict:
        """Where it ran, as ir_metadata's ``platform`` and ``implementation`` fields."""
        return environment(self.argv, packages)


class _Supervised:
    """The supervisor of one command, its lifeline, its report and stderr's tail."""

    def __init__(self, tmp: str, argv: list[str], cwd: str, tail: int):
        self.lifeline_read, self.lifeline = os.pipe()
        try:
            import subprocess  # 5 ms: only a system given as a command runs one

            self.proc = subprocess.Popen(
                supervisor_argv(tmp, argv), stdin=self.lifeline_read, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, cwd=cwd, start_new_session=True)
        except BaseException:
            os.close(self.lifeline)
            raise
        finally:
            os.close(self.lifeline_read)
        self.report = bytearray()
        self.tail = bytearray()
        self.reader = threading.Thread(target=self._read_stderr, args=(tail,), daemon=True)
        self.reader.start()

    def _read_stderr(self, keep: int) -> None:
        assert self.proc.stderr is not None
        fd = self.proc.stderr.fileno()
        while chunk := os.read(fd, 1 << 16):
            self.tail += chunk
            if len(self.tail) > keep:
                del self.tail[:-keep]

    def read_until(self, deadline: float) -> bool:
        """The supervisor's report read until it ends (True) or ``deadline`` (False)."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 4096)
                if not chunk:
                    return True
                if len(self.report) < 4096:
                    self.report += chunk

    def group(self) -> int | None:
        return parse_report(bytes(self.report).splitlines())[0]

    def signal_group(self, signum: int) -> None:
        group = self.group()
        if group is not None:
            try:
                os.killpg(group, signum)
            except (ProcessLookupError, PermissionError):
                pass

    def let_go(self) -> None:
        """The lifeline closed: the supervisor kills the command's group and exits."""
        if self.lifeline >= 0:
            os.close(self.lifeline)
            self.lifeline = -1

    def stop(self, grace: float) -> None:
        """The command's group killed and the supervisor ended, within about 2 x ``grace``."""
        if self.group() is not None:  # the supervisor then reports how the command ended
            self.signal_group(signal.SIGKILL)
            if self.read_until(time.monotonic() + grace):
                return
        self.let_go()
        if not self.read_until(time.monotonic() + grace):
            self.proc.kill()

    def wait(self, timeout: float, grace: float) -> bool:
        """Until the supervisor ends; True if the command was stopped at ``timeout``."""
        if self.read_until(time.monotonic() + timeout):
            return False
        self.signal_group(signal.SIGTERM)
        if not self.read_until(time.monotonic() + grace):
            self.stop(grace)
        return True

    def finish(self, grace: float) -> tuple[Usage, str]:
        """The supervisor reaped: the command's usage (the supervisor's own if it could not
        report) and stderr's tail."""
        _, status, usage = os.wait4(self.proc.pid, 0)
        self.proc.returncode = exit_code(status)
        self.let_go()
        self.reader.join(grace)  # a process that left the group may hold stderr: not waited
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()
        reported = parse_report(bytes(self.report).splitlines())[1]
        own = usage_of(status, usage.ru_utime, usage.ru_stime, usage.ru_maxrss)
        return reported or own, bytes(self.tail).decode("utf-8", errors="replace")


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _written(path: str) -> bool:
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and info.st_size > 0


def _publish(tmp: str, target: str) -> None:
    """``tmp`` on disk, renamed onto ``target``, the rename on disk."""
    fd = os.open(tmp, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, target)
    try:
        fd = os.open(os.path.dirname(target), os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _absolute(values: Mapping[str, str]) -> dict[str, str]:
    return {name: os.path.abspath(value) if name in PATHS and "://" not in value else value
            for name, value in values.items()}


def this_python(argv: list[str]) -> list[str]:
    """``argv`` with a first argument ``python`` or ``python3`` replaced by the interpreter
    irbench runs on (a lab's script runs with the packages installed beside irbench, whatever
    ``python`` names on the PATH, if anything)."""
    return [sys.executable, *argv[1:]] if argv and argv[0] in ("python", "python3") else argv


def execute(spec: CommandSpec, placeholders: Mapping[str, str], run_path: str, *,
            grace: float = GRACE, stderr_bytes: int = STDERR_TAIL) -> CommandOutcome:
    """Run ``spec``'s command once, in ``spec.cwd``, with ``placeholders`` (topics, qrels,
    documents, collection; relative paths are made absolute) and ``{run}`` a temporary file
    beside ``run_path`` (``run_path.partial-<pid>``). The run file is replaced by what the
    command wrote only if it exits 0 having written a non-empty file (status ``ok``); else
    ``run_path`` is left as it was (``failed``, ``timeout``, ``no-output``). Past
    ``spec.timeout`` the command's process group gets SIGTERM, then SIGKILL ``grace`` seconds
    later. If this process dies, however, the command's process group is killed and its
    partial run removed; on an exception here (Ctrl-C) the same, then it is raised."""
    target = os.path.abspath(run_path)
    tmp = f"{target}.partial-{os.getpid()}"
    values = _absolute(placeholders)
    argv = this_python(command_argv(spec.command, {**values, "run": tmp}))
    shown = tuple(this_python(command_argv(spec.command, {**values, "run": target})))
    started_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
    start = time.monotonic()

    def outcome(status: str, code: int | None, usage: Usage | None, tail: str):
        return CommandOutcome(
            status=status, exit_code=code, wall_seconds=time.monotonic() - start,
            cpu_seconds=usage.cpu_seconds if usage else 0.0,
            peak_rss_bytes=usage.peak_rss_bytes if usage else 0, stderr_tail=tail,
            argv=shown, started_at=started_at)

    try:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        _remove(tmp)  # left by an earlier process with this pid
        run = _Supervised(tmp, argv, spec.cwd, stderr_bytes)
    except OSError as exc:
        return outcome("failed", None, None, f"irbench: cannot run the command: {exc}")
    published = False
    try:
        try:
            timed_out = run.wait(spec.timeout, grace)
        except BaseException:
            run.stop(grace)
            raise
        finally:
            usage, tail = run.finish(grace)
        code = exit_code(usage.status)
        if timed_out:
            return outcome("timeout", code, usage, tail)
        if code != 0:
            return outcome("failed", code, usage, tail)
        if not _written(tmp):
            return outcome("no-output", code, usage, tail)
        _publish(tmp, target)
        published = True
        return outcome("ok", code, usage, tail)
    finally:
        if not published:
            _remove(tmp)
