"""Text utilities every floor shares: words, private spans, surrogates, tokens, snippets."""
