"""Research Desk: a STORM-style deep-research engine with an analyst dashboard.

Sub-packages: ``store`` (Redis state, seed 000 collector), ``engines`` (one typed method per
pipeline step), ``search`` (retrievers), ``pipeline`` (the STORM flow), plus ``artifacts``
(seed 001 compression and offload), ``jobs`` and ``cli``.
"""

__version__ = "0.1.0"
