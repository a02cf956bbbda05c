"""Jinja2 templates compiled and rendered within limits (a judge's prompt is a template of the
config's author, run for every pair judged).

Jinja2's sandbox keeps a template from reaching into Python; :class:`Sandbox` adds bounds on
what it may cost. Every string or list a template builds, and every message it renders, holds
at most :data:`MAX_CHARS` characters: the sizes are checked *before* the work is done at each
place a template can make something big (``*``, ``**``, ``+``, ``%`` and ``~``, calls of
methods and globals, filters, ``{% set %}`` blocks and macros, printing a value); a ``range``
has at most :data:`MAX_RANGE` items; an integer at most :data:`MAX_INT_BITS` bits. A render
(and a compile) lasts at most :data:`RENDER_SECONDS`: a timer (``SIGALRM``) interrupts it in
the main thread when no other timer is running; elsewhere the same deadline is checked at each
of those places and at each step of a ``range``, so only a loop over a list the template did
not make by ``range`` can outlast it there. Every failure is a :class:`SandboxError` whose
message gives the template's line when it is known.
"""

from __future__ import annotations

import functools
import itertools
import re
import string
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

MAX_CHARS = 1_000_000  # a rendered message, and any string or list a template builds
MAX_RANGE = 100_000  # items of a range()
MAX_INT_BITS = 4_096  # an integer computed by a template (10**1000 has 3,322)
RENDER_SECONDS = 2.0  # one render or compile

_NUMBER = re.compile(r"\d+")
_PRINTF = re.compile(r"%(?:\([^)]*\))?[#0\- +]*(\*|\d+)?(?:\.(\*|\d+))?[hlL]?(.)", re.S)


class SandboxError(Exception):
    """A template that cannot be compiled or rendered within the limits (the message says
    why, and at which line when it is known)."""


class OutOfTime(Exception):
    """Raised by the timer of :func:`within_time`."""


def within_time(seconds: float, work: Callable[[], Any]) -> Any:
    """``work()``, interrupted by :class:`OutOfTime` after ``seconds`` when called in the main
    thread while no other interval timer runs (the caller's own checks bound it otherwise).
    The previous SIGALRM handler is put back whatever happens."""
    import signal

    if (threading.current_thread() is not threading.main_thread()
            or signal.getitimer(signal.ITIMER_REAL)[0] > 0):
        return work()

    def expire(signum: int, frame: Any) -> None:
        raise OutOfTime()

    previous = signal.signal(signal.SIGALRM, expire)
    try:
        signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            return work()
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    finally:
        signal.signal(signal.SIGALRM, previous)


def weight(value: Any, limit: int = MAX_CHARS) -> int:
    """About how many characters ``str(value)`` takes, counted up to just past ``limit``:
    strings by their length, containers by their items (a string's ``repr`` inside a list
    may take a few times its length, a bounded factor)."""
    total, stack = 0, [value]
    while stack and total <= limit:
        item = stack.pop()
        if isinstance(item, (str, bytes, bytearray)):
            total += len(item)
        elif isinstance(item, bool) or item is None:
            total += 5
        elif isinstance(item, int):
            total += item.bit_length() // 3 + 2
        elif isinstance(item, dict):
            total += 2 + 4 * len(item)
            if total <= limit:
                stack += [x for pair in item.items() for x in pair]
        elif isinstance(item, (list, tuple, set, frozenset)):
            total += 2 + 2 * len(item)
            if total <= limit:
                stack += list(item)
        else:
            attrs = _namespace_attrs(item)
            total += 16 if attrs is None else 14
            if attrs is not None:
                stack.append(attrs)
    return total


def _namespace_attrs(item: Any) -> dict | None:
    """The attributes of a Jinja2 ``namespace()`` (its text shows them), else None."""
    try:
        attrs = object.__getattribute__(item, "_Namespace__attrs")
    except AttributeError:
        return None
    return attrs if isinstance(attrs, dict) else None


def _too_big(what: str, size: int) -> SandboxError:
    return SandboxError(f"{what} would hold about {size:,} characters (at most {MAX_CHARS:,})")


