"""graphaudit benchmarks (not part of the installed package): see README.md; run ``python benchmarks/run.py``."""
