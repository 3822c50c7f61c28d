"""What embedder plugins share: batching and checks, metered APIs, the vector cache."""
