"""Agent hosts (Claude Code, OpenCode): the config ``engram hooks install`` writes so a host runs
``engram hooks run session-start`` / ``session-end`` itself, and the runner those commands use,
which never lets a memory failure or a hang reach the host's session."""
