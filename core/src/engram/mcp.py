"""The MCP server: the agent tools of ``engram.tools`` over stdio or streamable HTTP.

Built on the official SDK's low-level ``Server`` so each tool's input and output schemas are the
ones generated from its pydantic models, with annotations (read-only, destructive, idempotent)
from the tool's definition. Memories are resources and two prompts are served
(``engram.tools.mcp_content``); a read-only toolbox lists only reading tools. Tool calls run in a
worker thread (the store and the embedder are blocking); every failure comes back as a tool
result with ``is_error`` set, whose text tells the model what to fix. HTTP is served on a
loopback address only.
"""

from __future__ import annotations

import ipaddress
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from engram import __version__
from engram.errors import ConfigError
from engram.tools import mcp_content as content
from engram.tools.mcp_content import ContentError
from engram.tools.toolbox import Toolbox

SERVER_NAME = "engram"
DEFAULT_PORT = 8765
INSTRUCTIONS = (
    "engram is this user's long-term memory: markdown notes, stored memories and past agent "
    "sessions. Before answering questions about earlier work, preferences or decisions, call "
    "memory_search (filters: type, scope, tag, since/until, source); read more with memory_get "
    "using a path from the results. Save durable facts, decisions and preferences with "
    "memory_store; correct one with memory_edit (the earlier wording is kept). Wrap anything "
    "that must never be stored in <private>…</private>."
)
READ_ONLY_INSTRUCTIONS = (
    "engram is this user's long-term memory: markdown notes, stored memories and past agent "
    "sessions. This server is read-only: search with memory_search, read with memory_get or "
    "fetch; it stores and changes nothing."
)


def _listing(toolbox: Toolbox) -> list[types.Tool]:
    return [
        types.Tool(
            name=tool.name,
            title=tool.title or None,
            description=tool.description,
            input_schema=tool.input_schema(),
            output_schema=tool.output_schema(),
            annotations=types.ToolAnnotations(
                title=tool.title or None,
                read_only_hint=tool.read_only,
                destructive_hint=tool.destructive,
                idempotent_hint=tool.idempotent,
                open_world_hint=False,
            ),
        )
        for tool in toolbox.tools
    ]


def _refused(exc: ContentError) -> MCPError:
    return MCPError(code=types.INVALID_PARAMS, message=str(exc))


def build_server(toolbox: Toolbox) -> Server[Any]:
    """A low-level MCP server whose tools are ``toolbox``'s, with memories as resources and the
    prompts of ``engram.tools.mcp_content``."""
    listing = _listing(toolbox)

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
        instructions=READ_ONLY_INSTRUCTIONS if toolbox.read_only else INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        **_content_handlers(toolbox),
    )


def _content_handlers(toolbox: Toolbox) -> dict[str, Any]:
    """The resource and prompt handlers (``engram.tools.mcp_content`` does the work in a thread)."""

    async def list_resources(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        cursor = params.cursor if params else None
        try:
            items, after = await anyio.to_thread.run_sync(content.list_memories, toolbox, cursor)
        except ContentError as exc:
            raise _refused(exc) from None
        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    uri=i.uri,
                    name=i.name,
                    title=i.title,
                    description=i.description,
                    mime_type=content.MARKDOWN,
                )
                for i in items
            ],
            next_cursor=after,
        )

    async def list_templates(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(
            resource_templates=[
                types.ResourceTemplate(
                    uri_template=t.uri_template,
                    name=t.name,
                    description=t.description,
                    mime_type=content.MARKDOWN,
                )
                for t in content.TEMPLATES
            ]
        )

    async def read_resource(
        ctx: Any, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)
        try:
            text = await anyio.to_thread.run_sync(content.read, toolbox, uri)
        except ContentError as exc:
            raise _refused(exc) from None
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type=content.MARKDOWN, text=text)]
        )

    async def list_prompts(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        return types.ListPromptsResult(
            prompts=[
                types.Prompt(
                    name=p.name,
                    title=p.title,
                    description=p.description,
                    arguments=[
                        types.PromptArgument(
                            name=a.name, description=a.description, required=a.required
                        )
                        for a in p.arguments
                    ],
                )
                for p in content.PROMPTS.values()
            ]
        )

    async def get_prompt(ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        try:
            described, text = await anyio.to_thread.run_sync(
                content.prompt, toolbox, params.name, params.arguments
            )
        except ContentError as exc:
            raise _refused(exc) from None
        return types.GetPromptResult(
            description=described,
            messages=[
                types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))
            ],
        )

    return {
        "on_list_resources": list_resources,
        "on_list_resource_templates": list_templates,
        "on_read_resource": read_resource,
        "on_list_prompts": list_prompts,
        "on_get_prompt": get_prompt,
    }


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
