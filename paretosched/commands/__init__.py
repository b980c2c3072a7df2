"""Glue for CLI subcommands that print or write files (kept out of the layers they call)."""
