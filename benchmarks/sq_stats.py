"""Score and report search_quality.py's runs: re-checked hypervolume, the win test, table and JSON.

`rechecked_hv` is the quality of one method's re-checked front; `p_values` and `win_factor` are
the one-sided Mann-Whitney U test of paretosched's default against each peer; `report` prints the
table, `write_json` saves the figures and `merge` pools finished runs' JSON files.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from paretosched.search import pareto


def rechecked_hv(F: np.ndarray, ref: np.ndarray) -> float:
    """HV of the points that beat `ref` on every objective (0 when none does)."""
    better = F[np.all(F < ref, axis=1)] if len(F) else F
    return pareto.hypervolume(better[pareto.front_indices(better)], ref) if len(better) else 0.0


def p_values(hv: dict[str, list[float]], ours: str = "paretosched") -> dict[str, float]:
    from scipy.stats import mannwhitneyu

    return {m: float(mannwhitneyu(hv[ours], v, alternative="greater").pvalue)
            for m, v in hv.items() if m != ours and len(v) and len(hv[ours])}


def win_factor(v: list[float], alpha: float = 0.10) -> float | None:
    """The smallest k (in steps of 0.05, up to 5) for which a method scoring k x a peer's HV in
    every repetition would pass the win test (one-sided MWU p < alpha) against that peer: how
    far ahead the test asks a method to be, given the spread between repetitions."""
    from scipy.stats import mannwhitneyu

    for k in np.arange(1.05, 5.0001, 0.05):
        if mannwhitneyu(k * np.asarray(v), v, alternative="greater").pvalue < alpha:
            return round(float(k), 2)
    return None


def report(problem: str, budget: int, hv: dict[str, list[float]], cpu: dict[str, list[float]], out: str | None) -> None:
    """Print the table (and write the JSON) for the repetitions in `hv`."""
    pv = p_values(hv) if "paretosched" in hv else {}
    print(f"{'method':>13} | reps | median HV | mean HV | median CPU s | p (paretosched > method) | "
          "x to win | HV per repetition")
    for m in hv:
        pm = f"{pv[m]:.3g}" if m in pv else "-"
        k = win_factor(hv[m]) if m in pv else None
        print(f"{m:>13} | {len(hv[m]):>4} | {np.median(hv[m]):9.1f} | {np.mean(hv[m]):7.1f} | {np.median(cpu[m]):12.1f} | "
              f"{pm:>24} | {('-' if m not in pv else '> 5') if k is None else f'{k:.2f}':>8} | "
              f"{' '.join(f'{v:.0f}' for v in hv[m])}")
    if pv:
        print("x to win: a method scoring that multiple of the peer's HV in every repetition would have "
              "p < 0.10 against it")
    if out:
        write_json(problem, budget, hv, cpu, out)


def write_json(problem: str, budget: int, hv: dict[str, list[float]], cpu: dict[str, list[float]], out: str) -> None:
    pv = p_values(hv) if "paretosched" in hv else {}
    tmp = Path(out + ".tmp")
    tmp.write_text(json.dumps({"problem": problem, "budget": budget,
                               "methods": {m: {"hv": hv[m], "cpu_s": cpu[m]} for m in hv}, "p_values": pv}, indent=1))
    tmp.replace(out)  # whole or not at all


def merge(files: list[str], out: str | None) -> int:
    """Pool finished runs of one problem and budget (e.g. one per repetition, or a lever's runs of
    paretosched only, given under another method name with `name=FILE`)."""
    hv: dict[str, list[float]] = {}
    cpu: dict[str, list[float]] = {}
    keys = set()
    for item in files:
        rename, _, path = item.rpartition("=")
        data = json.loads(Path(path).read_text())
        keys.add((data["problem"], data["budget"]))
        for m, v in data["methods"].items():
            name = rename or m
            hv.setdefault(name, []).extend(v["hv"])
            cpu.setdefault(name, []).extend(v["cpu_s"])
    if len(keys) != 1:
        raise SystemExit(f"--merge: the files mix problems/budgets {sorted(keys)}")
    problem, budget = keys.pop()
    print(f"{problem}, budget {budget} evaluation-equivalents, {len(files)} files")
    report(problem, budget, hv, cpu, out)
    return 0

