"""Follow-up questions asked of a finished run: answers from its evidence, research-more, and
the citation audit.

Modules: ``evidence`` (the run's sources + artifact texts, hybrid index per run), ``answer``
(extractive / litellm answers with run reference numbers), ``audit`` (support score and verdict
per cited sentence), ``more`` (research-more dialogue turn), ``execute`` (one follow-up job's
body), ``checks`` (input checks), ``ask`` (the entry points). The stored shapes are
``research.store.followup_models``; the exports' appendix is ``research.export.appendix``; the jobs
are ``research.jobs.followups``.
"""
