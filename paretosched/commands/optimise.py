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
    print(summary_table(summary, str(run_dir), picks(run_dir, summary)))
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
    return {name: choose(run, name).eval_id for name in ("balanced", "knee")}
