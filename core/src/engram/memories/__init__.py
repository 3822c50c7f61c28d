"""The memory layer: agent memories as markdown files, written, judged, aged, recalled."""
