"""Research Desk as a Model Context Protocol server (``research mcp``): start runs, follow them,
read their reports, ask follow-ups and search the corpus from any MCP client. Named
``mcp_server`` so it never shadows the ``mcp`` SDK it is built on."""
