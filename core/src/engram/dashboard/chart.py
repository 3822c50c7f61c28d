"""Usage over time as an inline SVG bar chart, drawn on the server: no script, no CDN (the
dashboard works offline), and a browser test can find it in the page."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

WIDTH, HEIGHT, PAD = 720, 220, 40


def bar_chart(days: Sequence[dict[str, Any]], value: str, label: str) -> str:
    """Bars of ``value`` (a key of each day's row) per day, with the largest value marked."""
    values = [float(d.get(value) or 0.0) for d in days]
    if not any(values):
        return f'<p class="muted">No {escape(label)} recorded in this period.</p>'
    top = max(values)
    step = (WIDTH - 2 * PAD) / len(values)
    bars = []
    for i, (day, v) in enumerate(zip(days, values, strict=True)):
        h = (HEIGHT - 2 * PAD) * v / top
        x = PAD + i * step
        y = HEIGHT - PAD - h
        bars.append(
            f'<rect x="{x + step * 0.1:.1f}" y="{y:.1f}" width="{step * 0.8:.1f}" '
            f'height="{h:.1f}" fill="#3b6ea5"><title>{escape(str(day.get("day")))}: '
            f"{v:g} {escape(label)}</title></rect>"
        )
    first, last = escape(str(days[0].get("day"))), escape(str(days[-1].get("day")))
    return (
        f'<svg class="chart" role="img" aria-label="{escape(label)} per day" '
        f'width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}">'
        f'<line x1="{PAD}" y1="{HEIGHT - PAD}" x2="{WIDTH - PAD}" y2="{HEIGHT - PAD}" '
        'stroke="#888"/>'
        + "".join(bars)
        + f'<text x="{PAD}" y="{PAD - 12}" font-size="12">max {top:g} {escape(label)}</text>'
        f'<text x="{PAD}" y="{HEIGHT - 12}" font-size="12">{first}</text>'
        f'<text x="{WIDTH - PAD}" y="{HEIGHT - 12}" font-size="12" text-anchor="end">{last}</text>'
        "</svg>"
    )
