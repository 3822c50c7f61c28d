"""Sources that feed the store: markdown vaults (and, later, agent session transcripts)."""
