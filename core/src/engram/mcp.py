"""The MCP server: the agent tools of ``engram.tools`` over stdio or streamable HTTP.

Built on the official SDK's low-level ``Server`` so each tool's input and output schemas are the
ones generated from its pydantic models. Tool calls run in a worker thread (the store and the
embedder are blocking); every failure comes back as a tool result with ``is_error`` set, whose
text tells the model what to fix. HTTP is served on a loopback address only.
"""

from __future__ import annotations

import ipaddress
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from engram import __version__
from engram.errors import ConfigError
from engram.tools import Toolbox

SERVER_NAME = "engram"
DEFAULT_PORT = 8765
INSTRUCTIONS = (
    "engram is this user's long-term memory: markdown notes, stored memories and past agent "
    "sessions. Before answering questions about earlier work, preferences or decisions, call "
    "memory_search; read more with memory_get using a path from the results. Save durable "
    "facts, decisions and preferences with memory_store. Wrap anything that must never be "
    "stored in <private>…</private>."
)


def build_server(toolbox: Toolbox) -> Server[Any]:
    """A low-level MCP server whose tools are ``toolbox``'s."""
    listing = [
        types.Tool(
            name=tool.name,
            description=tool.description,
            input_schema=tool.input_schema(),
            output_schema=tool.output_schema(),
            annotations=types.ToolAnnotations(
                read_only_hint=tool.read_only,
                destructive_hint=tool.destructive,
                idempotent_hint=tool.read_only,
                open_world_hint=False,
            ),
        )
        for tool in toolbox.tools
    ]

    async def list_tools(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listing)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        result = await anyio.to_thread.run_sync(toolbox.call, params.name, params.arguments)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=result.text)],
            structured_content=result.data if result.ok else None,
            is_error=not result.ok,
        )

    return Server(
        SERVER_NAME,
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def serve_stdio(toolbox: Toolbox) -> None:
    """Serve on stdin/stdout until the client closes them (how agents launch servers)."""
    server = build_server(toolbox)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def check_loopback(host: str) -> str:
    """``host`` if it is a loopback address or ``localhost``; the memory is not for the LAN."""
    if host == "localhost":
        return host
    try:
        if ipaddress.ip_address(host).is_loopback:
            return host
    except ValueError:
        pass
    raise ConfigError(
        f"refusing to serve on {host}: the MCP server only listens on loopback addresses "
        "(127.0.0.1, ::1, localhost); use an SSH tunnel to reach it from elsewhere"
    )


async def serve_http(toolbox: Toolbox, host: str = "127.0.0.1", port: int = DEFAULT_PORT) -> None:
    """Serve streamable HTTP at ``http://<host>:<port>/mcp`` (loopback only)."""
    import uvicorn

    server = build_server(toolbox)
    app = server.streamable_http_app(host=check_loopback(host))
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    await uvicorn.Server(config).serve()


def run(
    toolbox: Toolbox, *, http: bool = False, host: str = "127.0.0.1", port: int = DEFAULT_PORT
) -> None:
    """Serve until stopped (stdio by default)."""
    if http:
        check_loopback(host)
        anyio.run(serve_http, toolbox, host, port)
    else:
        anyio.run(serve_stdio, toolbox)
