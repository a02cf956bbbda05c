"""``irbench measures``: every measure family and its parameters."""

from __future__ import annotations

from ..measures import REGISTRY


def add_parsers(sub) -> None:
    _measures_parser(sub)


def _measures_parser(sub) -> None:
    p = sub.add_parser("measures", help="list every measure with its parameters",
                       description="List every measure family, its parameters and a description.")
    p.add_argument("--markdown", action="store_true",
                   help="print the measures page (docs/measures.md) instead")
    p.set_defaults(handler=_cmd_measures)


def _cmd_measures(args) -> int:
    if args.markdown:
        from ..measures.catalogue import markdown

        print(markdown(), end="")
        return 0
    for name in sorted(REGISTRY, key=str.lower):
        family = REGISTRY[name]
        params = ", ".join(
            f"{p.name}={p.default!r}" if p.default not in (None, "") else p.name
            for p in family.params
        )
        head = f"{name}({params})" if params else name
        print(f"{head:<34} {family.description}")
    from ..measures.irmeasures import describe

    print()
    print("\n".join(describe()))
    return 0
