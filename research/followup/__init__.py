"""Follow-up questions asked of a run, research-more, and the citation audit.

Modules: ``models`` (stored shapes), ``evidence`` (the run's sources + artifact texts, hybrid
index per run), ``answer`` (extractive / litellm answers with run reference numbers), ``audit``
(support score and verdict per cited sentence), ``more`` (research-more dialogue turn as a job),
``ask`` (the entry points), ``cli`` (``research ask`` / ``research audit``). Heavy imports
(torch, bm25s) happen only inside functions that need them.
"""
