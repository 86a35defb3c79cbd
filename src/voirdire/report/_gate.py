"""CI summaries of a validation (private): Markdown a CI job can post, and JUnit XML (one test
case per judge) a CI system can display. Both read :class:`voirdire.workflows.ValidationResult`.

Names come from the annotation file: every text passes :func:`voirdire._safe.escape_control`
first (a control character, a lone surrogate or a bidirectional override is shown as ``\\x1b``),
so the JUnit file is well-formed XML 1.0 and the Markdown one line per row, for any name."""

from __future__ import annotations

from typing import Any
from xml.sax.saxutils import escape as xml_escape
from xml.sax.saxutils import quoteattr

from .._defaults import GATES
from .._safe import escape_control
from ._format import fmt_ci, fmt_num

__all__ = ["render_markdown", "render_junit"]

_FAILS: dict[str | None, tuple[str, ...]] = {None: ()}
_FAILS.update(GATES)  # the one gate rule (voirdire._defaults)
_ICON = {"accept": "accept", "reject": "**reject**", "inconclusive": "*inconclusive*"}


def _md(text: Any) -> str:
    """A cell of a Markdown table: pipes, backticks and markup characters neutralised, one line."""
    s = " ".join(escape_control(text).split())
    for ch in ("\\", "|", "`", "*", "_", "<", ">", "[", "]"):
        s = s.replace(ch, "\\" + ch)
    return s


def _text(text: Any) -> str:
    """Character data of an XML 1.0 element: control characters shown escaped, ``&<>`` as entities."""
    return xml_escape(escape_control(text))


def _attr(text: Any) -> str:
    """A quoted XML 1.0 attribute value (see :func:`_text`)."""
    return quoteattr(escape_control(text))


def render_markdown(res: Any, *, fail_on: str | None = None) -> str:
    """A Markdown summary: one row per judge (verdict, reasons, both tests), the reference, the gate."""
    lines = [f"### voirdire validate: {_md(res.source)}", ""]
    lines += ["| judge | verdict | reasons | leave-one-out | alt-test |", "|---|---|---|---|---|"]
    for j in res.judges:
        v = j.verdict
        loo = j.leave_one_out
        alt = j.alt_test
        loo_s = "—" if loo is None else (f"{loo.decision}, ω = {fmt_num(loo.omega)}, stability "
                                          f"{fmt_num(loo.decision_stability, 2)}")
        alt_s = "—" if alt is None else (f"{alt.decision}, ω = {fmt_num(alt.omega)}, ρ = {fmt_num(alt.rho)}, "
                                          f"stability {fmt_num(alt.decision_stability, 2)}")
        lines.append(f"| {_md(j.judge)} | {_ICON[v.decision]} | {_md(', '.join(v.codes))} | {_md(loo_s)} | "
                     f"{_md(alt_s)} |")
    lines.append("")
    ref = res.reference
    if ref is not None:
        lines.append(f"Reference: humans' own Krippendorff alpha ({ref.level}) = {fmt_num(ref.estimate)} "
                     f"{fmt_ci(ref.ci.low, ref.ci.high)} over {ref.n_items} items ({ref.status}).")
        lines.append("")
    for j in res.judges:
        lines.append(f"- {_md(j.verdict.sentence)}")
    lines.append("")
    o = res.options
    lines.append(f"Seed {o['seed']}, {o['n_resamples']} bootstrap resamples, stability threshold "
                 f"{fmt_num(o['stability_threshold'], 2)}, reference floor {fmt_num(o['reference_floor'], 2)}.")
    if fail_on is not None:
        failing = [j.judge for j in res.judges if j.verdict.decision in _FAILS[fail_on]]
        lines.append("")
        lines.append(f"**Gate (--fail-on {fail_on}): {'failed' if failing else 'passed'}**"
                     + (": " + ", ".join(_md(f) for f in failing) if failing else "."))
    return "\n".join(lines) + "\n"


def render_junit(res: Any, *, fail_on: str | None = None) -> str:
    """JUnit XML: one test case per judge; a case fails when its verdict fails the gate
    (``fail_on``; without it, when the verdict is ``reject``)."""
    fails = _FAILS[fail_on] if fail_on is not None else ("reject",)
    cases = []
    n_fail = 0
    for j in res.judges:
        v = j.verdict
        name = _attr(j.judge)
        body = ""
        if v.decision in fails:
            n_fail += 1
            body = (f"<failure message={_attr(v.decision + ': ' + ', '.join(v.codes))} type={_attr(v.decision)}>"
                    f"{_text(v.sentence)}</failure>")
        body += f"<system-out>{_text(v.sentence)}</system-out>"
        cases.append(f'  <testcase classname="voirdire.validate" name={name}>{body}</testcase>')
    suite = (f'<testsuite name={_attr("voirdire validate " + str(res.source))} tests="{len(cases)}" '
             f'failures="{n_fail}" errors="0">')
    return '<?xml version="1.0" encoding="UTF-8"?>\n<testsuites>\n' + suite + "\n" + "\n".join(cases) \
        + "\n</testsuite>\n</testsuites>\n"
