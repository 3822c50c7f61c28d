"""CPU parallelism: our own worker threads, each running single-threaded BLAS.

Measured on a 2-core machine shared with other work, OpenBLAS's own threads made the encoder
about 3x slower than one thread (its workers spin and wait on each other), while two Python
threads with one BLAS thread each also parallelise the element-wise parts (GELU, softmax,
LayerNorm) that BLAS never touches. numpy releases the GIL in both, so threads scale.

The BLAS limit is process-wide (a BLAS library has one thread pool): it holds while any
``encode`` runs and is restored when the last one ends.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


def available_cores() -> int:
    """Cores this process may run on (its CPU affinity where the OS reports it)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # macOS and Windows have no sched_getaffinity
        return max(1, os.cpu_count() or 1)


class _SingleThreadedBlas:
    """Reference-counted BLAS limit, safe when several threads encode at once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._depth = 0
        self._controller: Any = None
        self._limiter: Any = None

    @contextmanager
    def __call__(self) -> Iterator[None]:
        with self._lock:
            if self._depth == 0:
                if self._controller is None:
                    # Created lazily: the controller only sees BLAS libraries already loaded.
                    from threadpoolctl import ThreadpoolController  # type: ignore[import-untyped]

                    self._controller = ThreadpoolController()
                self._limiter = self._controller.limit(limits=1, user_api="blas")
            self._depth += 1
        try:
            yield
        finally:
            with self._lock:
                self._depth -= 1
                if self._depth == 0 and self._limiter is not None:
                    self._limiter.restore_original_limits()
                    self._limiter = None


single_threaded_blas = _SingleThreadedBlas()