def _width(value: Any, what: str) -> None:
    if isinstance(value, int) and value > MAX_CHARS:
        raise _too_big(what, value)


def _printf(fmt: str, args: Any, what: str) -> int:
    """The size ``fmt % args`` may reach (its widths checked)."""
    fields = 0
    for found in _PRINTF.finditer(fmt):
        if found.group(3) == "%":
            continue
        fields += 1
        for number in found.group(1, 2):
            if number == "*":
                for arg in args if isinstance(args, tuple) else (args,):
                    _width(arg, what)
            elif number:
                _width(int(number), what)
    return len(fmt) + fields * weight(args) + 2


def _replaced(s: Any, old: Any = "", new: Any = "", count: Any = None, **_: Any) -> int:
    if not isinstance(s, str) or not isinstance(old, str) or not isinstance(new, str):
        return weight(s)
    times = s.count(old) if old else len(s) + 1
    if isinstance(count, int) and count >= 0:
        times = min(times, count)
    return len(s) + times * len(new)


def _joined(value: Any, d: Any = "", *_: Any, **__: Any) -> int:
    if not isinstance(value, (list, tuple)):
        return weight(value)
    return sum(weight(x) for x in value) + len(value) * len(str(d))


def _indented(s: Any, width: Any = 4, *_: Any, **__: Any) -> int:
    text = str(s)
    pad = width if isinstance(width, int) else len(str(width))
    _width(pad, "indent")
    return len(text) + (text.count("\n") + 1) * pad


