"""Benchmark scripts: each prints its figures (docs/benchmarks.md lists them). Run from the repository root,
``python benchmarks/NAME.py``; a script that uses another's helpers runs as a module, ``python -m benchmarks.NAME``.
"""
