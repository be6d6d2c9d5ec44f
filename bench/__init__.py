"""Research Desk benchmarks: ``python -m bench`` / ``make bench``.

Every figure is a ratio against a baseline measured in the same run, because absolute times on
shared machines drift. Modules: ``common`` (figures, table, JSON), ``metrics`` (soft heading
recall, nDCG/recall, critical path), one module per measured item, ``__main__`` (the CLI).
"""
