"""What a backfilling pass learnt failed: resources only shrink during a pass, so a (size, memory)
that failed once fails for every larger job (these prune most allocator calls on deep queues)."""

from __future__ import annotations


def dominated(fails: list[tuple[int, float]], size: int, mem: float) -> bool:
    return any(fs <= size and fm <= mem for fs, fm in fails)


def add_fail(fails: list[tuple[int, float]], size: int, mem: float) -> None:
    """Keep only the minimal failures: a larger one is implied by a smaller one."""
    fails[:] = [(fs, fm) for fs, fm in fails if not (fs >= size and fm >= mem)]
    fails.append((size, mem))
