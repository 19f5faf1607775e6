"""aeron_py benchmarks: one package, run from the repository root as ``python -m benchmarks.<name>``.

Every script uses :mod:`benchmarks.harness` (child processes, probes, machine info, the shared
C driver, results and their history).  See ``benchmarks/README.md``.
"""
