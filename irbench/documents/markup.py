"""Removing SGML/HTML markup from a document's content (what :mod:`.formats` describes), in time
linear in the content's length whatever it holds.

A regular expression such as ``<script\\b.*?</script\\s*>`` or ``<title>(.*?)</title>`` scans
to the end of the content for every opening tag that is never closed, so that a document of a
few megabytes of ``<script>`` (or ``<title>``, ``<!--``, ``<a`` without ``>``) takes hours.
Here every closing thing (``>``, ``-->``, ``</script>``, ``</title>``) is looked for with
:class:`NextMatch`, which remembers where it found the next one (or that there is none), so that
each stretch of the content is searched once for each kind of closing thing, however many
openings come before it. The runs of tags of a content with few unclosed openings (every
well-formed one) are replaced by one expression (:data:`MARKUP`, at C speed), which gives the
same as the scan (:class:`Markup`) there in linear time too.
"""

from __future__ import annotations

import re

# inline HTML elements, whose tags go without a space ("<b>bold</b>." stays "bold.")
INLINE_NAMES = (b"a", b"abbr", b"b", b"big", b"cite", b"code", b"em", b"font", b"i", b"mark",
                b"q", b"s", b"small", b"span", b"strike", b"strong", b"sub", b"sup", b"tt",
                b"u")
TITLE_NAMES = (b"headline", b"title", b"head")  # the first closed one gives the title
FEW_UNCLOSED = 8  # unclosed openings up to which MARKUP is used (each costs it one scan)


def any_case(*names: bytes) -> bytes:
    """An expression of any of ``names`` in any case (without re.IGNORECASE, which would try
    the expression at every byte)."""
    return b"(?:" + b"|".join(b"".join(b"[%c%c]" % (c, c ^ 0x20) for c in name.lower())
                              for name in names) + b")"


SCRIPT = any_case(b"script", b"style")
INLINE_TAG = re.compile(rb"<(?=/?[AaBbCcEeFfIiMmQqSsTtUu])/?" + any_case(*INLINE_NAMES)
                        + rb"(?=[\s>/])[^>]*>")
ONE_TAG = rb"<(?:" + SCRIPT + rb"\b.*?</" + SCRIPT + rb"\s*>|!--.*?-->|/?[A-Za-z!?][^>]*>)"
MARKUP = re.compile(ONE_TAG + rb"(?:[ \t]*" + ONE_TAG + rb")*[ \t]*", re.DOTALL)  # tags in a row
# where a tag may start, and its kind: group 1 a <script> or <style> element, 2 a comment, 3
# any other tag (a <script> or a comment not closed is one of those if a '>' follows)
TAG_START = re.compile(rb"<(?:(" + SCRIPT + rb")(?![0-9A-Za-z_])|(!--)|(/?[A-Za-z!?]))")
ELEMENT, COMMENT, OTHER = 1, 2, 3
ENDS = {ELEMENT: re.compile(rb"</" + SCRIPT + rb"\s*>"), COMMENT: re.compile(rb"-->"),
        OTHER: re.compile(rb">")}
BLANKS = re.compile(rb"[ \t]*")
CLOSING_REST = re.compile(rb"\s*>")
OPENING: dict[tuple[bytes, ...], re.Pattern[bytes]] = {  # group 1 the name
    names: re.compile(rb"<(" + any_case(*names) + rb")[\s>]") for names in (TITLE_NAMES,
                                                                             (b"title",))}
CLOSING = {name: re.compile(rb"</" + any_case(name) + rb"\s*>") for name in TITLE_NAMES}


class NextMatch:
    """The first match of ``pattern`` in ``data`` at or after a position. Asked for positions
    in increasing order (as a scan from left to right does), it searches each stretch of
    ``data`` once: the match found from one position is the first from any later position up
    to it, and none from one position means none from any later one."""

    __slots__ = ("data", "pattern", "since", "found")

    def __init__(self, data: bytes, pattern: re.Pattern[bytes]):
        self.data, self.pattern = data, pattern
        self.since = len(data) + 1  # nothing searched yet
        self.found: re.Match[bytes] | None = None

    def __call__(self, at: int) -> re.Match[bytes] | None:
        if at >= self.since and (self.found is None or self.found.start() >= at):
            return self.found
        self.since, self.found = at, self.pattern.search(self.data, at)
        return self.found


def drop_inline_tags(content: bytes) -> bytes:
    """``content`` without the tags of inline elements (:data:`INLINE_NAMES`). A tag ends at
    the next ``>``, so none starts after the last one: the expression is run up to it only,
    where each of its scans ends at a ``>`` and the next search starts there."""
    last = content.rfind(b">") + 1
    if not last:
        return content
    return INLINE_TAG.sub(b"", content[:last]) + content[last:]


