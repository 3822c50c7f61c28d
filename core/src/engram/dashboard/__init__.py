"""``engram dashboard``: a local, read-only web page over one project's memory (memories by
type and scope with search, a memory's history, index stats per source, usage and cost over
time, recent activity, ``/api/health``). Needs the ``dashboard`` extra (starlette, uvicorn)."""
