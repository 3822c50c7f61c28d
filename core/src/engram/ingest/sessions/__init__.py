"""Agent session transcripts as a second source (``source = "sessions"``).

Each agent's storage has its own reader (``opencode``, ``claude_code``) that lists sessions with a
cheap fingerprint and turns one session into user and assistant text; ``sync`` indexes them
incrementally, one document per session (``sessions/<agent>/<session id>``).
"""
