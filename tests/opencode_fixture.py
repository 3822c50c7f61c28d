"""A fixture ``opencode.db`` built with OpenCode's own schema.

The DDL below is what drizzle-kit generates for OpenCode's drizzle tables, taken from
anomalyco/opencode (the sst/opencode repository) at commit
063e8306d9895af9bdd175306cfa4fa3291fd83a, ``packages/opencode/src/session/session.sql.ts``
(``session``, ``message``, ``part``), ``packages/opencode/src/project/project.sql.ts``
(``project``, at 20cdf51574da7809502221d53386baad69826806) and the ``Timestamps`` columns of
``packages/opencode/src/storage/schema.sql.ts``: every column, type, NOT NULL, default, foreign
key and index as declared there. Row contents follow ``message-v2.ts`` (message ``data``: role,
time.created, agent, model; part ``data``: text / reasoning / tool / step-start parts), with the
``id`` / ``sessionID`` / ``messageID`` fields left out of ``data`` as OpenCode stores them.
The database is in WAL mode, as OpenCode runs it.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE `project` (
	`id` text PRIMARY KEY,
	`worktree` text NOT NULL,
	`vcs` text,
	`name` text,
	`icon_url` text,
	`icon_color` text,
	`time_created` integer NOT NULL,
	`time_updated` integer NOT NULL,
	`time_initialized` integer,
	`sandboxes` text NOT NULL,
	`commands` text,
	`worktree_settings` text
);
CREATE TABLE `session` (
	`id` text PRIMARY KEY,
	`project_id` text NOT NULL,
	`workspace_id` text,
	`parent_id` text,
	`slug` text NOT NULL,
	`directory` text NOT NULL,
	`path` text,
	`title` text NOT NULL,
	`version` text NOT NULL,
	`share_url` text,
	`summary_additions` integer,
	`summary_deletions` integer,
	`summary_files` integer,
	`summary_diffs` text,
	`cost` real DEFAULT 0 NOT NULL,
	`tokens_input` integer DEFAULT 0 NOT NULL,
	`tokens_output` integer DEFAULT 0 NOT NULL,
	`tokens_reasoning` integer DEFAULT 0 NOT NULL,
	`tokens_cache_read` integer DEFAULT 0 NOT NULL,
	`tokens_cache_write` integer DEFAULT 0 NOT NULL,
	`revert` text,
	`permission` text,
	`goal` text,
	`agent` text,
	`model` text,
	`time_created` integer NOT NULL,
	`time_updated` integer NOT NULL,
	`time_compacting` integer,
	`time_archived` integer,
	CONSTRAINT `fk_session_project_id_project_id_fk` FOREIGN KEY (`project_id`)
		REFERENCES `project`(`id`) ON DELETE CASCADE
);
CREATE TABLE `message` (
	`id` text PRIMARY KEY,
	`session_id` text NOT NULL,
	`time_created` integer NOT NULL,
	`time_updated` integer NOT NULL,
	`data` text NOT NULL,
	CONSTRAINT `fk_message_session_id_session_id_fk` FOREIGN KEY (`session_id`)
		REFERENCES `session`(`id`) ON DELETE CASCADE
);
CREATE TABLE `part` (
	`id` text PRIMARY KEY,
	`message_id` text NOT NULL,
	`session_id` text NOT NULL,
	`time_created` integer NOT NULL,
	`time_updated` integer NOT NULL,
	`data` text NOT NULL,
	CONSTRAINT `fk_part_message_id_message_id_fk` FOREIGN KEY (`message_id`)
		REFERENCES `message`(`id`) ON DELETE CASCADE
);
CREATE INDEX `session_project_idx` ON `session` (`project_id`);
CREATE INDEX `session_workspace_idx` ON `session` (`workspace_id`);
CREATE INDEX `session_parent_idx` ON `session` (`parent_id`);
CREATE INDEX `message_session_time_created_id_idx` ON `message` (`session_id`,`time_created`,`id`);
CREATE INDEX `part_message_id_id_idx` ON `part` (`message_id`,`id`);
CREATE INDEX `part_session_idx` ON `part` (`session_id`);
"""

