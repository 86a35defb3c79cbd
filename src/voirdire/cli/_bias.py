"""The `voirdire bias` command (registered on import): position, length and self-preference biases
of LLM judges in a file of pairwise verdicts (A / tie / B)."""

from __future__ import annotations

from pathlib import Path

import typer

from .._option_specs import OutputFormat
from ._app import (
    PairwiseReaderOptions, app, console, emit_json, fail, handle_errors, option, pairwise_reader_options,
)


@app.command("bias")
@handle_errors
@pairwise_reader_options
def bias_command(
    file: Path = typer.Argument(..., readable=False, help="Long table of verdicts: one row per (pair, rater, presented order); "
                                          "optional columns model_a, model_b (systems) and len_a, len_b (lengths)."),
    judge: list[str] = option("bias.judge"),
    family: list[str] = option("bias.family"),
    fdr: float = option("bias.fdr"),
    fmt: OutputFormat = option("bias.fmt"),
    *,
    preader: PairwiseReaderOptions,
) -> None:
    """Judge biases: position (flip rate under swap, preference for the response shown first, also
    when the humans tie), length beyond the humans' verdicts, self-preference against humans on the
    same pairs; each with a 95% interval, a Benjamini-Hochberg flag and the minimum detectable effect."""
    from ..report.console.pairwise import bias_json, render_bias
    from ..workflows import summarise_pairwise

    bad = [spec for spec in family or [] if "=" not in spec]
    if bad:
        fail(f"--family expects NAME=FAMILY, e.g. my-judge=openai. Got {bad[0]!r}.")
    fams = {k.strip(): v.strip() for k, v in (spec.split("=", 1) for spec in family or [])}
    table, cov = preader.read(file, judges=judge, covariates=True)
    if not table.judges:
        fail("no judge in the file: name the judges with --judge (or a --role column).")
    res = summarise_pairwise(table, covariates=cov, families=fams, fdr=fdr, model=False)
    if res.bias is None:
        fail(res.bias_error or "no bias report.")
    if fmt == "json":
        emit_json(bias_json(res.bias, str(file)))
    elif fmt == "csv":
        from ..report.console.terminal import echo_csv

        echo_csv(res.bias.effects)
    else:
        render_bias(console, res.bias)
