"""kgreview for AI agents: a Model Context Protocol server over the read API.

``server`` holds the MCP server (the official SDK's ``MCPServer``): its tools call the
read API's own answers (``api.endpoints``) and the graph's services, so an agent reads
exactly what an HTTP client reads. Two ways in: ``manage.py mcp`` speaks MCP over stdio
(``management/commands/mcp.py``), and ``POST /api/mcp`` speaks the streamable HTTP
transport, stateless with JSON answers, behind the API's bearer tokens and per-account
rate limits (``http``). docs/mcp.md says why it is served this way and how to add
kgreview to an agent.
"""
