"""Backfilling around the job that does not fit: the strategy objects (none, EASY, conservative) and
the two algorithms."""
