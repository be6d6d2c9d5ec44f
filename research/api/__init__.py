"""The HTTP API of Research Desk (``research serve``): FastAPI on uvicorn, scoped bearer tokens.

Modules: ``app`` (the application, error mapping, the server), ``auth`` (tokens, their scopes
and the per-token rate limit), ``runs`` (start, list, read, export, cancel, delete), ``stream``
(a run's events as server-sent events), ``actions`` (follow-up questions, plan approval),
``corpora`` (the named corpora and uploads into them), ``schemas`` (request and response
bodies, the one error body). Every endpoint calls the job code the dashboard and the CLI use
(``research.jobs``); the API adds no other way to create or run a run.
"""
