"""The one registry of input format names (private): the values of ``--format-in`` and of
``read_annotations(format=...)``, with what each reads. ``voirdire.data.FORMATS`` is this dict; the CLI's
``--format-in`` help reads it. No imports, so a command's ``--help`` stays cheap."""

from __future__ import annotations

__all__ = ["INPUT_FORMATS", "format_in_help"]

#: ``--format-in`` values and what each reads.
INPUT_FORMATS: dict[str, str] = {
    "auto": "guess from the extension and the content",
    "long": "a long table (one row per item, rater and label), delimiter sniffed",
    "wide": "a wide table (one row per item, one column per rater)",
    "csv": "comma-separated long or wide table",
    "tsv": "tab-separated long or wide table",
    "jsonl": "JSON lines, one record per label",
    "json": "a JSON list of records, one per label",
    "parquet": "Parquet long table (pip install 'voirdire[parquet]')",
    "excel": "Excel .xlsx, first sheet (pip install 'voirdire[excel]')",
    "label-studio": "Label Studio JSON export",
    "label-studio-min": "Label Studio JSON-MIN export",
    "argilla": "Argilla v2 records export (nested, or flattened as to_list(flatten=True)/to_hub write it)",
    "inspect": "Inspect AI eval log (pip install 'voirdire[inspect]')",
    "promptfoo": "promptfoo results JSON",
    "lm-eval": "lm-evaluation-harness samples JSONL",
    "alttest": "nested {rater: {item: label}} JSON (AltTest data sets)",
}


def format_in_help() -> str:
    """The help of ``--format-in``: every registered format name."""
    rest = [f for f in INPUT_FORMATS if f != "auto"]
    return (f"What FILE holds: auto (guess from extension and content), {', '.join(rest)}. "
            "FILE '-' reads standard input.")
