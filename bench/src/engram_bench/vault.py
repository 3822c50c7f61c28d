"""A generated markdown vault for the pipeline run: deterministic, plausible English notes.

Files sit in ten folders, carry YAML frontmatter and headings, and mostly fit one chunk; every
tenth file has several sections, so the chunker has real work.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

SEED = 1234
FOLDERS = (
    "projects",
    "meetings",
    "people",
    "research",
    "ops",
    "ideas",
    "journal",
    "reading",
    "decisions",
    "howto",
)
TOPICS = (
    "deployment",
    "database migration",
    "search quality",
    "embedding cache",
    "billing",
    "onboarding",
    "incident review",
    "release plan",
    "API design",
    "vector index",
    "customer feedback",
    "hiring",
    "budget",
    "roadmap",
    "security audit",
    "backups",
)
SENTENCES = (
    "We decided to keep markdown files as the source of truth and rebuild indexes from them.",
    "The deployment failed because the database URL was missing from the production settings.",
    "Retrieval combines a keyword ranking with a vector similarity ranking.",
    "The cache is keyed by provider, model, dimension and a hash of the text.",
    "Our team prefers small pull requests that change one thing at a time.",
    "Run the migrations before starting the API server, or requests will fail.",
    "A decision was made to pin the dependency versions in the lock file.",
    "The quarterly report shows revenue growth in Europe and a decline in Asia.",
    "Latency went up after the index grew past one hundred thousand chunks.",
    "She prefers written summaries over long meetings.",
    "The backup job runs every night at two and keeps thirty days of snapshots.",
    "Customers asked for an export button on the reports page.",
    "The new hire starts on Monday and will pair with the platform team.",
    "We measured recall at ten on three hundred test queries.",
    "The incident was caused by an expired certificate on the load balancer.",
    "Search results improved once titles were indexed together with the body text.",
    "The budget for the next quarter covers two more servers and a support contract.",
    "Alerts now page the on-call engineer only after three failed health checks.",
    "The design review asked for a simpler configuration file.",
    "Rollbacks take less than five minutes with the new release script.",
)


def _paragraph(rng: random.Random, topic: str) -> str:
    picked = rng.sample(SENTENCES, rng.randint(3, 6))
    return f"Notes on {topic}. " + " ".join(picked)


def note(index: int) -> tuple[str, str]:
    """(relative path, markdown text) of note ``index``."""
    rng = random.Random(SEED * 100_003 + index)
    folder = FOLDERS[index % len(FOLDERS)]
    topic = rng.choice(TOPICS)
    title = f"{topic.title()} {index:04d}"
    lines = [
        "---",
        f"title: {title}",
        f"tags: [{topic.split()[0]}, {folder}]",
        "---",
        "",
        f"# {title}",
        "",
        _paragraph(rng, topic),
        "",
    ]
    sections = 4 if index % 10 == 0 else 1
    for number in range(sections):
        lines += [f"## Part {number + 1}", "", _paragraph(rng, rng.choice(TOPICS)), ""]
    return f"{folder}/note-{index:04d}.md", "\n".join(lines)


def write_vault(root: Path, files: int) -> list[Path]:
    """Write ``files`` notes under ``root``; returns their paths in index order."""
    paths = []
    for index in range(files):
        rel, text = note(index)
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths


def age(paths: list[Path], seconds: float) -> None:
    """Date the files ``seconds`` back, as notes written before this session are (a file
    written in the last two seconds is hashed by every index run, not trusted by its stat)."""
    for path in paths:
        st = path.stat()
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - int(seconds * 1e9)))


def change(paths: list[Path], share: float, tag: str) -> list[Path]:
    """Append a line naming ``tag`` to every ``1/share``-th file (at least one); returns them."""
    step = max(1, round(1 / share))
    changed = paths[::step] or paths[:1]
    for path in changed:
        with path.open("a", encoding="utf-8") as fh:
            fh.write(f"\nEdited during the {tag} run: the numbers above were checked again.\n")
    return changed


def sample_texts(count: int) -> list[str]:
    """Paragraph-sized texts like the vault's, for embedder throughput."""
    return [note(i)[1].split("\n# ", 1)[-1] for i in range(count)]
