"""Research Desk: a STORM-style deep-research engine with an analyst dashboard.

Sub-packages: ``store`` (Redis state, seed 000 collector), ``engines`` (one typed method per
pipeline step), ``search`` (retrievers), ``pipeline`` (the STORM flow), plus ``artifacts``
(seed 001 compression and offload), ``jobs`` and ``cli``.
"""

from research._compat import serialise_ast_parse

__version__ = "0.1.0"

# The dashboard, the CLI and workers parse source in several threads at once (background
# indexing imports torch while Streamlit parses a page): CPython 3.11's ast.parse is not safe
# for that (research/_compat.py).
serialise_ast_parse()
