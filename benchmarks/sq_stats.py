"""Score and report search_quality.py's runs: re-checked hypervolume, the paired test, table and JSON.

Repetition r is one problem instance shared by every method (search seed, fresh re-check seeds,
reference point), so methods are compared pair by pair: per repetition, the default's
hypervolume against each peer's. `paired` gives, per peer, the repetitions where the default is
at least as good (`wins`, the issue's ">= in k of n"), the exact one-sided sign test over the
repetitions that are not ties (scipy's binomtest), and the exact one-sided Wilcoxon signed-rank
test; `report` prints the table with per-repetition ratios, `write_json` saves the figures and
`merge` pools finished runs' JSON files, pairing them by repetition.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from paretosched.search import pareto

OURS = "paretosched"


def rechecked_hv(F: np.ndarray, ref: np.ndarray) -> float:
    """HV of the points that beat `ref` on every objective (0 when none does)."""
    better = F[np.all(F < ref, axis=1)] if len(F) else F
    return pareto.hypervolume(better[pareto.front_indices(better)], ref) if len(better) else 0.0


def paired(ours: list[float], peer: list[float]) -> dict[str, Any]:
    """The default against one peer over the repetitions both ran (lists aligned by repetition)."""
    from scipy.stats import binomtest, wilcoxon

    n = min(len(ours), len(peer))
    a, b = np.asarray(ours[:n], float), np.asarray(peer[:n], float)
    wins, strict, losses = int(np.sum(a >= b)), int(np.sum(a > b)), int(np.sum(a < b))
    decided = strict + losses
    # the sign test drops ties (both 0 is common: neither front beats the baseline)
    p = float(binomtest(strict, decided, 0.5, alternative="greater").pvalue) if decided else 1.0
    d = a - b
    w = float(wilcoxon(d[d != 0], alternative="greater", method="exact").pvalue) if np.any(d != 0) else 1.0
    return {"wins": wins, "of": n, "strict_wins": strict, "losses": losses, "p": p, "wilcoxon_p": w}


def all_paired(hv: dict[str, list[float]]) -> dict[str, dict[str, Any]]:
    if OURS not in hv:
        return {}
    return {m: paired(hv[OURS], v) for m, v in hv.items() if m != OURS and len(v) and len(hv[OURS])}


def _ratio(a: float, b: float) -> str:
    if b == 0:
        return "=" if a == 0 else "inf"
    return f"{a / b:.2f}"


def report(problem: str, budget: int, hv: dict[str, list[float]], cpu: dict[str, list[float]],
           out: str | None, reps: list[int] | None = None) -> None:
    """Print the paired table (and write the JSON) for the repetitions in `hv`."""
    pv = all_paired(hv)
    n = max(len(v) for v in hv.values())
    reps = reps if reps is not None else list(range(n))
    print(f"re-checked hypervolume per repetition (reference: the production baseline's re-checked objectives)")
    print(f"{'method':>13} | " + " ".join(f"{'r' + str(r):>7}" for r in reps) + " | median | median CPU s")
    for m in hv:
        print(f"{m:>13} | " + " ".join(f"{v:7.0f}" for v in hv[m]) +
              f" | {np.median(hv[m]):6.0f} | {np.median(cpu[m]):11.1f}")
    if pv:
        print(f"\n{OURS} / peer per repetition, wins (>=), one-sided exact sign test (ties dropped) and Wilcoxon")
        print(f"{'peer':>13} | " + " ".join(f"{'r' + str(r):>7}" for r in reps) + " | wins | sign p | Wilcoxon p")
        for m, s in pv.items():
            print(f"{m:>13} | " + " ".join(f"{_ratio(a, b):>7}" for a, b in zip(hv[OURS], hv[m])) +
                  f" | {s['wins']:>2}/{s['of']:<2}| {s['p']:6.3g} | {s['wilcoxon_p']:.3g}")
    if out:
        write_json(problem, budget, hv, cpu, out, reps)


def write_json(problem: str, budget: int, hv: dict[str, list[float]], cpu: dict[str, list[float]], out: str,
               reps: list[int] | None = None) -> None:
    n = max((len(v) for v in hv.values()), default=0)
    data = {"problem": problem, "budget": budget, "reps": reps if reps is not None else list(range(n)),
            "ours": OURS, "methods": {m: {"hv": hv[m], "cpu_s": cpu[m]} for m in hv}, "paired": all_paired(hv)}
    assert all(math.isfinite(v) for m in hv for v in hv[m]), "a non-finite hypervolume"
    tmp = Path(out + ".tmp")
    tmp.write_text(json.dumps(data, indent=1, allow_nan=False))
    tmp.replace(out)  # whole or not at all


def merge(files: list[str], out: str | None) -> int:
    """Pool finished runs of one problem and budget (e.g. one file per repetition, or a lever's runs
    of paretosched only, given under another method name with `name=FILE`), paired by repetition:
    only repetitions every method ran are kept."""
    by_rep: dict[int, dict[str, tuple[float, float]]] = {}
    keys = set()
    for item in files:
        rename, _, path = item.rpartition("=")
        data = json.loads(Path(path).read_text())
        keys.add((data["problem"], data["budget"]))
        for m, v in data["methods"].items():
            reps = data.get("reps") or list(range(len(v["hv"])))
            for r, h, c in zip(reps, v["hv"], v["cpu_s"]):
                by_rep.setdefault(int(r), {})[rename or m] = (h, c)
    if len(keys) != 1:
        raise SystemExit(f"--merge: the files mix problems/budgets {sorted(keys)}")
    methods = sorted({m for d in by_rep.values() for m in d}, key=lambda m: (m != OURS, m))
    reps = sorted(r for r, d in by_rep.items() if all(m in d for m in methods))
    if dropped := sorted(set(by_rep) - set(reps)):
        print(f"--merge: repetitions {dropped} lack a method and are left out (the test is paired)")
    hv = {m: [by_rep[r][m][0] for r in reps] for m in methods}
    cpu = {m: [by_rep[r][m][1] for r in reps] for m in methods}
    problem, budget = keys.pop()
    print(f"{problem}, budget {budget}, {len(files)} files, repetitions {reps}")
    report(problem, budget, hv, cpu, out, reps)
    return 0
