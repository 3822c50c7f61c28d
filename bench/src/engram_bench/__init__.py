"""engram-bench: the benchmark harness behind ``engram bench`` (a tool, not the runtime).

Quality on BEIR SciFact and LoCoMo, speed and scale on a synthetic corpus, the indexing
pipeline, and peers, for every installed store and embedder, in one run; see
docs/benchmarks.md.
"""
