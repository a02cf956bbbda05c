"""The contract of a page's context, for the report (``contract.py``) and the assessment
server (:mod:`irbench.assess.contexts`): a dataclass field with its help text
(:func:`documented`), the fields without one (:func:`undocumented`), and the names a Jinja2
template reads that its context does not have (:func:`names_outside`)."""

from __future__ import annotations

import types
import typing
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import MISSING, field, fields, is_dataclass
from typing import Any

from jinja2 import Environment, nodes


def documented(text: str, default: Any = MISSING):
    """A dataclass field whose ``metadata["help"]`` says what it holds."""
    return field(metadata={"help": text}, default=default)


def undocumented(context_types: Iterable[type]) -> list[str]:
    """``Type.field`` of every field of ``context_types`` without help text."""
    return [f"{t.__name__}.{f.name}" for t in context_types for f in fields(t)
            if not f.metadata.get("help")]


_ANY: Any = object()  # a value whose type the check does not follow
_SCOPED = {"loop", "caller", "varargs", "kwargs"}  # what Jinja2 itself names in a block


def names_outside(env: Environment, template: str, context: type) -> list[str]:
    """What ``template`` (and what it includes) reads that is not in ``context``, a dataclass
    rendered as its fields: ``'template:line: name'`` for a name that is no field (nor a
    variable the template sets, nor a Jinja2 global), ``'template:line: Type.attr'`` for an
    attribute that is no field of a dataclass field's type. Attributes are followed through
    dataclass fields, loops over ``tuple[T, ...]``/``list[T]`` and ``X | None``; what a
    filter or call returns is not followed."""
    problems: list[str] = []
    hints = typing.get_type_hints(context)
    _Reader(env, problems).template(template, {f.name: hints[f.name] for f in fields(context)})
    return problems


class _Reader:
    def __init__(self, env: Environment, problems: list[str]):
        self.env, self.problems, self.name = env, problems, ""

    def template(self, name: str, scope: dict[str, Any]) -> None:
        source = self.env.loader.get_source(self.env, name)[0] if self.env.loader else ""
        outer, self.name = self.name, name
        self.block(self.env.parse(source).body, scope)
        self.name = outer

    def block(self, body: Sequence[nodes.Node], scope: dict[str, Any]) -> None:
        for node in body:
            self.node(node, scope)

    def node(self, node: nodes.Node, scope: dict[str, Any]) -> None:
        if isinstance(node, nodes.Expr):
            self.expr(node, scope)
        elif isinstance(node, nodes.For):
            inner = dict(scope)
            self.bind(node.target, _element(self.expr(node.iter, scope)), inner)
            if node.test is not None:
                self.expr(node.test, inner)
            self.block(node.body, inner)
            self.block(node.else_, scope)
        elif isinstance(node, nodes.Assign):
            self.bind(node.target, self.expr(node.node, scope), scope)
        elif isinstance(node, nodes.With):
            inner = dict(scope)
            for target, value in zip(node.targets, node.values):
                self.bind(target, self.expr(value, scope), inner)
            self.block(node.body, inner)
        elif isinstance(node, nodes.Macro):
            scope[node.name] = _ANY
            inner = dict(scope) | {a.name: _ANY for a in node.args}
            self.block(node.body, inner)
        elif isinstance(node, nodes.Include) and isinstance(node.template, nodes.Const):
            self.template(node.template.value, scope)
        else:
            for child in node.iter_child_nodes():
                self.node(child, scope)

    def bind(self, target: nodes.Node, kind: Any, scope: dict[str, Any]) -> None:
        if isinstance(target, nodes.Name):
            scope[target.name] = kind
        elif isinstance(target, nodes.Tuple):
            parts = typing.get_args(_present(kind)) if typing.get_origin(
                _present(kind)) is tuple else ()
            if len(parts) != len(target.items) or Ellipsis in parts:
                parts = (_ANY,) * len(target.items)
            for item, part in zip(target.items, parts):
                self.bind(item, part, scope)

    def expr(self, node: nodes.Node, scope: dict[str, Any]) -> Any:
        if isinstance(node, nodes.Name):
            if (node.ctx == "load" and node.name not in scope
                    and node.name not in self.env.globals and node.name not in _SCOPED):
                self.problems.append(f"{self.name}:{node.lineno}: {node.name}")
            return scope.get(node.name, _ANY)
        if isinstance(node, nodes.Getattr):
            return self.attribute(self.expr(node.node, scope), node.attr, node.lineno)
        if isinstance(node, nodes.Getitem):
            owner = self.expr(node.node, scope)
            self.expr(node.arg, scope)
            if isinstance(node.arg, nodes.Const) and isinstance(node.arg.value, str):
                return self.attribute(owner, node.arg.value, node.lineno)
            return _element(owner)
        for child in node.iter_child_nodes():
            self.expr(child, scope) if isinstance(child, nodes.Expr) else self.node(child, scope)
        return _ANY

    def attribute(self, owner: Any, name: str, line: int) -> Any:
        owner = _present(owner)
        if not (isinstance(owner, type) and is_dataclass(owner)):
            return _ANY
        known = typing.get_type_hints(owner)
        if name in known:
            return known[name]
        if not hasattr(owner, name):  # a method or property is not data, but it is there
            self.problems.append(f"{self.name}:{line}: {owner.__name__}.{name}")
        return _ANY


def _present(kind: Any) -> Any:
    """``X`` of ``X | None`` (a template tests for None before reading it)."""
    if typing.get_origin(kind) in (typing.Union, types.UnionType):
        rest = [a for a in typing.get_args(kind) if a is not type(None)]
        return rest[0] if len(rest) == 1 else _ANY
    return kind


def _element(kind: Any) -> Any:
    """The type of what a loop over ``kind`` gives (a mapping's keys)."""
    kind = _present(kind)
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin is tuple:
        return args[0] if len(args) == 2 and args[1] is Ellipsis else _ANY
    if isinstance(origin, type) and issubclass(origin, Mapping | Sequence) and args:
        return args[0]
    if isinstance(origin, type) and issubclass(origin, (set, frozenset)) and args:
        return args[0]
    return _ANY
