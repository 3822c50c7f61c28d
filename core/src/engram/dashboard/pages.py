"""The dashboard's HTML, rendered on the server from the same data as ``/api/``. Every value
that came from a file, a query or a store is escaped: a memory titled ``<script>`` is text."""

from __future__ import annotations

from collections.abc import Iterable
from html import escape
from typing import Any
from urllib.parse import quote, urlencode

from engram.dashboard.chart import bar_chart
from engram.filters import parse_iso

STYLE = """
body{font:15px/1.45 system-ui,sans-serif;margin:0;color:#1d2329;background:#f6f7f9;
overflow-wrap:anywhere}
header{background:#1d2f45;color:#fff;padding:10px 24px;display:flex;gap:22px;align-items:center}
header a{color:#dfe9f5;text-decoration:none}header strong{font-size:18px;margin-right:12px}
main{padding:18px 24px;max-width:1100px}table{border-collapse:collapse;width:100%;background:#fff}
td,th{border-bottom:1px solid #e2e5ea;padding:6px 8px;text-align:left;vertical-align:top;
overflow-wrap:anywhere}.scroll{overflow-x:auto;max-width:100%}
.tag{display:inline-block;background:#e3ecf7;border-radius:10px;padding:0 8px;margin:2px}
.err{color:#a4262c;font-weight:600}.muted{color:#6b7480}pre{white-space:pre-wrap;
background:#fff;padding:12px;border:1px solid #e2e5ea}form{margin:0 0 14px}
input[type=search]{width:420px;max-width:100%;box-sizing:border-box;padding:6px}
.hit{background:#fff;border:1px solid #e2e5ea;padding:8px 12px;margin:8px 0;
overflow-wrap:anywhere}.history{opacity:.65}svg.chart{max-width:100%;height:auto}
@media (max-width:600px){header{flex-wrap:wrap;gap:10px;padding:8px 12px}
main{padding:12px}h1{font-size:22px;overflow-wrap:anywhere}td,th{padding:4px}}
"""
NAV = [
    ("/", "Memories"),
    ("/subjects", "Subjects"),
    ("/index", "Index"),
    ("/usage", "Usage"),
    ("/activity", "Activity"),
]


def page(title: str, body: str) -> str:
    links = "".join(f'<a href="{href}">{escape(name)}</a>' for href, name in NAV)
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)} · engram</title><style>{STYLE}</style></head>"
        f"<body><header><strong>engram</strong>{links}</header><main>"
        f"<h1>{escape(title)}</h1>{body}</main></body></html>"
    )


def search_form(query: str) -> str:
    return (
        '<form action="/" method="get" role="search">'
        f'<input type="search" name="q" value="{escape(query)}" '
        'placeholder="search notes, memories, sessions" autofocus> '
        '<button type="submit">Search</button></form>'
    )


def memories_page(data: dict[str, Any], query: str, results: dict[str, Any] | None) -> str:
    counts = " ".join(
        f'<a class="tag" href="/?{urlencode({"type": t})}">{escape(t)}: {n}</a>'
        for t, n in data["by_type"].items()
    )
    scopes = " ".join(
        f'<a class="tag" href="/?{urlencode({"scope": s})}">{escape(s)}: {n}</a>'
        for s, n in data["by_scope"].items()
    )
    body = search_form(query)
    if results is not None:
        body += search_results(results)
    body += f"<p>By type: {counts or '<span class=muted>none yet</span>'}</p>"
    body += f"<p>By scope: {scopes or '<span class=muted>none yet</span>'} "
    body += f'<span class="muted">({data["history"]} in history)</span></p>'
    if data.get("subject"):
        body += (
            f"<p>About <strong>{escape(data['subject'])}</strong>: {len(data['memories'])} "
            'memories (any case). <a href="/">All memories</a> · '
            '<a href="/subjects">every subject</a></p>'
        )
    rows = [
        [
            f'<a href="/memory/{quote(m["id"] or m["path"], safe="")}">{escape(m["title"])}</a>',
            subject_link(m.get("subject")),
            escape(m["type"] or ""),
            escape(m["scope"] or ""),
            local_time(m["created_at"]),
            escape(m["status"]),
        ]
        for m in data["memories"]
    ]
    headings = ["title", "subject", "type", "scope", "created", "status"]
    return page("Memories", body + table(headings, rows))


