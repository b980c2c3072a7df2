"""`paretosched runs table RUN -o FILE`: a run's evaluations as a table people load (CSV, Parquet)."""

from __future__ import annotations

from typing import Any


def run_runs(args: Any) -> int:
    from paretosched.runs import write_table

    path = write_table(args.run, args.output, force=args.force, per_seed=args.per_seed)
    print(f"table: {path}")
    return 0
