"""The MCP server (official ``mcp`` SDK, ``MCPServer``): the tools of
``research.mcp_server.tools`` with one-line descriptions an assistant can act on, served on stdio
(``research mcp``) or streamable HTTP (``research mcp --http PORT``, path ``/mcp``).

Runs started here execute where the configured job backend puts them: threads of this server
process (``thread``, the default — the runs stop if the server is stopped; they are then
``interrupted`` and resume with ``research resume`` or when the dashboard or a worker starts) or
RQ workers (``RESEARCH_JOB_BACKEND=rq``).
"""

from __future__ import annotations

import logging

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

from research.mcp_server import search, tools

NAME = "research-desk"
INSTRUCTIONS = (
    "Research Desk writes cited research reports from a document corpus. Call start_research "
    "with a topic; it returns a run_id at once. Poll get_run until status is complete (a run "
    "takes minutes), then get_report for the Markdown report with numbered citations. "
    "ask_run answers a follow-up question from a finished run's sources. search_corpus "
    "searches the local corpus directly."
)
# name → (one-line description, read only?)
TOOLS = {
    "start_research": (
        "Start a research run on a topic; returns its run_id immediately (poll get_run).",
        False,
    ),
    "get_run": (
        "Status, progress (0–1), per-question source coverage and totals of a run.",
        True,
    ),
    "get_report": (
        "The finished run's cited report as Markdown (an error says how far the run is).",
        True,
    ),
    "ask_run": (
        "Ask a finished run a follow-up question, answered with citations from its sources.",
        False,
    ),
    "get_answer": (
        "The answer to a follow-up that ask_run returned as pending (poll with its followup_id).",
        True,
    ),
    "list_runs": ("Recent runs, newest first, with status, topic and source count.", True),
    "search_corpus": (
        "Search the local document corpus (BM25 + embeddings) and return passages with links.",
        True,
    ),
}


def build_server() -> MCPServer:
    """The ``MCPServer`` with every tool of :data:`TOOLS` registered."""
    server: MCPServer = MCPServer(NAME, instructions=INSTRUCTIONS, log_level="WARNING")
    for name, (description, read_only) in TOOLS.items():
        server.add_tool(
            getattr(search if name == "search_corpus" else tools, name),
            name=name,
            description=description,
            annotations=ToolAnnotations(
                read_only_hint=read_only, destructive_hint=False, open_world_hint=False
            ),
        )
    return server


def serve(http_port: int | None = None, host: str = "127.0.0.1") -> None:
    """Serve until the client disconnects (stdio) or the process is stopped (HTTP).

    Args:
        http_port: serve streamable HTTP on this port (path ``/mcp``); None = stdio.
        host: the HTTP bind address.
    """
    logging.getLogger("research").setLevel(logging.WARNING)
    server = build_server()
    if http_port is None:
        server.run("stdio")
    else:
        server.run("streamable-http", host=host, port=http_port)
