"""`ShardLinker`: one worker's models, loaded once (KB, name index, retriever, reranker, ranker,
detector), then one shard at a time: read -> detect -> link -> write.

A shard is read as a stream and written as it is linked, into a temporary file (`staged` in the entry it
returns) that the *driver* renames onto the output when it records the shard (core.batch.job): a worker
never publishes a shard itself, so a worker killed mid-shard, or one that outlives a killed driver,
leaves no output (only a `.curalink-tmp-*` file that the next run removes), and the shard is redone on
resume. A shard whose reader reports any problem (a bad line, a broken XML element) is *malformed*: its
temporary output is dropped and the result lists every problem (file, line or element, reason), so one
bad file never half-links and the others go on.

The retriever's cross-call cache is emptied before each shard, so a shard's output depends only on the
shard and the models, never on which shards the same worker linked before: the local engine and Ray
write byte-identical shards.
"""

from __future__ import annotations

import logging
import os
import socket
import tempfile
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.atomic_files import TEMP_PREFIX, WRITE_ERRORS, write_failed
from core.batch.linked import with_candidates
from core.batch.models import BatchSpec, open_read_only
from core.batch.plan import ShardTask, file_sha256
from core.documents import Document
from core.errors import CuralinkError, InputError
from core.formats import read_corpus, write_corpus
from core.formats.report import MAX_LISTED, FormatReport
from core.memory import peak_rss_mb
from core.progress import ProgressCallback, no_progress

if TYPE_CHECKING:
    from core.store.project import Project

log = logging.getLogger(__name__)

MAX_PROBLEMS_KEPT = 200
"""Problems of one malformed shard kept in its manifest entry (all are counted)."""


class _Malformed(Exception):
    """Raised inside the output's atomic block so the temporary file is dropped."""


class _ReaderFailed(Exception):
    """The reader of one shard failed in a way no InputError foresaw (out of memory, too deep, a library's
    own error): that shard is malformed, with the reason, and the batch goes on (issue 33)."""

    def __init__(self, path: str, error: BaseException):
        what = "ran out of memory reading it" if isinstance(error, MemoryError) else "its reader failed"
        self.problem = f"{path}: {what} ({type(error).__name__}: {str(error)[:200] or 'no message'})"
        super().__init__(self.problem)


def _reading(documents: Iterator[Document], path: str) -> Iterator[Document]:
    """The reader's documents; what it raises other than an InputError becomes `_ReaderFailed`, so only
    the reader's failures (not the models') mark a shard malformed."""
    try:
        yield from documents
    except (InputError, GeneratorExit):
        raise
    except (MemoryError, RecursionError, Exception) as error:  # noqa: BLE001 - recorded, not hidden
        raise _ReaderFailed(path, error) from error


