"""The HTTP API of Research Desk (``research serve``): FastAPI on uvicorn, bearer tokens.

Modules: ``app`` (the application, error mapping, the server), ``auth`` (tokens and the
per-token rate limit), ``runs`` (start, list, read, export, cancel/delete), ``stream`` (a run's
events as server-sent events), ``actions`` (follow-up questions, plan approval), ``schemas``
(request and response bodies). Every endpoint calls the job code the dashboard and the CLI use
(``research.jobs``); the API adds no other way to create or run a run.
"""
