"""Matplotlib figures rendered to inline SVG strings (private).

The ``title`` of a figure goes into the SVG ``<title>`` (for screen readers); the page shows it in the
figure caption, so it is not drawn.

Figures are built on :class:`matplotlib.figure.Figure` objects directly (no pyplot, so no global
figure registry and no backend switch); every setting goes through a local ``rc_context``.
Mathtext is off, so a rater called ``$x$`` is drawn as typed, and SVG text is XML-escaped by
matplotlib. Each figure gets its own ``svg.hashsalt`` so element ids never collide on one page.
"""

from __future__ import annotations

import io
import re
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._safe import escape_control

__all__ = ["forest_plot", "heatmap", "bar_chart", "stacked_shares", "histogram", "svg_of"]

HUMAN_COLOR = "#3b6ea5"
JUDGE_COLOR = "#c8553d"
GREY = "#7a7a7a"
_RC: dict[Any, Any] = {  # keys are matplotlib rc names (typed as a Literal there)
    "svg.fonttype": "none",
    "text.parse_math": False,
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans", "Arial", "Helvetica"],
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.titlesize": 10,
}


def _render(key: str, width: float, height: float, draw: Callable[[Any], None], *, title: str = "") -> str:
    """Create a figure under a local rc context, let ``draw`` fill it, return its SVG."""
    import matplotlib
    from matplotlib.figure import Figure

    with matplotlib.rc_context({**_RC, "svg.hashsalt": f"vd-{key}"}), warnings.catch_warnings():
        # very long labels can leave constrained layout no room; the figure is still drawn (labels are
        # shortened by _short first, so this is a last resort, local to this figure)
        warnings.filterwarnings("ignore", message="constrained_layout not applied", category=UserWarning)
        fig = Figure(figsize=(width, height), layout="constrained")
        draw(fig)
        buf = io.StringIO()
        meta: dict[str, Any] = {"Date": None, "Creator": None}
        if title:
            meta["Title"] = title
        fig.savefig(buf, format="svg", metadata=meta)
    return svg_of(buf.getvalue(), key)


def svg_of(svg: str, key: str = "") -> str:
    """Strip the XML prologue of a matplotlib SVG, make it scale with its container and prefix every
    element id (and every reference to one) with ``key``, so several inline SVGs never share an id."""
    svg = svg[svg.index("<svg"):]
    if key:
        prefix = re.sub(r"[^A-Za-z0-9_-]", "-", key) + "-"
        svg = re.sub(r'(\sid=")([^"]+)"', lambda m: f'{m.group(1)}{prefix}{m.group(2)}"', svg)
        svg = re.sub(r"url\(#([^)]+)\)", lambda m: f"url(#{prefix}{m.group(1)})", svg)
        svg = re.sub(r'(href=")#([^"]+)"', lambda m: f'{m.group(1)}#{prefix}{m.group(2)}"', svg)
    svg = re.sub(r"\s*<metadata>.*?</metadata>", "", svg, count=1, flags=re.S)
    svg = re.sub(r'<svg([^>]*?) width="[^"]*" height="[^"]*"', r"<svg\1", svg, count=1)
    return svg.replace("<svg", '<svg role="img" class="plot"', 1)


def _short(label: Any, n: int = 32) -> str:
    """A tick label of at most ``n`` characters (the full name is in the tables and the JSON),
    shown as itself: control characters escaped as in the terminal (``\\x1b``; matplotlib warned
    about each missing glyph, echoing the raw character to stderr) and ``$`` never starting
    matplotlib's math mode (``$\\foo$`` in a rater's name broke the figure)."""
    text = escape_control(label)
    text = text if len(text) <= n else text[: n - 1] + "\u2026"
    return text.replace("$", r"\$")


def _ink(rgba: Any) -> str:
    """Black or white text, whichever reads better on a cell of colour ``rgba``."""
    r, g, b = rgba[:3]
    return "black" if 0.299 * r + 0.587 * g + 0.114 * b > 0.55 else "white"


def _height(n_rows: int, base: float = 0.9, per: float = 0.28, cap: float = 9.0) -> float:
    return float(min(cap, base + per * n_rows))


