"""Export a chosen point of a run as a scheduler config (`paretosched simulate` reads it back).

The file is the evaluation's complete decoded `SimConfig` (exactly as logged) plus a
`provenance` block:

```yaml
provenance:
  study: quickstart
  run_dir: /abs/runs/quickstart
  pick: balanced            # the pick expression ("explorer" for explorer downloads)
  eval_id: 42
  generation: 7
  genome: {scheduler.freq: 0.8, ...}
  objectives: {energy_kwh: 1.23, mean_bsld: 4.56}      # mean over `seeds`, natural sign
  seeds: [11, 22, 33]
  per_seed: [{seed: 11, objectives: {...}}, ...]        # in `seeds` order
  recheck: {eval_id: 77, seeds: [...], objectives: {...}}   # only when the run re-checked it
  paretosched_version: 0.1.0
```

`simulate` runs `seeds` and averages with `paretosched.sim.engine.metrics.mean_metrics`, which is the
rule the search used, so `objectives` is reproduced exactly. Values are copied from the JSON
log (never through numpy), and YAML writes floats with `repr`, so they round-trip bit for bit.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import paretosched
from paretosched.analysis.front import Pick, choose
from paretosched.analysis.rundata import RunData, load_run
from paretosched.analysis.slurm_diff import Change, against_diff
from paretosched.analysis.slurm_export import slurm_fragment
from paretosched.config import config_from_dict
from paretosched.errors import UserError
from paretosched.search.files import make_output_dir, write_output
from paretosched.yamlio import dump_yaml

def config_document(run: RunData, eval_id: int, pick: str) -> dict[str, Any]:
    """The logged config of `eval_id` with its provenance block (a plain dict, JSON types)."""
    row = run.rows.get(eval_id)
    if row is None:
        raise UserError(f"{run.run_dir}: no evaluation with eval id {eval_id}")
    if not row.ok or not row.config:
        raise UserError(f"{run.run_dir}: evaluation {eval_id} did not succeed (status {row.status!r})")
    doc = copy.deepcopy(row.config)
    seeds = list(row.seeds)
    per_seed = [{"seed": ps.seed, "objectives": {o: (ps.metrics or {}).get(o) for o in run.objectives}}
                for ps in row.per_seed]
    prov: dict[str, Any] = {
        "study": run.study_name,
        "run_dir": str(run.run_dir),
        "pick": pick,
        "eval_id": int(eval_id),
        "generation": row.generation,
        "genome": copy.deepcopy(row.genome),
        "objectives": {o: (row.objectives or {}).get(o) for o in run.objectives},
        "seeds": seeds,
        "per_seed": per_seed,
    }
    recheck = _recheck_of(run, eval_id)
    if recheck is not None:
        prov["recheck"] = recheck
    prov["paretosched_version"] = paretosched.__version__
    # the twin that produced the objectives: `simulate` warns when it runs on a different one
    twin = run.summary.twin
    if twin:
        prov["twin_version"] = twin
    doc["provenance"] = prov
    return doc


def _recheck_of(run: RunData, eval_id: int) -> dict[str, Any] | None:
    r = run.rechecks.get(eval_id)
    if r is None:
        return None
    return {"eval_id": r.eval_id, "seeds": list(r.seeds),
            "objectives": {o: (r.objectives or {}).get(o) for o in run.objectives}}


def to_yaml(doc: dict[str, Any]) -> str:
    """Block-style YAML in the config's own key order (safe dumper only)."""
    # yamlio's dumper: libyaml's when present (the explorer dumps one config per evaluation)
    return dump_yaml(doc, sort_keys=False, default_flow_style=False, allow_unicode=True)


def export_pick(run_dir: str, pick: str, out: str, fmt: str = "yaml") -> Path:
    """Write the config of a picked point as YAML to `out`; returns the written path.

    `pick` is one of: `balanced` (paper's equal-weight min-max rule), `knee` (pymoo high
    trade-off point, else balanced), `min:METRIC` (best front point for objective METRIC),
    `weights:a,b,...` (one weight per objective, in study order), `index:N` (N-th point,
    0-based, of the front in front.csv's order: best first objective first), `eval:ID` (any
    successful search evaluation by eval id), `baseline:NAME` (a baseline of the study),
    `minimal:P` (analysis/minimal.py: the fewest changes keeping P% of the best re-checked saving).
    Mistakes raise a one-line UserError.
    `fmt`: `yaml` (the config `simulate` reads) or `slurm` (a slurm.conf fragment).
    """
    run, chosen = pick_point(run_dir, pick)
    return write_point(run, chosen, out, fmt)


def pick_point(run_dir: str, pick: str) -> tuple[RunData, Pick]:
    """The run and its point `pick` names (export_pick's rules); a bad pick is a UserError."""
    run = load_run(run_dir)
    return run, choose(run, pick)


def write_point(run: RunData, chosen: Pick, out: str, fmt: str = "yaml") -> Path:
    """Write the config of `chosen` (see export_pick); returns the written path."""
    doc = config_document(run, chosen.eval_id, chosen.name)
    # the file must be what `simulate` accepts: validate before writing
    config_from_dict(doc, f"export of eval {chosen.eval_id}")
    path = Path(out)
    if path.is_dir():
        path = path / f"{run.study_name}_{_slug(chosen.name)}.yaml"
    make_output_dir(path.parent, run.run_dir)  # in the run dir, never through a link (search/files.py)
    write_output(path, slurm_fragment(doc) if fmt == "slurm" else to_yaml(doc), run.run_dir)
    return path


def write_diff(run: RunData, chosen: Pick, out: str, against: str,
               cpu_map: str | None = None) -> tuple[Path, list[Change]]:
    """Write the smallest edit of slurm.conf `against` that deploys `chosen`, as a unified diff
    (analysis/slurm_diff.py); returns the written path and the changes."""
    doc = config_document(run, chosen.eval_id, chosen.name)
    config_from_dict(doc, f"export of eval {chosen.eval_id}")
    text, changes = against_diff(doc, against, cpu_map)
    path = Path(out)
    if path.is_dir():
        path = path / f"{run.study_name}_{_slug(chosen.name)}.diff"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path, changes


def _slug(text: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in text)
