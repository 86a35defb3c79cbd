"""Judge bias diagnostics for pairwise verdicts: position, length (verbosity), self-preference."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import ndtr, ndtri  # the normal cdf / quantile scipy.stats.norm calls (no scipy.stats import: ~1 s)

from .._checks import check_probability
from .._results import Result
from ..data import PairwiseTable
from ..exceptions import InvalidParameterError, SchemaError

__all__ = ["bias_report", "BiasReport", "pair_covariates", "model_family"]

_FAMILIES = (  # (pattern on the lower-cased name, family); first match wins
    (r"gpt|openai|chatgpt|davinci|\bo1\b|\bo3\b", "openai"),
    (r"claude|anthropic", "anthropic"),
    (r"gemini|gemma|palm|bison|bard", "google"),
    (r"llama|meta", "meta"),
    (r"mistral|mixtral", "mistral"),
    (r"qwen", "alibaba"),
    (r"command|cohere", "cohere"),
)


def model_family(name: Any) -> str | None:
    """The vendor family of a model name by substring (``gpt-4`` -> ``openai``, ``claude-v1`` ->
    ``anthropic``, ``palm-2`` -> ``google``, ``llama-13b`` -> ``meta``, ...), or None.

    A heuristic: pass ``families={name: family}`` to :func:`bias_report` to override it.

    Examples
    --------
    >>> model_family("gpt-4-0125-preview"), model_family("claude-instant-v1"), model_family("vicuna-13b")
    ('openai', 'anthropic', None)
    """
    s = str(name).lower()
    for pat, fam in _FAMILIES:
        if re.search(pat, s):
            return fam
    return None


def pair_covariates(frame: pd.DataFrame, *, pair: str = "pair", model_a: str = "model_a", model_b: str = "model_b",
                    len_a: str = "len_a", len_b: str = "len_b", source: str = "<memory>",
                    row_numbers: Sequence[int] | np.ndarray | None = None) -> pd.DataFrame:
    """One row per pair (index ``pair``) with the columns ``model_a, model_b, len_a, len_b`` that exist.

    ``frame`` is a long verdict frame (e.g. :func:`voirdire.data.pairwise_set_frame`) or already
    one row per pair. Lengths must be non-negative numbers and constant within a pair; errors name
    the row and column: ``row_numbers[k]`` for the frame's row ``k`` (the file's line numbers, as
    :func:`voirdire.data.read_long_frame` gives them), else 1-based data rows.
    """
    def row_of(k: int) -> int:
        return int(row_numbers[k]) if row_numbers is not None else k + 1

    if pair not in frame.columns:
        raise SchemaError(f"missing column '{pair}'.", source=source, column=pair)
    out = pd.DataFrame(index=pd.Index(frame[pair].astype(str).unique(), name="pair"))
    for want, col in (("model_a", model_a), ("model_b", model_b), ("len_a", len_a), ("len_b", len_b)):
        if col not in frame.columns:
            continue
        v = frame[col]
        if want.startswith("len"):
            num = pd.to_numeric(v, errors="coerce")
            bad = np.flatnonzero((num.isna() & v.notna() & (v.astype(str).str.strip() != "")).to_numpy()
                                 | (num < 0).to_numpy())
            if len(bad):
                raise SchemaError(f"length {v.iloc[bad[0]]!r} is not a non-negative number.", source=source,
                                  row=row_of(int(bad[0])), column=col)
            v = num
        g = pd.DataFrame({"p": frame[pair].astype(str).to_numpy(), "v": v.to_numpy()}).dropna()
        nun = g.groupby("p")["v"].nunique()
        if (nun > 1).any():
            p = nun.index[nun.to_numpy() > 1][0]
            at = np.flatnonzero(frame[pair].astype(str).to_numpy() == p)
            vals = pd.Series(v.to_numpy()[at])
            known = vals.notna().to_numpy()
            first = vals[known].iloc[0]
            k = int(at[np.flatnonzero(known & (vals != first).to_numpy())[0]])  # the first row that differs
            a, b = (x.item() if isinstance(x, np.generic) else x for x in (first, v.iloc[k]))
            raise SchemaError(f"pair {p!r} has more than one value of '{col}' ({a!r} at row {row_of(int(at[0]))}, "
                              f"{b!r} here).", source=source, row=row_of(k), column=col)
        out[want] = g.groupby("p")["v"].first().reindex(out.index)
    return out


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class BiasReport(Result):
    """Judge bias effects, one row per (judge, effect) in ``effects``.

    Columns: ``judge, effect, estimate, low, high, se, p_value, q_value, flagged, mde, n_pairs,
    unit, detail``. ``flagged``: rejected by Benjamini-Hochberg at false discovery rate ``fdr`` over every tested
    effect of the report, i.e. ``q_value <= fdr`` (effects with ``p_value`` nan are untested: not
    counted, never flagged). ``mde``: the smallest true effect a two-sided level-``fdr`` test
    detects with probability ``power`` at this sample size (``(z_{1-fdr/2} + z_power) * se``).
    Effects that cannot be computed (no swapped pairs, no length or model columns) are listed
    with ``estimate`` nan and the reason in ``detail``.
    """

    effects: pd.DataFrame
    fdr: float
    level: float
    power: float
    n_pairs: int

    def to_frame(self) -> pd.DataFrame:
        return self.effects.copy()


def _mean_effect(s: np.ndarray, z: float) -> tuple[float, float, float, float, float]:
    """Mean of per-pair scores with a normal interval and two-sided p-value: est, low, high, se, p."""
    n = len(s)
    if n < 2:
        return (float(np.mean(s)) if n else np.nan, np.nan, np.nan, np.nan, np.nan)
    est = float(s.mean())
    se = float(s.std(ddof=1) / np.sqrt(n))
    if se == 0:
        return est, est, est, 0.0, (1.0 if est == 0 else 0.0)
    p = float(2 * ndtr(-abs(est) / se))
    return est, est - z * se, est + z * se, se, p


def _logit_cluster(X: np.ndarray, y: np.ndarray, cl: np.ndarray, n_iter: int = 50
                   ) -> tuple[np.ndarray, np.ndarray] | None:
    """Logistic regression by Newton-Raphson with a cluster-robust (sandwich) covariance."""
    b = np.zeros(X.shape[1])
    for _ in range(n_iter):
        eta = np.clip(X @ b, -30, 30)
        p = 1 / (1 + np.exp(-eta))
        W = p * (1 - p)
        H = (X * W[:, None]).T @ X
        g = X.T @ (y - p)
        try:
            step = np.linalg.solve(H, g)
        except np.linalg.LinAlgError:
            return None
        b = b + step
        if np.abs(step).max() < 1e-10:
            break
    eta = np.clip(X @ b, -30, 30)
    p = 1 / (1 + np.exp(-eta))
    H = (X * (p * (1 - p))[:, None]).T @ X
    try:
        Hi = np.linalg.inv(H)
    except np.linalg.LinAlgError:
        return None
    U = X * (y - p)[:, None]
    _, inv = np.unique(cl, return_inverse=True)
    Uc = np.zeros((inv.max() + 1, X.shape[1]))
    np.add.at(Uc, inv, U)
    G = len(Uc)
    meat = Uc.T @ Uc * (G / max(G - 1, 1))
    return b, Hi @ meat @ Hi


def bias_report(table: PairwiseTable, *, covariates: pd.DataFrame | None = None,
                families: Mapping[str, str] | None = None, fdr: float = 0.05, level: float = 0.95,
                power: float = 0.8) -> BiasReport:
    """Position, length and self-preference biases of every judge, with intervals and FDR flags.

    Effects (each judge; each a per-pair or regression estimate with a ``level`` interval):

    - **position (swap)**: on pairs the judge saw in both orders, the mean over pairs of
      ``(#labels picking the response shown first - #picking the one shown second) / #labels``;
      0 without position bias whatever the pairs' quality, since each response is first once.
      ``detail`` gives the flip rate (share of such pairs whose verdict changes with the order).
    - **position (humans tie)**: the same score on pairs whose humans' most frequent verdict is
      a tie (any order design); ``detail`` gives P(first wins | humans tie).
    - **length**: log-odds of the judge choosing A over B per doubling of ``len_a / len_b``,
      from a logistic regression of its decisive verdicts on the humans' mean verdict (A = 1,
      T = 0, B = -1), the presented order and ``log2((len_a + 1) / (len_b + 1))``, with a
      cluster-robust (by pair) covariance: the preference for length *beyond* what the humans'
      verdicts explain. Needs ``len_a, len_b`` and humans.
    - **self-preference**: on pairs where exactly one response comes from the judge's own
      family, the judge's win rate for that response (tie = 1/2) minus the humans' on the same
      pairs, averaged over pairs. Needs ``model_a, model_b`` and humans.

    p-values are two-sided (normal); ``flagged`` controls the false discovery rate at ``fdr``
    (Benjamini-Hochberg) over all tested effects. Per-pair scores average a judge's labels on the
    pair (both orders), so the intervals are valid for judges asked twice.

    Parameters
    ----------
    table : PairwiseTable
    covariates : DataFrame, optional
        One row per pair (index or column ``pair``) with ``model_a, model_b`` and/or
        ``len_a, len_b`` (see :func:`pair_covariates`).
    families : mapping, optional
        Model or judge name -> family; names not in it go through :func:`model_family`.
    fdr : float, default 0.05
        False discovery rate of the flags (Benjamini-Hochberg); also the test level of ``mde``.
    level : float, default 0.95
        Level of the intervals.
    power : float, default 0.8
        Power at which ``mde`` is computed.

    Examples
    --------
    >>> from voirdire.pairwise import simulate_pairwise
    >>> t, _ = simulate_pairwise(300, biases=[1.0, 0.0], rng=0)
    >>> r = bias_report(t)
    >>> r.effects.loc[r.effects.effect == "position (swap)", ["judge", "flagged"]].to_dict("records")
    [{'judge': 'judge_1', 'flagged': True}, {'judge': 'judge_2', 'flagged': False}]
    """
    if not isinstance(table, PairwiseTable):
        raise InvalidParameterError(
            f"The 'table' parameter of bias_report must be a PairwiseTable. Got {type(table).__name__}.")
    fdr = check_probability(fdr, "fdr", "bias_report")
    level = check_probability(level, "level", "bias_report")
    power = check_probability(power, "power", "bias_report")
    z = float(ndtri(0.5 + level / 2))
    z_mde = float(ndtri(1 - fdr / 2) + ndtri(power))
    cov = None
    if covariates is not None:
        cov = covariates.copy()
        if "pair" in cov.columns:
            cov = pair_covariates(cov)
        cov.index = cov.index.astype(str)
        for c in ("len_a", "len_b"):
            if c in cov.columns:
                num = pd.to_numeric(cov[c], errors="coerce")
                if (num.isna() & cov[c].notna()).any() or (num < 0).any():
                    raise SchemaError(f"column '{c}' holds values that are not non-negative numbers.",
                                      source="covariates", column=c)
                cov[c] = num
    fam = dict(families or {})

    def family(name: Any) -> str | None:
        return fam.get(str(name), model_family(name))

    lp = table.label_pair
    is_j = table.is_judge_label
    v = table.verdicts.astype(np.int64)
    o = table.orders.astype(np.int64)
    P = table.n_pairs
    # humans per pair: counts of A/T/B and mean score
    hc = np.zeros((P, 3))
    np.add.at(hc, (lp[~is_j], v[~is_j]), 1.0)
    has_h = hc.sum(1) > 0
    h_mean = np.where(has_h, (hc[:, 0] - hc[:, 2]) / np.maximum(hc.sum(1), 1), np.nan)
    h_tie = has_h & (hc[:, 1] > hc[:, 0]) & (hc[:, 1] > hc[:, 2])
    pair_names = np.asarray(table.pairs).astype(str)
    rows: list[dict[str, Any]] = []

    def add(judge: str, effect: str, res: tuple[float, float, float, float, float] | None, n: int, unit: str,
            detail: str) -> None:
        est, lo, hi, se, p = res if res is not None else (np.nan,) * 5
        rows.append({"judge": judge, "effect": effect, "estimate": est, "low": lo, "high": hi, "se": se,
                     "p_value": p, "mde": z_mde * se if np.isfinite(se) else np.nan, "n_pairs": int(n),
                     "unit": unit, "detail": detail})

    for jname in table.judges:
        jr = table.rater_index(jname)
        m = table.rater_idx == jr
        jp, jv, jo = lp[m], v[m], o[m]
        first = ((jo == 0) & (jv == 0)) | ((jo == 1) & (jv == 2))
        second = ((jo == 0) & (jv == 2)) | ((jo == 1) & (jv == 0))
        sc = first.astype(float) - second.astype(float)
        cnt = np.bincount(jp, minlength=P).astype(float)
        ssum = np.bincount(jp, weights=sc, minlength=P)
        nab = np.bincount(jp, weights=(jo == 0).astype(float), minlength=P)
        nba = np.bincount(jp, weights=(jo == 1).astype(float), minlength=P)
        both = (nab > 0) & (nba > 0)
        unit_pos = "share first-shown minus second-shown wins"
        if both.any():
            # flip rate: the verdict (original coordinates) differs between the orders
            vab = np.full(P, -1)
            vba = np.full(P, -1)
            vab[jp[jo == 0]] = jv[jo == 0]
            vba[jp[jo == 1]] = jv[jo == 1]
            flips = int((vab[both] != vba[both]).sum())
            nb = int(both.sum())
            lo_f, hi_f = _wilson(flips, nb, z)
            add(jname, "position (swap)", _mean_effect(ssum[both] / cnt[both], z), nb, unit_pos,
                f"flip rate {flips / nb:.3f} [{lo_f:.3f}, {hi_f:.3f}] on {nb} swapped pairs")
        else:
            add(jname, "position (swap)", None, 0, unit_pos, "not asked in both orders: no swapped pair")
        tie = h_tie & (cnt > 0)
        if tie.any():
            nf = int(first[tie[jp]].sum())
            nl = int(tie[jp].sum())
            lo_t, hi_t = _wilson(nf, nl, z)
            add(jname, "position (humans tie)", _mean_effect(ssum[tie] / cnt[tie], z), int(tie.sum()), unit_pos,
                f"P(first wins | humans tie) {nf / nl:.3f} [{lo_t:.3f}, {hi_t:.3f}]")
        else:
            add(jname, "position (humans tie)", None, 0, unit_pos, "no pair on which the humans tie")
        # ---- length
        unit_len = "log-odds of A per doubling of len_a/len_b"
        if cov is None or not {"len_a", "len_b"} <= set(cov.columns):
            add(jname, "length", None, 0, unit_len, "needs len_a and len_b columns")
        elif not has_h.any():
            add(jname, "length", None, 0, unit_len, "needs human verdicts")
        else:
            la = cov["len_a"].reindex(pair_names).to_numpy(dtype=float)
            lb = cov["len_b"].reindex(pair_names).to_numpy(dtype=float)
            x = np.log2((la + 1) / (lb + 1))
            keep = (jv != 1) & has_h[jp] & np.isfinite(x[jp])
            res = None
            n_len = int(len(np.unique(jp[keep])))
            if keep.sum() >= 10 and np.ptp(x[jp[keep]]) > 0:
                X = np.column_stack([np.ones(keep.sum()), np.where(jo[keep] == 0, 1.0, -1.0), h_mean[jp[keep]],
                                     x[jp[keep]]])
                if np.ptp(X[:, 1]) == 0:
                    X = np.delete(X, 1, axis=1)
                fit = _logit_cluster(X, (jv[keep] == 0).astype(float), jp[keep])
                if fit is not None:
                    b, V = fit
                    se = float(np.sqrt(max(V[-1, -1], 0.0)))
                    est = float(b[-1])
                    p = float(2 * ndtr(-abs(est) / se)) if se > 0 else np.nan
                    res = (est, est - z * se, est + z * se, se, p)
            add(jname, "length", res, n_len, unit_len,
                "beyond the humans' mean verdict and the presented order" if res else
                "too few decisive verdicts with lengths")
        # ---- self-preference
        unit_self = "judge minus humans win rate of own-family response"
        jfam = family(jname)
        if cov is None or not {"model_a", "model_b"} <= set(cov.columns):
            add(jname, "self-preference", None, 0, unit_self, "needs model_a and model_b columns")
        elif jfam is None:
            add(jname, "self-preference", None, 0, unit_self, "judge's family unknown (pass families=)")
        else:
            fa = np.array([family(x) == jfam for x in cov["model_a"].reindex(pair_names).tolist()])
            fb = np.array([family(x) == jfam for x in cov["model_b"].reindex(pair_names).tolist()])
            own = np.where(fa & ~fb, 0, np.where(fb & ~fa, 2, -1))      # code of the own-family response
            ok = (own >= 0) & has_h & (cnt > 0)
            if ok.sum() >= 2:
                jwin = np.bincount(jp, weights=np.where(jv == 1, 0.5, (jv == own[jp]).astype(float)), minlength=P)
                js = jwin[ok] / cnt[ok]
                hs = (np.where(own[ok] == 0, hc[ok, 0], hc[ok, 2]) + 0.5 * hc[ok, 1]) / hc[ok].sum(1)
                add(jname, "self-preference", _mean_effect(js - hs, z), int(ok.sum()), unit_self,
                    f"family {jfam}: judge {js.mean():.3f}, humans {hs.mean():.3f}")
            else:
                add(jname, "self-preference", None, int(ok.sum()), unit_self,
                    f"fewer than 2 pairs with one {jfam} response and human verdicts")
    eff = pd.DataFrame(rows, columns=["judge", "effect", "estimate", "low", "high", "se", "p_value", "mde",
                                      "n_pairs", "unit", "detail"])
    pv = eff["p_value"].to_numpy(dtype=float)
    q = _bh_qvalues(pv)
    eff["q_value"] = q
    # one Benjamini-Hochberg computation over the tested effects: the step-up procedure rejects
    # exactly the hypotheses whose adjusted p-value is <= fdr; untested effects (p = nan) are
    # neither counted in m nor flagged
    eff["flagged"] = np.isfinite(q) & (q <= fdr)
    eff = eff[["judge", "effect", "estimate", "low", "high", "se", "p_value", "q_value", "flagged", "mde",
               "n_pairs", "unit", "detail"]]
    return BiasReport(effects=eff, fdr=fdr, level=level, power=power, n_pairs=P)


def _wilson(k: int, n: int, z: float) -> tuple[float, float]:
    if n == 0:
        return np.nan, np.nan
    ph = k / n
    den = 1 + z * z / n
    c = (ph + z * z / (2 * n)) / den
    h = z * np.sqrt(ph * (1 - ph) / n + z * z / (4 * n * n)) / den
    return float(c - h), float(c + h)


def _bh_qvalues(p: np.ndarray) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values (nan stays nan)."""
    q = np.full(len(p), np.nan)
    ok = np.flatnonzero(np.isfinite(p))
    m = len(ok)
    if not m:
        return q
    order = ok[np.argsort(p[ok], kind="stable")]
    adj = p[order] * m / np.arange(1, m + 1)
    adj = np.minimum.accumulate(adj[::-1])[::-1]
    q[order] = np.minimum(adj, 1.0)
    return q
