"""What a system run as a command used and where it ran: the supervisor that runs it (a small
Python program between irbench and the command), the command's resource usage, and the
platform as ir_metadata names its fields (https://www.ir-metadata.org, ``platform`` and
``implementation``).

The supervisor (``python -I -S -c SUPERVISOR TMP ARGV...``) is started in a session of its own
with a pipe from irbench on its stdin (the lifeline). It forks the command into a process group
of its own (stdin and stdout /dev/null, stderr its own: irbench's bounded reader), reports the
group's id on its stdout, and waits for the command with ``os.wait4``. Then it kills what is
left of the group and reports the command's wait status and resource usage on its stdout. When
the lifeline reaches its end (irbench died, however: ``kill -9`` too, or gave up on the command)
it kills the command's group, removes the partial run ``TMP`` and exits. The command's group
holds the command and everything it starts, the supervisor not: so the supervisor outlives the
group and can clean up after it.
"""

from __future__ import annotations

import copy
import functools
import os
import platform
import shlex
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from .. import __version__

# The supervisor's program. Exit status 127 and a line on stderr when the command cannot be
# started (as a shell does). SIGPIPE and SIGXFSZ, which Python ignores, are the default again
# in the command.
SUPERVISOR = r"""
import os, signal, sys, threading
tmp, argv = sys.argv[1], sys.argv[2:]
pid = os.fork()
if pid == 0:
    try:
        os.setpgid(0, 0)
        for name in ("SIGPIPE", "SIGXFSZ"):
            if hasattr(signal, name):
                signal.signal(getattr(signal, name), signal.SIG_DFL)
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 0)
        os.dup2(null, 1)
        os.execvp(argv[0], argv)
    except OSError as exc:
        os.write(2, ("irbench: cannot run %r: %s\n" % (argv[0], exc.strerror)).encode())
    os._exit(127)
try:
    os.setpgid(pid, pid)
except OSError:
    pass
def end_group():
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass
def lifeline():
    while os.read(0, 512):
        pass
    end_group()
    try:
        os.unlink(tmp)
    except OSError:
        pass
    os._exit(137)
os.write(1, b"%d\n" % pid)
threading.Thread(target=lifeline, daemon=True).start()
_, status, usage = os.wait4(pid, 0)
end_group()
os.write(1, b"%d %r %r %d\n" % (status, usage.ru_utime, usage.ru_stime, usage.ru_maxrss))
"""


def supervisor_argv(tmp: str, argv: Sequence[str]) -> list[str]:
    """The supervisor's command line for the command ``argv`` writing the run ``tmp``."""
    return [sys.executable, "-I", "-S", "-c", SUPERVISOR, tmp, *argv]


@dataclass(frozen=True)
class Usage:
    """What the command used: its wait status (``os.wait4``'s), user+system CPU seconds of it
    and the children it waited for, its peak resident memory in bytes."""

    status: int
    cpu_seconds: float
    peak_rss_bytes: int


# ru_maxrss is in kilobytes on Linux and the BSDs, in bytes on macOS
_RSS_UNIT = 1 if sys.platform == "darwin" else 1024


def usage_of(status: int, utime: float, stime: float, maxrss: int) -> Usage:
    return Usage(status, utime + stime, maxrss * _RSS_UNIT)


def parse_report(lines: list[bytes]) -> tuple[int | None, Usage | None]:
    """(the command's process group, its usage) from the supervisor's report; None for what
    it did not report (it was killed first)."""
    group = usage = None
    if lines and lines[0].strip().isdigit():
        group = int(lines[0])
    if len(lines) >= 2:
        fields = lines[1].split()
        try:
            usage = usage_of(int(fields[0]), float(fields[1]), float(fields[2]), int(fields[3]))
        except (ValueError, IndexError):
            usage = None
    return group, usage


def exit_code(status: int) -> int:
    """The exit code of a wait status; minus the signal's number for a killed process (as
    :attr:`subprocess.Popen.returncode`)."""
    return os.waitstatus_to_exitcode(status)


# ---- the platform, as ir_metadata names it -------------------------------------------------

PACKAGES = ("numpy", "scipy", "duckdb")  # irbench's own dependencies, named by default


def _cpu_model() -> str:
    try:  # Linux; a bounded read of a small file
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh.read(1 << 16).splitlines():
                if line.lower().startswith(("model name", "hardware", "cpu model")):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _ram() -> str | None:
    try:
        size = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None
    return f"{size / (1 << 30):.1f} GB"


@functools.lru_cache(maxsize=1)
def _hardware_and_os() -> tuple[dict, dict]:
    mode = platform.architecture()[0].replace("bit", "-bit")  # ir_metadata's "64-bit"
    hardware: dict = {"cpu": {"model": _cpu_model(), "architecture": platform.machine(),
                              "operation mode": mode,
                              "number of cores": os.cpu_count()}}
    ram = _ram()
    if ram is not None:
        hardware["ram"] = ram
    system = {"kernel": f"{platform.system()} {platform.release()}",
              "distribution": platform.platform()}
    return hardware, system


def package_versions(packages: Sequence[str]) -> list[str]:
    """``name==version`` of each package installed (``name`` alone for one that is not), in
    the order given."""
    import importlib.metadata  # 12 ms (email, zipfile): only systems given as commands

    found = []
    for name in packages:
        try:
            found.append(f"{name}=={importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            found.append(name)
    return found


def environment(argv: Sequence[str] = (), packages: Sequence[str] = PACKAGES) -> dict:
    """Where a command ran, as ir_metadata's ``platform`` (hardware, operating system,
    software) and ``implementation`` (the command line) fields; the Python libraries listed
    are Python itself, irbench and ``packages``."""
    hardware, system = _hardware_and_os()
    libraries = [f"python=={platform.python_version()}", f"irbench=={__version__}",
                 *package_versions(packages)]
    found: dict = {"platform": {"hardware": copy.deepcopy(hardware),
                                "operating system": dict(system),
                                "software": {"libraries": {"python": libraries}}}}
    if argv:
        found["implementation"] = {"executable": {"cmd": shlex.join(argv)}}
    return found
