"""Engines: the things that perform each pipeline step (docs/design.md § Engines).

``base.Engine`` is the protocol (one typed method per step); ``extractive`` is the offline
engine; the litellm engine plugs in behind the same protocol.
"""
