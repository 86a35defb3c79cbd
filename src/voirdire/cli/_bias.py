"""The `voirdire bias` command (registered on import): position, length and self-preference biases
of LLM judges in a file of pairwise verdicts (A / tie / B)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from ._app import OutputFormat, PairwiseReaderOptions, app, console, emit_json, fail, handle_errors, pairwise_reader_options


def _num(x: Any, digits: int = 3) -> str:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return str(x)
    return "-" if not math.isfinite(v) else f"{v:.{digits}f}"


@app.command("bias")
@handle_errors
@pairwise_reader_options
def bias_command(
    file: Path = typer.Argument(..., readable=False, help="Long table of verdicts: one row per (pair, rater, presented order); "
                                          "optional columns model_a, model_b (systems) and len_a, len_b (lengths)."),
    judge: list[str] = typer.Option(None, "--judge", "-j", help="A rater that is an LLM judge (repeatable)."),
    family: list[str] = typer.Option(None, "--family", help="NAME=FAMILY for a judge or model whose family the "
                                                             "built-in rule does not know (repeatable)."),
    fdr: float = typer.Option(0.05, "--fdr", help="False discovery rate of the flags (Benjamini-Hochberg)."),
    fmt: OutputFormat = typer.Option(OutputFormat.table, "--format", "-f", help="table, json or csv."),
    *,
    preader: PairwiseReaderOptions,
) -> None:
    """Judge biases: position (flip rate under swap, preference for the response shown first, also
    when the humans tie), length beyond the humans' verdicts, self-preference against humans on the
    same pairs; each with a 95% interval, a Benjamini-Hochberg flag and the minimum detectable effect."""
    from .._safe import escape_control
    from ._console import echo_csv
    from ..pairwise import bias_report

    if not 0 < fdr < 1:
        fail(f"--fdr must be in (0, 1). Got {fdr}.")
    preader.verdict_spellings()  # a malformed --verdict-map fails before any reading
    fams: dict[str, str] = {}
    for spec in family or []:
        if "=" not in spec:
            fail(f"--family expects NAME=FAMILY, e.g. my-judge=openai. Got {spec!r}.")
        k, v = spec.split("=", 1)
        fams[k.strip()] = v.strip()
    table, cov = preader.read(file, judges=judge, covariates=True)
    if not table.judges:
        fail("no judge in the file: name the judges with --judge (or a --role column).")
    rep = bias_report(table, covariates=cov, families=fams, fdr=fdr)
    eff = rep.effects
    if fmt == OutputFormat.json:
        emit_json({"file": str(file), "n_pairs": rep.n_pairs, "fdr": rep.fdr, "level": rep.level,
                   "power": rep.power, "effects": eff.to_dict("records")})
        return
    if fmt == OutputFormat.csv:
        echo_csv(eff)
        return
    t = Table(title=f"Judge biases ({100 * rep.level:.0f}% intervals; flagged: Benjamini-Hochberg at "
                    f"{rep.fdr:g})", title_justify="left")
    for c in ("judge", "effect", "estimate", "interval", "q", "flag", "MDE", "pairs", "detail"):
        t.add_column(c, justify="left" if c in ("judge", "effect", "detail") else "right")
    for rec in eff.to_dict("records"):
        r: dict[Any, Any] = rec
        t.add_row(escape_control(r["judge"]), str(r["effect"]), _num(r["estimate"]),
                  "-" if not math.isfinite(float(r["low"])) else f"[{_num(r['low'])}, {_num(r['high'])}]",
                  _num(r["q_value"]), "yes" if r["flagged"] else "", _num(r["mde"]), str(r["n_pairs"]),
                  escape_control(r["detail"]))
    console.print(t)
    console.print("estimate units: position = share of first-shown wins minus second-shown wins; length = "
                  "log-odds of A per doubling of len_a/len_b; self-preference = judge minus humans win rate "
                  "of the own-family response. MDE: smallest effect detected with 80% power.", highlight=False)
