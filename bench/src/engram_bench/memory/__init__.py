"""The ``memory`` section of the bench: how the write path and extraction treat facts."""
