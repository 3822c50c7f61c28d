"""The dashboard's ASGI app (starlette): HTML pages and their JSON twins, GET only.

Nothing here writes: no route takes another method (starlette answers 405), and every route
reads through ``DashboardData``. A request whose ``Host`` is not one of ``allowed_hosts`` (the
loopback names by default) is refused with 400 before any route runs: a web page that points
its own name at 127.0.0.1 (DNS rebinding) must not read the user's memory.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from engram.dashboard import pages
from engram.dashboard.data import DashboardData
from engram.errors import EngramError, MemoryNotFound

Handler = Callable[[Request], Response]
# The names a browser on this machine uses for loopback (IPv6 with and without brackets: older
# starlette versions strip them).
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "[::1]", "::1")


def build_app(data: DashboardData, allowed_hosts: Sequence[str] = LOOPBACK_HOSTS) -> Starlette:
    """The app over one open memory; ``data`` is shared by every request, which must name one
    of ``allowed_hosts`` in its ``Host`` header."""

    def memories_json(request: Request) -> Response:
        return JSONResponse(data.memories(**_filters(request)))

    def search_json(request: Request) -> Response:
        return JSONResponse(data.search(request.query_params.get("q", ""), _limit(request)))

    def memory_json(request: Request) -> Response:
        return JSONResponse(data.memory_page(request.path_params["ref"]))

    def home(request: Request) -> Response:
        query = request.query_params.get("q", "").strip()
        results = data.search(query, _limit(request)) if query else None
        return HTMLResponse(pages.memories_page(data.memories(**_filters(request)), query, results))

    def subjects_html(request: Request) -> Response:
        return HTMLResponse(pages.subjects_page(data.subjects()))

    def memory_html(request: Request) -> Response:
        return HTMLResponse(pages.memory_page(data.memory_page(request.path_params["ref"])))

    routes = [
        Route("/", guarded(home)),
        Route("/memory/{ref:path}", guarded(memory_html)),
        Route("/subjects", guarded(subjects_html)),
        Route("/index", guarded(lambda r: HTMLResponse(pages.index_page(data.index())))),
        Route("/usage", guarded(lambda r: HTMLResponse(pages.usage_page(data.usage())))),
        Route("/activity", guarded(lambda r: HTMLResponse(pages.activity_page(data.activity())))),
        Route("/api/health", guarded(lambda r: JSONResponse(data.health()))),
        Route("/api/memories", guarded(memories_json)),
        Route("/api/search", guarded(search_json)),
        Route("/api/subjects", guarded(lambda r: JSONResponse(data.subjects()))),
        Route("/api/memory/{ref:path}", guarded(memory_json)),
        Route("/api/index", guarded(lambda r: JSONResponse(data.index()))),
        Route("/api/usage", guarded(lambda r: JSONResponse(data.usage()))),
        Route("/api/activity", guarded(lambda r: JSONResponse(data.activity()))),
    ]
    trusted = Middleware(
        TrustedHostMiddleware, allowed_hosts=list(allowed_hosts), www_redirect=False
    )
    return Starlette(routes=routes, middleware=[trusted])


def guarded(handler: Handler) -> Handler:
    """A library error becomes a page (or JSON) that says it, not a server error: an unknown
    memory is 404, anything else engram refused is 400."""

    def run(request: Request) -> Response:
        try:
            return handler(request)
        except MemoryNotFound as exc:
            return _error(request, 404, str(exc))
        except EngramError as exc:
            return _error(request, 400, str(exc))

    return run


def _error(request: Request, status: int, message: str) -> Response:
    if request.url.path.startswith("/api/"):
        return JSONResponse({"error": message}, status_code=status)
    return HTMLResponse(pages.not_found(message), status_code=status)


def _filters(request: Request) -> dict[str, Any]:
    params = request.query_params
    return {
        "type": params.get("type") or None,
        "scope": params.get("scope") or None,
        "subject": params.get("subject") or None,
        "history": params.get("history") in ("1", "true", "yes"),
    }


def _limit(request: Request) -> int:
    raw = request.query_params.get("limit", "10")
    return max(1, min(100, int(raw))) if raw.isdigit() else 10
