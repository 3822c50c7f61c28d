"""The agent tools, defined once and served by every surface (MCP, CLI, plugins)."""