def subject_link(subject: str | None) -> str:
    """A memory's subject as a link to the list of memories about it (nothing when none)."""
    if not subject:
        return ""
    return f'<a href="/?{urlencode({"subject": subject})}">{escape(subject)}</a>'


def subjects_page(data: dict[str, Any]) -> str:
    """Who and what the live memories are about, most memories first, each a link to them."""
    rows = [[subject_link(s["subject"]), str(s["memories"])] for s in data["subjects"]]
    body = (
        '<p class="muted">Live memories by the subject their frontmatter names; subjects that '
        "differ only in case are one. "
        f"{data['without_subject']} memories name no subject.</p>"
    )
    return page("Subjects", body + table(["subject", "memories"], rows))


def search_results(results: dict[str, Any]) -> str:
    out = [f'<section id="results"><h2>Results for “{escape(results["query"])}”</h2>']
    if results["degraded"]:
        out.append(f'<p class="err">{escape("; ".join(results["warnings"]))}</p>')
    if not results["hits"]:
        out.append('<p class="muted">Nothing found.</p>')
    for hit in results["hits"]:
        title = escape(hit["title"])
        if hit.get("memory"):
            title = f'<a href="/memory/{quote(hit["memory"], safe="")}">{title}</a>'
        out.append(
            f'<div class="hit"><strong>{title}</strong> '
            f'<span class="muted">{escape(hit["path"])} · {escape(str(hit["source"]))} · '
            f"score {hit['score']}</span><br>{escape(hit['snippet'])}</div>"
        )
    return "".join(out) + "</section>"


# Frontmatter fields whose values are memory ids: shown as links to those memories.
MEMORY_ID_FIELDS = frozenset({"superseded_by", "supersedes", "conflicts_with", "related"})


