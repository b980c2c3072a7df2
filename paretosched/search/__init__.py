"""The search layer: study schema, genome <-> config, NSGA-II loop, parallel/cached
evaluation, run directory, resume. Entry points: `optimise.optimise`, `study.load_study`."""
