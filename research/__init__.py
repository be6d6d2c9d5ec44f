"""Research Desk: a STORM-style deep-research engine with an analyst dashboard.

The root holds the package face and the kernel every layer shares: ``models`` (data models),
``errors`` (the exception tree), ``events`` (event declarations) and ``config`` (settings).
Packages, top layer first (docs/architecture.md; import-linter checks the order):

- ``ui``: render helpers for the dashboard pages (``app_pages/``).
- ``jobs``: launching, resuming and waiting for runs and follow-ups (threads or RQ workers);
  ``cli``: the ``research`` command line.
- ``pipeline``: the STORM flow; ``costorm``: Co-STORM mode; ``followup``: follow-up questions
  and the citation audit; ``planning``: the question syllabus and plan review.
- ``engines``: the steps (offline extractive, litellm); ``search``: retrievers and embeddings;
  ``export``: reports as Markdown/HTML/PDF/DOCX/zip; ``ingest``: the analyst's own documents;
  ``artifacts``: raw tool results and their summary cards.
- ``store``: all Redis access; ``llm``: LLM calls, budgets, accounting; ``net``: rate limits and
  ``Retry-After``.
- ``devtools``: loopback servers and generators for tests and benchmarks.
"""

from research._compat import serialise_ast_parse

__version__ = "0.1.0"
__all__ = ["__version__", "config", "errors", "events", "models"]

# The dashboard, the CLI and workers parse source in several threads at once (background
# indexing imports torch while Streamlit parses a page): CPython 3.11's ast.parse is not safe
# for that (research/_compat.py).
serialise_ast_parse()
