"""The lossless write plumbing of the memory layer: every write indexed from what its writer
holds, revisions, links, locks, chains, crash recovery, export and import (the judgment
that decides a write lives in ``engram.memories.judge``)."""
