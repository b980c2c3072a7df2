"""`paretosched optimise STUDY.yaml`: run the search, then print the end-of-run table.

The table itself is the search layer's (`paretosched.search.verdict.summary_table`); the
balanced and knee picks are the analysis layer's (`paretosched.analysis.front`), which the
search layer may not import, so this printer, above both layers, adds them. Picks go through
`analysis.front.choose`, the resolver `export --pick` uses, so the table names what export writes.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from paretosched.errors import UserError

if TYPE_CHECKING:
    from paretosched.search.summary import Summary


def run_optimise(args: Any) -> int:
    from paretosched.search.optimise import optimise
    from paretosched.search.summary import read_summary
    from paretosched.search.verdict import summary_table

    run_dir = optimise(args.study, out=args.out, resume=args.resume, workers=args.workers,
                       dask=args.dask, quiet=args.quiet, local=args.local)
    summary = read_summary(Path(run_dir))
    assert summary is not None, "optimise writes the summary before it returns"
    print(summary_table(summary, str(run_dir), picks(run_dir, summary), diff_command(run_dir, summary)))
    print(f"run directory: {run_dir}")
    return 0


def picks(run_dir: Path, summary: Summary) -> dict[str, int] | None:
    """{'balanced': eval id, 'knee': eval id} on the run's front, or None when it has none."""
    from paretosched.analysis.front import choose
    from paretosched.analysis.rundata import load_run

    if not summary.front:
        return None
    try:
        run = load_run(run_dir)
    except UserError:
        return None
    # the resolver `export --pick` uses, so the table names the eval that export will write
    try:
        return {name: choose(run, name).eval_id for name in ("balanced", "knee")}
    except UserError:  # no front point meets the study's constraints (the table says so)
        return None


def diff_command(run_dir: Path, summary: Summary) -> list[str]:
    """The export of the smallest change to the slurm.conf the reference baseline was read from."""
    import os
    import shlex

    from paretosched.search.study import STUDY_FILE
    from paretosched.yamlio import read_yaml

    study = read_yaml(Path(run_dir) / STUDY_FILE) if (Path(run_dir) / STUDY_FILE).is_file() else {}
    conf = ((study or {}).get("slurm_confs") or {}).get(summary.reference or "")
    if not isinstance(conf, dict) or "path" not in conf or not summary.recheck.seeds:
        return []

    def shown(path: str) -> str:
        rel = os.path.relpath(path)
        return shlex.quote(rel if not rel.startswith("..") else path)

    cpu_map = f" --cpu-map {shown(conf['cpu_map'])}" if conf.get("cpu_map") else ""
    return [f"paretosched export {shlex.quote(str(run_dir))} --pick minimal:90 --format slurm "
            f"--against {shown(conf['path'])}{cpu_map} -o slurm.conf.diff   # the smallest change to {summary.reference}"]