T0 = 1_764_000_000_000  # epoch milliseconds, as OpenCode stores every time


@dataclass
class OpenCodeDb:
    """Writes sessions into a fixture database the way OpenCode does (one row per session,
    message and part; JSON ``data``)."""

    path: Path
    clock: int = T0
    projects: dict[str, str] = field(default_factory=dict)

    @classmethod
    def create(cls, path: Path) -> OpenCodeDb:
        path.parent.mkdir(parents=True, exist_ok=True)
        with closing(sqlite3.connect(path)) as db, db:
            db.execute("PRAGMA journal_mode=WAL")
            db.executescript(SCHEMA)
        return cls(path)

    def connect(self) -> sqlite3.Connection:
        """A connection in autocommit mode; the fixture's own writes close theirs at once (as
        ``closing``), so no connection left to the garbage collector checkpoints the WAL into
        the database file later, in the middle of a test that compares its bytes."""
        db = sqlite3.connect(self.path, isolation_level=None)
        db.execute("PRAGMA foreign_keys=ON")
        return db

    def tick(self) -> int:
        self.clock += 1000
        return self.clock

    def project(self, worktree: Path) -> str:
        key = str(worktree)
        if key not in self.projects:
            project_id = f"prj{len(self.projects) + 1:04d}"
            with closing(self.connect()) as db:
                db.execute(
                    "INSERT INTO project (id, worktree, vcs, time_created, time_updated, "
                    "sandboxes) VALUES (?, ?, 'git', ?, ?, '[]')",
                    (project_id, key, self.clock, self.clock),
                )
            self.projects[key] = project_id
        return self.projects[key]

    def session(self, session_id: str, directory: Path, title: str) -> None:
        now = self.tick()
        with closing(self.connect()) as db:
            db.execute(
                "INSERT INTO session (id, project_id, slug, directory, title, version, "
                "time_created, time_updated) VALUES (?, ?, ?, ?, ?, '1.2.3', ?, ?)",
                (session_id, self.project(directory), session_id, str(directory), title, now, now),
            )

    def message(self, session_id: str, role: str, *parts: dict[str, Any]) -> str:
        """One message with its parts (``text(...)``, ``tool(...)``, ``reasoning(...)``)."""
        now = self.tick()
        with closing(self.connect()) as db:
            number = db.execute("SELECT count(*) FROM message").fetchone()[0] + 1
            message_id = f"msg_{number:06d}"
            data: dict[str, Any] = {"role": role, "time": {"created": now}}
            if role == "user":
                data |= {"agent": "build", "model": {"providerID": "x", "modelID": "y"}}
            else:
                data |= {"parentID": "", "modelID": "y", "providerID": "x", "mode": "build"}
            db.execute(
                "INSERT INTO message (id, session_id, time_created, time_updated, data) "
                "VALUES (?, ?, ?, ?, ?)",
                (message_id, session_id, now, now, json.dumps(data)),
            )
            for index, part in enumerate(parts, 1):
                db.execute(
                    "INSERT INTO part (id, message_id, session_id, time_created, time_updated, "
                    "data) VALUES (?, ?, ?, ?, ?, ?)",
                    (
                        f"prt_{number:06d}_{index:02d}",
                        message_id,
                        session_id,
                        now,
                        now,
                        json.dumps(part),
                    ),
                )
            db.execute("UPDATE session SET time_updated = ? WHERE id = ?", (now, session_id))
        return message_id


def text(words: str, **extra: Any) -> dict[str, Any]:
    return {"type": "text", "text": words, **extra}


def reasoning(words: str) -> dict[str, Any]:
    return {"type": "reasoning", "text": words, "time": {"start": T0}}


def tool(command: str, output: str) -> dict[str, Any]:
    state = {
        "status": "completed",
        "input": {"command": command},
        "output": output,
        "title": command,
        "metadata": {},
        "time": {"start": T0, "end": T0 + 5},
    }
    return {"type": "tool", "callID": "call_1", "tool": "bash", "state": state}


def step_start() -> dict[str, Any]:
    return {"type": "step-start"}
