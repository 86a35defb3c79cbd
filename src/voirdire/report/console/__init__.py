"""Terminal renderers, one module per command family (``estimate``, ``plan``, ``pairwise``, ...).

Each module turns one workflow result into Rich tables and lines on a console; the CLI parses,
calls one workflow and hands its result to the renderer here. Modules import numpy/pandas only
inside functions, so that ``voirdire --help`` stays cheap. No statistics are computed here.
:mod:`~voirdire.report.console.terminal` holds the consoles they print on (names from files shown
literally, never as markup or escape sequences), the progress bar and the one-line error.
"""