class Markup:
    """The runs of tags of one content: :meth:`replaced` is ``content`` with each run of tags
    (with the spaces and tabs between them and after them) replaced by one space, what
    ``re.sub(ONE_TAG + (?:[ \\t]* ONE_TAG)* [ \\t]*, " ")`` gives, where ONE_TAG is a
    ``<script>`` or ``<style>`` element up to the first ``</script>`` or ``</style>`` after
    it, a comment, or any other tag (``<``, an optional ``/``, a letter, ``!`` or ``?``,
    then up to the next ``>``)."""

    def __init__(self, content: bytes):
        self.data = content
        self.ends: dict[int, NextMatch] = {}

    def tag_end(self, start: re.Match[bytes]) -> int:
        """Where the tag whose start :data:`TAG_START` found ends, -1 if it is none."""
        kind = start.lastindex or OTHER
        end = self.end(kind, start.end())
        if end is None and kind != OTHER:  # not closed: perhaps a tag all the same
            end = self.end(OTHER, start.end())
        return -1 if end is None else end.end()

    def end(self, kind: int, at: int) -> re.Match[bytes] | None:
        found = self.ends.get(kind)
        if found is None:
            found = self.ends[kind] = NextMatch(self.data, ENDS[kind])
        return found(at)

    def run_end(self, start: re.Match[bytes]) -> int:
        """Where the run of tags starting with ``start`` ends (with the blanks after it), -1
        if no tag starts there."""
        end = self.tag_end(start)
        if end < 0:
            return -1
        data = self.data
        while True:
            after = BLANKS.match(data, end).end()  # type: ignore[union-attr]
            following = TAG_START.match(data, after)
            if following is None or (next_end := self.tag_end(following)) < 0:
                return after
            end = next_end

    def replaced(self, by: bytes = b" ") -> bytes:
        data, parts, kept, at = self.data, [], 0, 0
        while (start := TAG_START.search(data, at)) is not None:
            end = self.run_end(start)
            if end < 0:
                at = start.start() + 1
                continue
            parts += [data[kept:start.start()], by]
            kept = at = end
        parts.append(data[kept:])
        return b"".join(parts)


def strip_tags(content: bytes) -> bytes:
    """``content`` with each run of tags replaced by one space (see :class:`Markup`): by
    :data:`MARKUP` when at most :data:`FEW_UNCLOSED` openings are not closed (each costs one
    scan to the end), else by :class:`Markup`, which gives the same, linear in any case."""
    if b"<" not in content:
        return content
    if unclosed_openings(content) <= FEW_UNCLOSED:
        return MARKUP.sub(b" ", content)
    return Markup(content).replaced()


def unclosed_openings(content: bytes) -> int:
    """How many of the places :data:`MARKUP` would try have nothing after them to close them,
    or more: tags after the last ``>``, comments after the last ``-->``, ``<script>`` and
    ``<style>`` after the last ``</script>`` or ``</style>``."""
    count = content.count(b"<", content.rfind(b">") + 1)
    comment_end = content.rfind(b"-->")
    count += content.count(b"<!--", max(comment_end - 3, 0) if comment_end >= 0 else 0)
    if count > FEW_UNCLOSED or (b"<s" not in content and b"<S" not in content):
        return count
    low = content.lower()
    since = max(last_closing(low, b"</script"), last_closing(low, b"</style")) + 1
    return count + low.count(b"<script", since) + low.count(b"<style", since)


def last_closing(low: bytes, start: bytes) -> int:
    """Where the last closing tag (``start``, spaces, ``>``) of ``low`` starts, -1 if none."""
    end = len(low)
    while (at := low.rfind(start, 0, end)) >= 0:
        if CLOSING_REST.match(low, at + len(start)):
            return at
        end = at
    return -1


def first_element(content: bytes, names: tuple[bytes, ...]) -> tuple[bytes, bytes] | None:
    """The name (lower case) and the content of the first element named one of ``names`` that
    is closed, None if none is: what ``<(names)(?:\\s[^>]*)?>(.*?)</\\1\\s*>`` (in any case)
    finds. An opening tag is ``<``, the name, a space or ``>``, and ends at the next ``>``;
    its content runs to the first closing tag of its name after it, and a name without one
    after an opening tag has none after a later one either."""
    opening = OPENING[names]
    gt: NextMatch | None = None
    closings: dict[bytes, NextMatch] = {}
    at = 0
    while (start := opening.search(content, at)) is not None:
        at = start.end()
        gt = gt or NextMatch(content, ENDS[OTHER])
        tag = gt(start.end() - 1)  # the space or '>' after the name
        if tag is None:
            return None  # no '>' after: no tag opens from here on
        name = start.group(1).lower()
        closing = closings.get(name) or closings.setdefault(name, NextMatch(content,
                                                                             CLOSING[name]))
        end = closing(tag.end())
        if end is not None:
            return name, content[tag.end():end.start()]
    return None
