"""The ``irbench`` command line. Library errors become ``irbench: error: ...`` here only,
with each error class's exit code.

Each command module imports what its command needs inside the command's function: the
parser is built without numpy, DuckDB or the measures, so an unchanged ``irbench run`` (see
:mod:`irbench.runner.stamp`) and ``--help`` start at once. These are lazy imports for start-up
time; no import circle exists to hide (tests/test_architecture.py counts them).

A closed output (``irbench ... | head``, a reader that exits) ends a command as a closed pipe
ends ``seq``: silently, with exit status 141 (128 + SIGPIPE, what a shell reports for a tool
the pipe stopped), no traceback. Every command stores what it stores before it prints its
first line, so what the status 141 says is lost is output, never data
(tests/test_cli_pipe.py).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from .. import __version__
from ..errors import IrbenchError
from ..escaping import TerminalStream, terminal

COMMAND_MODULES = ("eval", "measures", "campaign", "compare", "validate", "pool", "report",
                   "agreement", "judge", "assess", "judge_eval", "diff", "repro")


ALONE = {"eval": "eval", "run": "campaign"}  # commands parsed without the other modules


class Formatter(argparse.HelpFormatter):
    """argparse's help formatter, the terminal's width found as ``shutil.get_terminal_size``
    finds it but without importing shutil (2 ms of irbench eval's start-up: argparse makes a
    formatter for every argument added)."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None):
        super().__init__(prog, indent_increment, max_help_position,
                         width if width is not None else _columns() - 2)


def _columns() -> int:
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns if columns > 0 else 80


class Parser(argparse.ArgumentParser):
    """An ArgumentParser with the :class:`Formatter` unless told another."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", Formatter)
        super().__init__(*args, **kwargs)


def build_parser(modules: Sequence[str] = COMMAND_MODULES) -> argparse.ArgumentParser:
    parser = Parser(
        prog="irbench", description="TREC-style retrieval evaluation campaigns, end to end."
    )
    parser.add_argument("--version", action="version", version=f"irbench {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for name in modules:  # imported here: 'irbench run' may answer before any of them
        importlib.import_module(f".{name}", __name__).add_parsers(sub)
    for command in _with_config(sub):
        command.add_argument(
            "--collection", metavar="NAME", default=None,
            help="of a config with collections: the collection to work on (irbench run and "
            "check: default every one)")
    return parser


def _with_config(sub) -> list[argparse.ArgumentParser]:
    """The (sub)command parsers that take a campaign config (a positional ``config``)."""
    found, stack = [], list(sub.choices.values())
    while stack:
        parser = stack.pop(0)
        nested = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        for action in nested:
            stack.extend(action.choices.values())
        if any(a.dest == "config" and not a.option_strings for a in parser._actions):
            found.append(parser)
    return found


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command, everything it writes to stdout and stderr through
    :class:`~irbench.escaping.TerminalStream`: no control or format character from a name,
    docno, file or server reaches the terminal, whichever path prints it."""
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = (s if s is None or isinstance(s, TerminalStream)
                              else TerminalStream(s) for s in streams)
    try:
        try:
            code = _main(argv)
        except SystemExit:  # argparse's --help and usage errors print too
            _flush(sys.stdout)
            raise
        _flush(sys.stdout)  # a closed pipe found here, not by the interpreter's last flush
        return code
    except BrokenPipeError:
        if not [s for s in streams if _closed_output(s)]:
            raise  # another pipe (a worker's, a socket's): not the reader of our output
        return CLOSED_PIPE
    finally:
        sys.stdout, sys.stderr = streams


CLOSED_PIPE = 141  # 128 + SIGPIPE: what a shell reports for seq in 'seq 100000 | head -1'


def _flush(stream) -> None:
    if stream is not None:
        stream.flush()


def _closed_output(stream) -> bool:
    """Whether ``stream`` (stdout or stderr) is a pipe whose reader is gone; if so its file
    descriptor is pointed at os.devnull, so that what is left in its buffer goes nowhere at
    the interpreter's last flush instead of failing there again (an "Exception ignored"
    message and exit status 120). The Python documentation's recipe for SIGPIPE."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):  # None, or no file (a test's capture)
        return False
    try:
        stream.flush()
        closed = _reader_gone(fd)
    except BrokenPipeError:
        closed = True
    except OSError:
        return False
    if closed:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, fd)
        finally:
            os.close(devnull)
    return closed


def _reader_gone(fd: int) -> bool:
    """A pipe with no reader polls as an error (POSIX); anything else does not."""
    import select  # here: only after a broken pipe

    if not hasattr(select, "poll"):  # Windows: no poll; the broken pipe was the output's
        return True
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    return any(events & select.POLLERR for _, events in poller.poll(0))


def _main(argv: Sequence[str] | None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] == "run":
        from ..runner.stamp import answer_unchanged_run

        answered = answer_unchanged_run(argv)  # before any heavy import: see irbench.runner.stamp
        if answered is not None:
            return answered
    # 'irbench eval', a drop-in for trec_eval called in loops, imports its own module only
    parser = build_parser((ALONE[argv[0]],) if argv and argv[0] in ALONE else COMMAND_MODULES)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: --help (0) or a usage error (2)
        if exc.code == 2 and argv[0] == "eval":
            return 1  # trec_eval's exit status for a usage error
        raise
    if not getattr(args, "handler", None):
        parser.print_help(sys.stderr)
        return 1
    previous, installed = None, False
    if args.command != "eval":  # a command that writes: every finally runs on SIGTERM
        import signal  # here: 0.5 ms of irbench eval's start-up, which writes nothing

        try:
            previous, installed = signal.signal(signal.SIGTERM, _terminated), True
        except ValueError:  # not the main thread: signals are not this call's to handle
            pass
    try:
        return args.handler(args)
    except IrbenchError as exc:
        for line in str(exc).splitlines() or [type(exc).__name__]:
            print(f"irbench: error: {terminal(line)}", file=sys.stderr)
        damaged = getattr(exc, "damaged", None)
        if damaged:  # before anyone moves the store away: its judgments are in no input
            from ..store.connection import rescue_judgments

            print(f"irbench: note: {terminal(damaged)}: {terminal(rescue_judgments(damaged))}",
                  file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM (see _terminated)
        what = "terminated" if isinstance(exc, Terminated) else "interrupted"
        print(f"irbench: {what}: what was complete is kept (a store stays as it was after its "
              "last complete write; 'irbench run' goes on from there)", file=sys.stderr)
        return 143 if isinstance(exc, Terminated) else 130
    finally:
        if installed:
            import signal

            signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised as an exception so that every ``finally`` runs (temporary folders are
    removed, the store's open transaction rolled back) before irbench exits."""


def _terminated(signum, frame) -> None:
    raise Terminated()


__all__ = ["main", "build_parser"]
