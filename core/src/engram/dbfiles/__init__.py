"""The small SQLite files engram keeps beside the index and in memory folders."""
