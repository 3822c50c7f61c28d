"""Agent session transcripts as a second source (``source = "sessions"``).

Each host's reader lives in its own folder (``engram.hosts.<name>.sessions``) and is reached
through the hosts' table here (``registry``): it lists sessions with a cheap fingerprint and
turns one session into user and assistant text (``base``); ``sync`` indexes them
incrementally, one document per session (``sessions/<host>/<session id>``).
"""
