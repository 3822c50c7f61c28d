"""``capture --mode init`` with the rules extractor: a README's prose and its shell blocks become
project memories; its tables (which list commands but state nothing about the project) do not."""

from __future__ import annotations

from engram.default_plugins.rules_extractor import RulesExtractor
from engram.models import Message

README = """# Ledger

Ledger keeps the double-entry accounts of the shop, as a small Flask app that
the finance team runs on one machine.

Run the tests with `pytest -q`, and start the server on port 8080 once the
database is migrated.

| command | what it does |
|---|---|
| `ledger import FILE` | read a bank statement |
| `ledger close` | close the month |
| `ledger web` | run the web server on port 8080 |

```bash
pip install -e .
# a comment is not a command
ledger serve --port 8080
```

```toml
[ledger]
port = 8080
```

```console
$ ledger close
closed 2026-10
```
"""


def _init(text: str) -> list[str]:
    message = Message(role="user", content=f"# File: README.md\n\n{text}")
    return [m.content for m in RulesExtractor().extract([message], mode="init")]


def test_table_rows_are_not_project_facts() -> None:
    found = _init(README)
    assert not [m for m in found if "web server" in m or "bank statement" in m]


def test_the_commands_of_shell_blocks_are_one_memory() -> None:
    found = _init(README)
    [commands] = [m for m in found if m.startswith("Commands in README.md")]
    assert commands == (
        "Commands in README.md: `pip install -e .`; `ledger serve --port 8080`; `ledger close`."
    )


def test_a_sentence_wrapped_over_two_lines_is_kept_whole() -> None:
    found = _init(README)
    assert any(
        "`pytest -q`" in m and "port 8080 once the database is migrated" in m for m in found
    ), found