def forest_plot(key: str, labels: Sequence[str], estimates: Sequence[float | None],
                lows: Sequence[float | None], highs: Sequence[float | None], *,
                groups: Sequence[str] | None = None, xlabel: str = "", refs: Sequence[tuple[float, str]] = (),
                title: str = "") -> str:
    """Point estimates with interval bars, one row per label (top to bottom in the given order)."""
    n = len(labels)
    def draw(fig: Any) -> None:
        ax = fig.add_subplot()
        y = np.arange(n)[::-1]
        est = np.array([np.nan if v is None else float(v) for v in estimates])
        lo = np.array([np.nan if v is None else float(v) for v in lows])
        hi = np.array([np.nan if v is None else float(v) for v in highs])
        colors = [JUDGE_COLOR if (groups is not None and g == "judge") else
                  (GREY if (groups is not None and g == "other") else HUMAN_COLOR) for g in (groups or ["human"] * n)]
        for k in range(n):
            if np.isfinite(lo[k]) and np.isfinite(hi[k]):
                ax.plot([lo[k], hi[k]], [y[k], y[k]], color=colors[k], lw=2, solid_capstyle="butt")
            if np.isfinite(est[k]):
                ax.plot([est[k]], [y[k]], "o", color=colors[k], ms=5)
            else:
                ax.text(0.01, y[k], "undefined", transform=ax.get_yaxis_transform(), va="center",
                        color=GREY, fontsize=8)
        for x, lab in refs:
            ax.axvline(x, color=GREY, lw=1, ls="--")
            ax.text(x, 1.0, f" {lab}", transform=ax.get_xaxis_transform(), color=GREY, fontsize=8,
                    va="bottom", ha="left")
        ax.set_yticks(y, [_short(s, 48) for s in labels])
        ax.set_ylim(-0.7, n - 0.3)
        ax.set_xlabel(xlabel)
        ax.grid(axis="x", color="#e4e4e4", lw=0.6)
        ax.set_axisbelow(True)

    return _render(key, 6.4, _height(n), draw, title=title)


def heatmap(key: str, matrix: Any, row_labels: Sequence[str], col_labels: Sequence[str], *,
            title: str = "", cbar_label: str = "", vmin: float | None = None, vmax: float | None = None,
            cmap: str = "viridis", annotate: bool | None = None, digits: int = 2, xlabel: str = "",
            ylabel: str = "", integer: bool = False) -> str:
    """A matrix as coloured cells (annotated with its values when small); nan cells are blank."""
    m = np.array([[np.nan if v is None else float(v) for v in row] for row in matrix], dtype=float)
    nr, nc = m.shape
    w = float(min(9.0, max(3.6, 1.6 + 0.45 * nc)))
    h = float(min(9.0, max(2.4, 1.0 + 0.38 * nr)))
    def draw(fig: Any) -> None:
        ax = fig.add_subplot()
        finite = m[np.isfinite(m)]
        lo = vmin if vmin is not None else (float(finite.min()) if finite.size else 0.0)
        hi = vmax if vmax is not None else (float(finite.max()) if finite.size else 1.0)
        if hi <= lo:
            hi = lo + 1.0
        im = ax.imshow(np.ma.masked_invalid(m), cmap=cmap, vmin=lo, vmax=hi, aspect="auto")
        ax.set_xticks(np.arange(nc), [_short(s) for s in col_labels], rotation=45 if nc > 3 else 0,
                      ha="right" if nc > 3 else "center")
        ax.set_yticks(np.arange(nr), [_short(s) for s in row_labels])
        ax.spines[:].set_visible(False)
        if (nr * nc <= 144) if annotate is None else annotate:
            for i in range(nr):
                for j in range(nc):
                    v = m[i, j]
                    if not np.isfinite(v):
                        continue
                    txt = f"{int(round(v)):d}" if integer else f"{v:.{digits}f}"
                    ax.text(j, i, txt, ha="center", va="center", fontsize=7, color=_ink(im.cmap(im.norm(v))))
        cb = fig.colorbar(im, ax=ax, shrink=0.85)
        if cbar_label:
            cb.set_label(cbar_label)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)

    return _render(key, w, h, draw, title=title)


def bar_chart(key: str, labels: Sequence[str], values: Sequence[float], *, groups: Sequence[str] | None = None,
              xlabel: str = "", title: str = "", ref: tuple[float, str] | None = None) -> str:
    """Horizontal bars, one per label, top to bottom in the given order."""
    n = len(labels)
    def draw(fig: Any) -> None:
        ax = fig.add_subplot()
        y = np.arange(n)[::-1]
        colors = [JUDGE_COLOR if (groups is not None and g == "judge") else HUMAN_COLOR
                  for g in (groups or ["human"] * n)]
        vals = np.array([0.0 if v is None else float(v) for v in values])
        ax.barh(y, vals, color=colors, height=0.6)
        for k in range(n):
            ax.text(vals[k], y[k], f" {vals[k]:,.0f}" if float(vals[k]).is_integer() else f" {vals[k]:.3g}",
                    va="center", fontsize=8)
        if ref is not None:
            ax.axvline(ref[0], color=GREY, ls="--", lw=1)
            ax.text(ref[0], 1.0, f" {ref[1]}", transform=ax.get_xaxis_transform(), color=GREY, fontsize=8,
                    va="bottom")
        ax.set_yticks(y, [_short(s, 48) for s in labels])
        ax.set_xlabel(xlabel)
        ax.margins(x=0.12)

    return _render(key, 6.4, _height(n), draw, title=title)


