"""Any order of contradicting writes, some killed (SIGKILL, in a forked child) at any named point
of a supersede, some followed by ``index``: after every write that completes, and after every
index, there is one live head and no memory is superseded twice; no completed write's wording
is ever lost, nor that of a killed write once its file was written."""

from __future__ import annotations

import os
import signal
import tempfile
from collections import Counter
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from engram.chunking import read_frontmatter
from engram.memories.files import memory_files, wording_of
from engram.memories.lifecycle.crash import CRASH_ENV
from engram.memories.lifecycle.revisions import revisions_of
from support import MemoryFactory, memory_factory

POINTS = ["after-plan", "after-new-file", "after-index-new", "after-mark-old", "after-index-old"]
# A step: the crash point of its write (None: it completes), then whether `index` follows.
STEPS = st.lists(st.tuples(st.sampled_from([None, *POINTS]), st.booleans()), min_size=1, max_size=6)


def killed_write(factory: MemoryFactory, text: str, point: str) -> int:
    """``remember(text)`` in a forked child that kills itself at ``point`` (a write that never
    reaches the point, such as marking when nothing is superseded, completes): its wait
    status."""
    pid = os.fork()
    if pid == 0:  # the child: its own Memory, never back into pytest
        code = 1
        try:
            os.environ[CRASH_ENV] = point
            factory().remember(text, type="project-config")
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return status


def state(root: Path) -> tuple[list[str], Counter[str], set[str]]:
    """The live wordings, how often each id is named in ``supersedes``, every wording kept."""
    heads: list[str] = []
    named: Counter[str] = Counter()
    kept: set[str] = set()
    for path in memory_files(root / "memory"):
        fm = read_frontmatter(path.read_text(encoding="utf-8"))
        meta = dict(fm.metadata)
        wording = wording_of(meta, fm.body)
        kept.add(wording)
        kept.update(r.wording for r in revisions_of(path))
        names = meta.get("supersedes")
        named.update(str(s) for s in (names if isinstance(names, list) else []))
        if meta.get("status") is None:
            heads.append(wording)
    return heads, named, kept


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=STEPS)
@example(steps=[("after-new-file", False), (None, False)])  # issue 39's order
@example(steps=[("after-index-new", False), ("after-new-file", False), (None, True)])
def test_any_order_of_killed_and_completed_writes_keeps_one_live_head(
    steps: list[tuple[str | None, bool]],
) -> None:
    with tempfile.TemporaryDirectory() as tmp, memory_factory(Path(tmp), "sqlite") as factory:
        root = Path(tmp)
        factory().remember("The API listens on port 7000.", type="project-config")
        kept = {"The API listens on port 7000."}
        for n, (point, then_index) in enumerate(steps, 7001):
            text = f"The API listens on port {n}."
            if point is None:
                factory().remember(text, type="project-config")
                kept.add(text)
                heads, named, on_disk = state(root)
                assert heads == [text], (steps, heads)
            else:
                status = killed_write(factory, text, point)
                assert (os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0) or (
                    os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
                ), status
                heads, named, on_disk = state(root)
                if text in on_disk:  # written before the kill: never lost from now on
                    kept.add(text)
            assert all(count == 1 for count in named.values()), (steps, named)
            assert kept <= on_disk, (steps, kept - on_disk)
            if then_index:
                factory().index()
                heads, named, on_disk = state(root)
                assert len(heads) == 1 and all(c == 1 for c in named.values()), (steps, heads)
        factory().index()
        heads, named, on_disk = state(root)
        assert len(heads) == 1 and all(c == 1 for c in named.values()), (steps, heads, named)
        assert kept <= on_disk
