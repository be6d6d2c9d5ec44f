"""Outbound-call plumbing shared by the LLM client and the search backends: rate limits and ``Retry-After``."""