def frontmatter_value(key: str, value: Any) -> str:
    """A frontmatter value as a reader writes it, not as Python prints it: a list as its items
    (memory ids as links), a mapping as ``key: value`` pairs (a revision's wording and date),
    YAML's true/false, nothing for null. Every piece escaped."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        items = [frontmatter_value(key, item) for item in value]
        return "<br>".join(items) if key == "revisions" else ", ".join(items)
    if isinstance(value, dict):
        return "; ".join(
            f"{escape(str(k))}: {frontmatter_value(str(k), v)}" for k, v in value.items()
        )
    text = escape(str(value))
    if key in MEMORY_ID_FIELDS and isinstance(value, str) and value:
        return f'<a href="/memory/{quote(value, safe="")}">{text}</a>'
    return text


def memory_page(data: dict[str, Any]) -> str:
    m = data["memory"]
    front = "".join(
        f"<tr><th>{escape(str(k))}</th><td>{frontmatter_value(str(k), v)}</td></tr>"
        for k, v in data["frontmatter"].items()
    )
    chain = [
        [
            f'<a href="/memory/{quote(c["id"] or c["path"], safe="")}">{escape(c["title"])}</a>',
            escape(c["status"]),
            local_time(c["created_at"]),
            escape(c["superseded_by"] or ""),
        ]
        for c in data["chain"]
    ]
    wordings = [
        [
            escape(e["when"] or ""),
            f'<a href="/memory/{quote(e["memory_id"] or e["path"], safe="")}">'
            f"{escape(e['memory_id'] or e['path'])}</a>",
            escape(e["status"] + (f" ({e['why']})" if e["why"] else "")),
            f"<pre>{escape(e['wording'])}</pre>",
        ]
        for e in data.get("entries", [])
    ]
    if data.get("read_only"):
        origin = escape(str(data.get("origin") or "another machine"))
        return page(
            m["title"],
            f'<p class="muted">{escape(m["path"])} · from {origin}, read-only: that machine '
            f"keeps its history</p><pre>{escape(data['text'])}</pre>"
            f"<h2>Frontmatter</h2><table>{front}</table>",
        )
    about = m.get("subject")
    about_html = f" · about {subject_link(about)}" if about else ""
    body = (
        f'<p class="muted">{escape(m["path"])}{about_html}</p><pre>{escape(data["text"])}</pre>'
        f"<h2>Frontmatter</h2><table>{front}</table>"
        "<h2>History</h2><p class=muted>Oldest first; superseded memories stay as history.</p>"
        + table(["memory", "status", "created", "superseded by"], chain)
        + "<h2>Every wording</h2><p class=muted>Oldest first: earlier wordings (revisions) "
        "and the memories of the chain. <code>engram restore ID [--revision N]</code> brings "
        "one back.</p>" + table(["when", "memory", "state", "wording"], wordings)
    )
    return page(m["title"], body)


def index_page(data: dict[str, Any]) -> str:
    rows = [
        [
            escape(name),
            str(s["documents"]),
            str(s["chunks"]),
            str(s["pending"]),
            local_time(s["last_indexed"]),
        ]
        for name, s in data["sources"].items()
    ]
    body = (
        f"<p>Store <strong>{escape(data['store'])}</strong>, embedder "
        f"<strong>{escape(data['embedder'])}</strong>; index built with "
        f"{escape(data['identity'] or 'nothing yet')}. {data['documents']} documents, "
        f"{data['chunks']} chunks.{_cache(data['embedding_cache'])}</p>"
        + table(["source", "documents", "chunks", "keyword-only", "last indexed"], rows)
    )
    return page("Index", body)


def _cache(stats: dict[str, Any] | None) -> str:
    if not stats:
        return " No embedding cache."
    size = stats["bytes"]
    shown = f"{size / 1e6:.1f} MB" if size >= 100_000 else f"{size / 1e3:.1f} kB"
    return f" Embedding cache: {stats['entries']} vectors, {shown}."


def usage_page(data: dict[str, Any]) -> str:
    days = data["days"]
    cost = sum(d["cost_usd"] or 0.0 for d in days)
    body = f'<p class="muted">From the usage ledger {escape(data["ledger"])}.</p>'
    if data.get("error"):
        body += f'<p class="err">{escape(data["error"])}</p>'
    body += "<h2>Tokens per day</h2>" + bar_chart(days, "tokens", "tokens")
    body += "<h2>Estimated cost per day (USD)</h2>" + bar_chart(days, "cost_usd", "USD")
    rows = [
        [
            escape(str(d["day"])),
            str(d["requests"]),
            str(d["errors"]),
            str(d["tokens"]),
            "" if d["cost_usd"] is None else f"{d['cost_usd']:.4f}",
        ]
        for d in days
    ]
    body += f"<p>Last 30 days: {sum(d['requests'] for d in days)} requests, ${cost:.4f}.</p>"
    return page("Usage", body + table(["day", "requests", "errors", "tokens", "USD"], rows))


def activity_page(data: dict[str, Any]) -> str:
    rows = [
        [
            local_time(e["when"]),
            escape(e["kind"]),
            escape(e["what"]),
            f'<span class="err">{escape(e["error"])}</span>' if e["error"] else "",
        ]
        for e in data["events"]
    ]
    body = (
        f"<p>{data['errors']} errors among the latest {len(rows)} events.</p>"
        f'<p class="muted">{escape(data["not_recorded"])}</p>'
    )
    return page("Activity", body + table(["when", "event", "what", "error"], rows))


def local_time(value: str | None) -> str:
    """A stored time (ISO, or the activity's ``… UTC``) as the reader's local time to the
    minute (the dashboard runs on the reader's machine), the exact value kept in ``datetime``
    and ``title``; anything else is shown as it is."""
    if not value:
        return ""
    parsed = parse_iso(value.removesuffix(" UTC"))
    if parsed is None:
        return escape(value)
    local = parsed.astimezone()
    shown = local.strftime("%Y-%m-%d %H:%M ") + (local.tzname() or "")
    return (
        f'<time datetime="{escape(parsed.isoformat())}" title="{escape(value)}">'
        f"{escape(shown.strip())}</time>"
    )


def not_found(message: str) -> str:
    return page("Not found", f'<p class="err">{escape(message)}</p>')


def table(headings: Iterable[str], rows: list[list[str]]) -> str:
    """A table of cells that are already escaped HTML."""
    if not rows:
        return '<p class="muted">Nothing here yet.</p>'
    head = "".join(f"<th>{escape(h)}</th>" for h in headings)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    inner = f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    return f'<div class="scroll">{inner}</div>'