def stacked_shares(key: str, labels: Sequence[str], shares: Any, categories: Sequence[str], *,
                   title: str = "", xlabel: str = "share of the rater's labels") -> str:
    """One horizontal bar per rater, split into the shares of each category (rows sum to 1)."""
    import matplotlib

    s = np.asarray(shares, dtype=float)
    n, k = s.shape
    def draw(fig: Any) -> None:
        ax = fig.add_subplot()
        y = np.arange(n)[::-1]
        cmap = matplotlib.colormaps["viridis" if k > 10 else "tab10"]
        left = np.zeros(n)
        for j in range(k):
            color = cmap(j / max(1, k - 1)) if k > 10 else cmap(j)
            ax.barh(y, s[:, j], left=left, color=color, height=0.6, label=_short(categories[j]))
            left += s[:, j]
        ax.set_yticks(y, [_short(v) for v in labels])
        ax.set_xlim(0, 1)
        ax.set_xlabel(xlabel)
        ax.legend(ncol=min(k, 6), fontsize=7, loc="lower left", bbox_to_anchor=(0, 1.0), frameon=False)

    return _render(key, 6.4, _height(n, base=1.3), draw, title=title)


def histogram(key: str, values: Sequence[float], *, bins: int = 20, xlabel: str = "", title: str = "",
              range_: tuple[float, float] | None = None) -> str:
    """A histogram of ``values`` (nan dropped)."""
    v = np.asarray([np.nan if x is None else float(x) for x in values], dtype=float)
    v = v[np.isfinite(v)]
    def draw(fig: Any) -> None:
        ax = fig.add_subplot()
        ax.hist(v, bins=bins, range=range_, color=HUMAN_COLOR, edgecolor="white")
        ax.set_xlabel(xlabel)
        ax.set_ylabel("count")

    return _render(key, 6.4, 2.6, draw, title=title)


def small_heatmaps(key: str, matrices: Any, names: Sequence[str], labels: Sequence[str], *, title: str = "",
                   xlabel: str = "", ylabel: str = "", vmin: float = 0.0, vmax: float = 1.0, digits: int = 2,
                   integer: bool = False, ncols: int = 4) -> str:
    """Several small annotated matrices side by side (confusion matrices), one shared colour scale."""
    ms = [np.array([[np.nan if v is None else float(v) for v in row] for row in m], dtype=float) for m in matrices]
    n = len(ms)
    ncols = max(1, min(ncols, n))
    nrows = int(np.ceil(n / ncols))
    k = len(labels)
    cell = 0.42 * max(3, k) + 0.9

    def draw(fig: Any) -> None:
        axes = fig.subplots(nrows, ncols, squeeze=False)
        for idx in range(nrows * ncols):
            ax = axes[idx // ncols][idx % ncols]
            if idx >= n:
                ax.set_visible(False)
                continue
            m = ms[idx]
            im = ax.imshow(np.ma.masked_invalid(m), cmap="Blues", vmin=vmin, vmax=vmax)
            for i in range(m.shape[0]):
                for j in range(m.shape[1]):
                    if np.isfinite(m[i, j]):
                        txt = f"{int(round(m[i, j])):d}" if integer else f"{m[i, j]:.{digits}f}"
                        ax.text(j, i, txt, ha="center", va="center", fontsize=7, color=_ink(im.cmap(im.norm(m[i, j]))))
            ax.set_xticks(np.arange(m.shape[1]), [_short(s, 10) for s in labels][: m.shape[1]],
                          rotation=45 if len(labels) > 3 else 0)
            ax.set_yticks(np.arange(m.shape[0]), [_short(s, 10) for s in labels][: m.shape[0]])
            ax.set_title(_short(names[idx], 24), fontsize=8)
            ax.spines[:].set_visible(False)
            if idx % ncols == 0:
                ax.set_ylabel(ylabel)
            if idx // ncols == nrows - 1:
                ax.set_xlabel(xlabel)

    return _render(key, min(9.0, 0.4 + cell * ncols), 0.5 + cell * nrows, draw, title=title)


def grouped_bars(key: str, groups: Sequence[str], series: Sequence[str], values: Any, *, xlabel: str = "",
                 title: str = "", ref: tuple[float, str] | None = None) -> str:
    """Horizontal bars: one block per group (e.g. held-out human), one bar per series (e.g. judge)."""
    import matplotlib

    v = np.array([[np.nan if x is None else float(x) for x in row] for row in values], dtype=float)
    ng, ns = v.shape
    cmap = matplotlib.colormaps["tab10"]

    def draw(fig: Any) -> None:
        ax = fig.add_subplot()
        h = 0.8 / max(ns, 1)
        base = np.arange(ng)[::-1].astype(float)
        for s in range(ns):
            y = base + 0.4 - h * (s + 0.5)
            ax.barh(y, np.nan_to_num(v[:, s]), height=h * 0.9, color=cmap(s % 10), label=_short(series[s]))
        if ref is not None:
            ax.axvline(ref[0], color=GREY, ls="--", lw=1)
            ax.text(ref[0], 1.0, f" {ref[1]}", transform=ax.get_xaxis_transform(), color=GREY, fontsize=8,
                    va="bottom")
        ax.set_yticks(base, [_short(g) for g in groups])
        ax.set_xlabel(xlabel)
        if ns > 1:
            ax.legend(fontsize=7, frameon=False, loc="lower left", bbox_to_anchor=(1.0, 0.0))

    return _render(key, 6.8, _height(ng * max(1, min(ns, 4)) * 0.5 + ng * 0.3, base=1.0), draw, title=title)
