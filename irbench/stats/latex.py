"""LaTeX tables of a :class:`Comparison` in the style of overview papers.

booktabs rules; one row per system (labelled a, b, c, ...), one column per measure; the best
mean of each column in bold; a superscript after each mean lists the labels of the systems it
significantly beats (after the comparison's correction), as ranx prints them, with
``\\hphantom`` padding so the columns stay aligned. System and measure names are escaped.
Needs ``\\usepackage{booktabs}`` in the preamble.
"""

from __future__ import annotations

from string import ascii_lowercase

import numpy as np

from .multiple import Comparison
from .tables import beaten

_ESCAPES = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
    "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
}
TEST_NAMES = {
    "t": "a paired t-test", "wilcoxon": "a Wilcoxon signed-rank test", "sign": "a sign test",
    "randomization": "a paired randomisation test", "bootstrap": "a paired bootstrap test",
    "tukey-hsd": "Tukey's HSD test", "randomized-tukey-hsd": "a randomised Tukey HSD test",
}
CORRECTION_NAMES = {"none": "no correction", "bonferroni": "Bonferroni correction",
                    "holm": "Holm correction", "bh": "Benjamini-Hochberg correction",
                    "by": "Benjamini-Yekutieli correction"}


def escape_latex(text: str) -> str:
    """``text`` with LaTeX's special characters escaped (``\\ & % $ # _ { } ~ ^``) and
    control characters (a newline would end a ``%`` comment) turned into spaces."""
    return "".join(_ESCAPES.get(c, " " if ord(c) < 32 or 127 <= ord(c) < 160 else c)
                   for c in str(text))


def labels(count: int) -> list[str]:
    """a, b, ..., z, aa, ab, ... (as many as asked)."""
    out: list[str] = []
    width = 1
    while len(out) < count:
        for k in range(len(ascii_lowercase) ** width):
            digits = []
            for _ in range(width):
                k, r = divmod(k, len(ascii_lowercase))
                digits.append(ascii_lowercase[r])
            out.append("".join(reversed(digits)))
            if len(out) == count:
                break
        width += 1
    return out


def describe(comparison: Comparison) -> str:
    """One sentence on how significance was decided, for a caption."""
    test = TEST_NAMES[comparison.test]
    first = comparison.pairs[0].result if comparison.pairs else None
    if first is not None and first.exact:
        test += f" (exact: all {first.samples:,} resamples)"
    elif comparison.test in ("randomization", "bootstrap", "randomized-tukey-hsd"):
        test += f" ({comparison.samples:,} samples, seed {comparison.seed})"
    if comparison.test in ("tukey-hsd", "randomized-tukey-hsd"):
        how = test
        if comparison.family == "all" and len(comparison.measures) > 1:
            how += f", Bonferroni over the {len(comparison.measures)} measures"
    else:
        how = f"{test} with {CORRECTION_NAMES[comparison.correction]}"
        if comparison.correction != "none" and len(comparison.measures) > 1:
            how += (" over all measures" if comparison.family == "all" else " per measure")
    return f"{how}, $\\alpha = {comparison.alpha:g}$"


def latex_table(comparison: Comparison, caption: str | None = None,
                label: str = "tab:results", digits: int = 4) -> str:
    """A booktabs ``table`` of the means of every system on every measure of ``comparison``;
    rows in the order of the first measure's means, best first."""
    order = np.argsort(-comparison.means[0], kind="stable")
    systems = [comparison.systems[i] for i in order]
    letter = dict(zip(systems, labels(len(systems))))
    wins = {m: beaten(comparison, m) for m in comparison.measures}
    rounded = np.round(comparison.means, digits)
    best = rounded.max(axis=1)
    if caption is None:
        caption = ("Mean effectiveness; the best of each column in bold. A superscript lists "
                   "the systems a system is significantly better than, by " + describe(comparison)
                   + ".")
        if comparison.baseline is not None:
            caption += f" Every system is compared with {escape_latex(comparison.baseline)} only."
    lines = [
        r"\begin{table}[t]",
        r"\centering",
        rf"\caption{{{caption}}}",
        rf"\label{{{label}}}",
        r"\begin{tabular}{cl" + "c" * len(comparison.measures) + "}",
        r"\toprule",
        r"\# & System & " + " & ".join(escape_latex(m) for m in comparison.measures) + r" \\",
        r"\midrule",
    ]
    for s, i in zip(systems, order):
        cells = [letter[s], escape_latex(s)]
        for k, m in enumerate(comparison.measures):
            value = f"{comparison.means[k, i]:.{digits}f}"
            if rounded[k, i] == best[k]:
                value = rf"\textbf{{{value}}}"
            # past 26 systems labels have two letters: commas keep "a,ab" from reading "aab"
            sep = "," if len(systems) > 26 else ""
            sup = sep.join(letter[x] for x in sorted(wins[m][s], key=systems.index))
            pad = "".join(letter[x] for x in systems if x != s and x not in wins[m][s])
            cell = value + (f"$^{{{sup}}}$" if sup else "")
            if pad and len(systems) <= 26:
                cell += rf"\hphantom{{$^{{{pad}}}$}}"
            cells.append(cell)
        lines.append(" & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines) + "\n"
