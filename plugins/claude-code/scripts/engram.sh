#!/bin/sh
# The engram Claude Code plugin's launcher: runs the engram the user installed.
#   engram.sh hook EVENT   what hooks/hooks.json runs; never fails the session (always exit 0)
#   engram.sh ARGS...      anything else (the MCP server: `engram.sh mcp`)
# Which engram: $ENGRAM_BIN (a path to an engram executable), else `engram` on PATH, else
# `uvx` or `pipx run` with the published package. None of them: one line on stderr.
# Nothing the user typed is put into a command line here: hooks read their JSON on stdin.

SPEC="engram-kit[agent]"

missing() {
    echo "engram: memory unavailable: no engram command found; install it (uv tool install" \
        "'$SPEC', or pipx install '$SPEC'), or set ENGRAM_BIN to its path" >&2
}

run_engram() {
    if [ -n "${ENGRAM_BIN:-}" ]; then
        if [ -x "$ENGRAM_BIN" ]; then
            "$ENGRAM_BIN" "$@"
            return $?
        fi
        echo "engram: memory unavailable: ENGRAM_BIN=$ENGRAM_BIN is no executable file" >&2
        return 127
    fi
    if command -v engram >/dev/null 2>&1; then
        engram "$@"
    elif command -v uvx >/dev/null 2>&1; then
        uvx --quiet --from "$SPEC" engram "$@"
    elif command -v pipx >/dev/null 2>&1; then
        pipx run --spec "$SPEC" engram "$@"
    else
        missing
        return 127
    fi
}

if [ "${1:-}" = "hook" ]; then
    event="${2:-}"
    case "$event" in
        session-start | session-end | pre-compact | prompt) ;;
        *)
            echo "engram: memory unavailable: unknown hook event '$event'" >&2
            exit 0
            ;;
    esac
    # The runner gives up before Claude Code's own timeout (hooks.json) would kill it.
    case "$event" in
        prompt) cap=4 ;;
        *) cap=55 ;;
    esac
    run_engram hooks run "$event" --host claude-code --timeout "$cap"
    exit 0
fi
run_engram "$@"
