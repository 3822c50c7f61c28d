"""``python -m engram``: the same as the ``engram`` command."""

from engram.cli import run

run()
