"""Outbound-call plumbing shared by the LLM client, the search backends and the notifications:
rate limits, ``Retry-After``, and the guard that keeps requests off internal addresses."""