class ShardLinker:
    """Loaded once per worker process or Ray actor; `link(task)` for each shard it is given."""

    def __init__(self, spec: BatchSpec):
        from core.project_models import load_linker

        started = time.perf_counter()
        self.spec = spec
        with open_read_only(spec.project) as project:
            kb = project.kb.knowledge_base()
            self.linker = load_linker(
                project,
                kb=kb,
                device=spec.device,
                candidates=spec.candidates,
                read_only=True,
                index_dir=Path(spec.index_dir),
            )
            self.detector = _detector(project, kb, spec.mention_type) if spec.mention_type else None
        if spec.threads:
            _use_threads(self.linker, spec.threads)
        self.loaded_at = time.time()
        self.load_seconds = time.perf_counter() - started
        self.worker = f"{socket.gethostname()}:{os.getpid()}"
        log.info("%s loaded the models and name index in %.1f s", self.worker, self.load_seconds)

    def link(self, task: ShardTask, out_dir: str | Path, progress: ProgressCallback = no_progress) -> dict:
        """Link one shard into a temporary file in `out_dir`; returns its manifest entry (status done,
        with `staged`: the file the driver renames onto `task.name`, or malformed)."""
        started_at, started, cpu = time.time(), time.perf_counter(), time.process_time()
        counts = {"documents": 0, "mentions": 0, "detected": 0}
        report = FormatReport()
        entry: dict[str, Any] = {
            "name": task.name,
            "input": task.input,
            "format": task.format,
            "out_format": task.out_format,
            "position": task.position,
            "input_sha256": file_sha256(task.input),
        }
        self.linker.retriever.cache.clear()
        target = Path(out_dir) / task.name
        try:
            documents = _reading(read_corpus(task.input, task.format, report=report), task.input)
            with staged_output(target) as staged:
                write_corpus(self._linked(documents, counts, task, progress), staged, task.out_format)
                if report.problem_count:
                    raise _Malformed
        except _Malformed:
            entry.update(status="malformed", problems=[str(p) for p in report.problems[:MAX_PROBLEMS_KEPT]])
            entry["problem_count"] = report.problem_count
        except InputError as error:  # the file as a whole: empty, wrong format, not text, unreadable
            entry.update(status="malformed", problems=[str(error)], problem_count=1)
        except _ReaderFailed as failed:  # a poison shard: recorded, the batch goes on
            entry.update(status="malformed", problems=[failed.problem], problem_count=1)
        else:
            entry.update(status="done", staged=staged.name, output_sha256=file_sha256(staged), **counts)
        if entry["status"] == "malformed":
            shown = "; ".join(entry["problems"][:MAX_LISTED])
            log.warning("%s: malformed, skipped (%d problems): %s", task.input, entry["problem_count"], shown)
        entry.update(
            deleted=sorted({d.doc_id for d in report.deletions}),
            retriever_version=self.linker.retriever_version,
            ranked_version=self.linker.ranked_version,
            seconds=round(time.perf_counter() - started, 3),
            cpu_seconds=round(time.process_time() - cpu, 3),  # all threads: what the shard cost, load aside
            started_at=started_at,
            finished_at=time.time(),
            worker=self.worker,
            loaded_at=self.loaded_at,
            load_seconds=round(self.load_seconds, 3),
            peak_rss_mb=peak_rss_mb(),
        )
        return entry

    def _linked(
        self,
        documents: Iterable[Document],
        counts: dict[str, int],
        task: ShardTask,
        progress: ProgressCallback,
    ) -> Iterator[Document]:
        for batch in _batches(documents, self.spec.batch_documents):
            if self.detector is not None:
                batch = [self._detected(document, counts) for document in batch]
            for document, ranked in zip(batch, self.linker.suggest(batch), strict=True):
                counts["documents"] += 1
                counts["mentions"] += len(document.mentions)
                yield with_candidates(document, ranked)
            progress(counts["documents"], None, f"{task.name}: documents linked")

    def _detected(self, document: Document, counts: dict[str, int]) -> Document:
        """The document with detected mentions added where no mention it carries overlaps (as
        `detect_into_project` does for a project)."""
        found = [
            replace(m, concept_id="")  # a dictionary guess is not a link: the candidates suggest
            for m in self.detector.detect([document])[0]
            if not any(m.span.overlaps(existing.span) for existing in document.mentions)
        ]
        counts["detected"] += len(found)
        return document.with_mentions([*document.mentions, *found]) if found else document


@contextmanager
def staged_output(target: Path) -> Iterator[Path]:
    """A temporary file beside `target`, kept (synced) when the block succeeds and removed when it
    fails; renaming it onto `target` is the driver's step, not the worker's."""
    descriptor, name = tempfile.mkstemp(prefix=TEMP_PREFIX, suffix="-" + target.name, dir=target.parent)
    os.close(descriptor)
    staged = Path(name)
    try:
        yield staged
        with staged.open("rb+") as handle:
            os.fsync(handle.fileno())
    except BaseException as error:
        staged.unlink(missing_ok=True)
        if isinstance(error, WRITE_ERRORS) and not isinstance(error, CuralinkError):
            raise write_failed(target, error) from error
        raise


def _use_threads(linker, threads: int) -> None:
    """N workers on C cores: C // N threads each, for the encoder (torch), FAISS and OpenMP, so the
    workers do not oversubscribe the cores (Ray gives a 1-CPU actor one thread the same way)."""
    import faiss
    import torch

    torch.set_num_threads(threads)
    faiss.omp_set_num_threads(threads)
    encoder = getattr(linker.retriever, "encoder", None)
    if encoder is not None:
        encoder.threads = threads


def _detector(project: Project, kb, label: str):
    """The project's dictionary, as `link --detect` tags with it (every type its routes admit)."""
    from core.project_detector import batch_dictionary

    return batch_dictionary(project, kb, label)


def _batches(documents: Iterable[Document], size: int) -> Iterator[list[Document]]:
    batch: list[Document] = []
    for document in documents:
        batch.append(document)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


# --- one ShardLinker per spawned process (the local engine's pool) --------------------------------

_LOADED: ShardLinker | None = None


def load_in_process(spec_json: dict) -> None:
    """Pool initializer: the models and the name index, once per worker process."""
    global _LOADED
    _LOADED = ShardLinker(BatchSpec.from_json(spec_json))


def link_in_process(task_json: dict, out_dir: str) -> dict:
    if _LOADED is None:
        raise RuntimeError("link_in_process before load_in_process")
    return _LOADED.link(ShardTask.from_json(task_json), out_dir)