def _wrapped(s: Any, width: Any = 79, break_long_words: Any = True, wrapstring: Any = None,
             *_: Any, **__: Any) -> int:
    text = str(s)
    lines = 2 * (len(text) // max(1, width if isinstance(width, int) else 1)) + 2
    return len(text) + lines * len(str(wrapstring or "\n"))


def _expanded(s: Any, tabsize: Any = 8) -> int:
    return len(s) + s.count("\t") * (tabsize if isinstance(tabsize, int) else 8)


def _padded(s: Any, width: Any = 80, *_: Any, **__: Any) -> int:
    _width(width, "a padded string")
    return max(weight(s), width if isinstance(width, int) else 0)


def _lipsum(n: Any = 5, html: Any = True, min: Any = 20, max: Any = 100) -> int:  # noqa: A002
    return (n if isinstance(n, int) else 5) * (max if isinstance(max, int) else 100) * 16


def _counted(value: Any, *args: Any, **kwargs: Any) -> int:
    """batch(value, linecount) and slice(value, slices): a count as big as a string."""
    for arg in (*args, *kwargs.values()):
        _width(arg, "a batch or slice")
    return weight(value)


# the size of what a filter, a string method (its string first) or a global returns, found
# from its arguments before it runs: those whose result can be much bigger than their arguments
ESTIMATES: dict[str, Callable[..., int]] = {
    "center": _padded, "indent": _indented, "replace": _replaced, "join": _joined,
    "wordwrap": _wrapped, "batch": _counted, "slice": _counted,
    "format": lambda value="", *args, **kwargs: _printf(str(value), kwargs or args, "format"),
    "str.center": _padded, "str.ljust": _padded, "str.rjust": _padded, "str.zfill": _padded,
    "str.replace": _replaced, "str.join": lambda sep, items: _joined(items, sep),
    "str.expandtabs": _expanded, "generate_lorem_ipsum": _lipsum,
}
REFUSED_ATTRIBUTES = frozenset({"translate", "maketrans"})


class _Range:
    """A ``range`` whose iteration checks the render's deadline."""

    def __init__(self, sandbox: Sandbox, values: range):
        self.sandbox, self.values = sandbox, values

    def __iter__(self) -> Iterator[int]:
        for i, value in enumerate(self.values):
            if not i & 1023:
                self.sandbox.tick()
            yield value

    def __len__(self) -> int:
        return len(self.values)

    def __getitem__(self, index: Any) -> Any:
        return self.values[index]

    def __reversed__(self) -> Iterator[int]:
        return iter(_Range(self.sandbox, self.values[::-1]))

    def __repr__(self) -> str:
        return repr(self.values)


class Sandbox:
    """A Jinja2 sandbox with limits (see the module docstring): ``compile(source)`` and
    ``render(template, context)``."""

    def __init__(self) -> None:
        self.env = _environment_class()(self)
        self.local = threading.local()

    def tick(self) -> None:
        """Raise if the current render has run past its deadline."""
        deadline = getattr(self.local, "deadline", None)
        if deadline is not None and time.monotonic() > deadline:
            raise OutOfTime()

    def check(self, what: str, size: int) -> None:
        self.tick()
        if size > MAX_CHARS:
            raise _too_big(what, size)

    def compile(self, source: str) -> Any:
        if len(source) > MAX_CHARS:
            raise _too_big("the template", len(source))
        return self._bounded(lambda: self.env.from_string(source))

    def render(self, template: Any, context: Mapping[str, Any]) -> str:
        def run() -> str:
            pieces, size = [], 0
            for piece in template.generate(context):
                size += len(piece)
                self.check("the rendered text", size)
                pieces.append(piece)
            return "".join(pieces)

        return self._bounded(run)

    def _bounded(self, work: Callable[[], Any]) -> Any:
        self.local.deadline = time.monotonic() + RENDER_SECONDS
        try:
            return within_time(RENDER_SECONDS, work)
        except OutOfTime:
            raise SandboxError(f"took longer than {RENDER_SECONDS:g} s (a loop too long?)"
                               ) from None
        except Exception as exc:  # a template is the config author's code: all its errors
            raise SandboxError(_described(exc)) from None
        finally:
            self.local.deadline = None

    def call(self, name: str, func: Callable, args: tuple, kwargs: dict, *,
             skip: int = 0, owner: Any = None) -> Any:
        """``func(*args, **kwargs)`` (``name``'s estimate checked first, the result's size
        after); the first ``skip`` arguments are Jinja2's (a context or an environment),
        ``owner`` the string whose method ``func`` is."""
        given = list(args[skip:])
        if given and not isinstance(given[0], (str, list, tuple, dict, set, _Range)) \
                and hasattr(given[0], "__iter__") and name in ESTIMATES:
            given[0] = list(itertools.islice(given[0], MAX_CHARS + 1))  # a generator: once
        self.check(f"the arguments of {name}",
                   sum(weight(x) for x in (*given, *kwargs.values())))
        estimate = ESTIMATES.get(name)
        if estimate is not None:
            mine = () if owner is None else (owner,)
            self.check(f"the result of {name}", estimate(*mine, *given, **kwargs))
        result = func(*args[:skip], *given, **kwargs)
        self.check(f"the result of {name}", weight(result))
        return result

    def range(self, *args: int) -> _Range:
        values = range(*args)
        try:
            size = len(values)
        except OverflowError:
            size = MAX_RANGE + 1
        if size > MAX_RANGE:
            raise SandboxError(f"a range of {size:,} items (at most {MAX_RANGE:,})")
        return _Range(self, values)

    def joined(self, values: tuple) -> str:
        self.check("a string joined with ~", sum(weight(v) for v in values))
        return "".join(str(v) for v in values)

    def concat(self, pieces: Any) -> str:
        out, size = [], 0
        for piece in pieces:
            size += len(piece)
            self.check("a block's text", size)
            out.append(piece)
        return "".join(out)

    def binop(self, operator: str, left: Any, right: Any) -> None:
        """Check ``left operator right`` before it is computed."""
        self.tick()
        ints = isinstance(left, int) and isinstance(right, int)
        if operator == "**" and ints and right > 0 and abs(left) > 1:
            bits = (abs(left).bit_length() - 1) * right
            if bits > MAX_INT_BITS:
                raise SandboxError(f"{left} ** {right} has about {bits:,} bits "
                                   f"(at most {MAX_INT_BITS:,})")
        elif operator == "*" and ints:
            if left.bit_length() + right.bit_length() > MAX_INT_BITS:
                raise SandboxError(f"a product of more than {MAX_INT_BITS:,} bits")
        elif operator == "*":
            for seq, times in ((left, right), (right, left)):
                if isinstance(times, int) and not isinstance(seq, (int, float)):
                    self.check("a repeated string or list", weight(seq) * max(times, 0))
        elif operator == "+" and not ints:
            self.check("a sum of strings or lists", weight(left) + weight(right))
        elif operator == "%" and isinstance(left, str):
            self.check("a formatted string", _printf(left, right, "%"))

    def formatted(self, fmt: str, wrapped: Callable[..., str]) -> Callable[..., str]:
        """``fmt.format`` (Jinja2's sandboxed one, ``wrapped``) with its size checked first;
        a width inside a width (``{:{}}``) is refused."""

        def run(*args: Any, **kwargs: Any) -> str:
            fields = 0
            for _, field, spec, _ in string.Formatter().parse(fmt):
                if field is None:
                    continue
                fields += 1
                if "{" in (spec or ""):
                    raise SandboxError("a format field inside a format spec")
                for number in _NUMBER.findall(spec or ""):
                    _width(int(number), "str.format")
            self.check("a formatted string", len(fmt) + fields * weight((args, kwargs)))
            return wrapped(*args, **kwargs)

        return run


def _described(exc: BaseException) -> str:
    """``line N: reason`` of an error raised by Jinja2 or by a template."""
    line = getattr(exc, "lineno", None)
    if line is None:
        tb = exc.__traceback__
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == "<template>":
                line = tb.tb_lineno
            tb = tb.tb_next
    reason = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    if isinstance(exc, (MemoryError, RecursionError, ArithmeticError)):
        reason = f"{type(exc).__name__}: {reason}"
    return f"line {line}: {reason}" if line else reason


@functools.lru_cache(maxsize=1)
def _environment_class() -> type:
    """The sandboxed environment calling back :class:`Sandbox` (made on first use: jinja2 is
    imported only by configs with model judges)."""
    import jinja2
    from jinja2.compiler import CodeGenerator, optimizeconst
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    class Generator(CodeGenerator):
        @optimizeconst
        def visit_Concat(self, node: Any, frame: Any) -> None:  # ``a ~ b``
            self.write("environment.sandbox.joined((")
            for arg in node.nodes:
                self.visit(arg, frame)
                self.write(", ")
            self.write("))")

    class Environment(ImmutableSandboxedEnvironment):
        code_generator_class = Generator
        intercepted_binops = frozenset({"*", "**", "+", "%"})

        def __init__(self, sandbox: Sandbox):
            super().__init__(autoescape=False, undefined=jinja2.StrictUndefined,
                             keep_trailing_newline=True, finalize=self.printed)
            self.sandbox = sandbox
            self.concat = sandbox.concat  # type: ignore[method-assign]
            self.globals["range"] = sandbox.range
            self.filters = {name: self.bounded(name, f) for name, f in self.filters.items()}

        def bounded(self, name: str, func: Callable) -> Callable:
            skip = 1 if getattr(func, "jinja_pass_arg", None) is not None else 0

            @functools.wraps(func)
            def run(*args: Any, **kwargs: Any) -> Any:
                return self.sandbox.call(name, func, args, kwargs, skip=skip)

            return run

        def printed(self, value: Any) -> Any:
            self.sandbox.check("a printed value", weight(value))
            return value

        def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
            self.sandbox.binop(operator, left, right)
            return super().call_binop(context, operator, left, right)

        def call(__self, __context: Any, __obj: Any, *args: Any,  # noqa: N805
                 **kwargs: Any) -> Any:
            owner = getattr(__obj, "__self__", None)
            name = getattr(__obj, "__name__", type(__obj).__name__)
            mine = owner if isinstance(owner, str) else None
            return __self.sandbox.call(
                name if mine is None else f"str.{name}",
                lambda *a, **k: ImmutableSandboxedEnvironment.call(
                    __self, __context, __obj, *a, **k), args, kwargs, owner=mine)

        def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
            return attr not in REFUSED_ATTRIBUTES and super().is_safe_attribute(obj, attr,
                                                                               value)

        def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
            wrapped = super().wrap_str_format(value)
            return None if wrapped is None else self.sandbox.formatted(value.__self__, wrapped)

    return Environment
