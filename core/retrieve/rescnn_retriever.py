"""ResCNN behind the `Retriever` protocol: encode every KB name once, then batched FAISS search.

`retrieve` encodes and searches each distinct (normalised) mention string once per call, and keeps
the answers in a bounded LRU across calls; `cache_size=0` turns the cross-call cache off (the
benchmark reports both).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from core.documents import Candidate
from core.errors import CuralinkError, ModelError
from core.kb.knowledge_base import KnowledgeBase, NameEntry
from core.locations import INDEX_SUFFIXES
from core.progress import NEVER_CANCELLED, CancelToken, ProgressFn, no_progress
from core.retrieve.base import search_concepts
from core.retrieve.cache import DEFAULT_CACHE_SIZE, CandidateCache
from core.retrieve.encoder import DEFAULT_BACKEND, DEFAULT_THREADS, RescnnEncoder
from core.retrieve.index import NameIndex, adopt_legacy_index, index_stem
from core.retrieve.index_file import IndexDamaged
from core.retrieve.name_rows import NameRows, same_rows
from core.retrieve.rescnn import WEIGHTS_FILE, RescnnConfig
from core.text.normalize import normalize_name

log = logging.getLogger(__name__)


def model_fingerprint(folder: str | Path, config: RescnnConfig | None = None) -> str:
    """Hash of the saved weights (and of the settings that shape a vector): an index is named by it.

    Not by the folder's name or place: a version evaluated in its scratch folder and then moved to
    models/retriever/vN, or a copy of the project, finds the index it already built.
    """
    digest = hashlib.sha256((Path(folder) / WEIGHTS_FILE).read_bytes())
    if config is not None:
        shaping = {k: v for k, v in config.to_json().items() if k != "base_model"}  # the place may vary
        digest.update(json.dumps(shaping, sort_keys=True).encode())
    return digest.hexdigest()[:12]


def saved_version(folder: str | Path) -> str:
    """The version (`model_fingerprint`) a saved folder loads as, from its files alone (no model built);
    raises ModelError for a folder that is not a readable ResCNN model."""
    from dataclasses import fields

    from core.safe_models import check_model_files, read_json_file

    folder = Path(folder)
    check_model_files(folder)
    config_path = folder / "config.json"
    data = read_json_file(config_path, "ResCNN configuration")
    if not isinstance(data, dict) or not (folder / WEIGHTS_FILE).is_file():
        raise ModelError(f"{folder}: not a ResCNN model folder")
    known = {f.name for f in fields(RescnnConfig)}
    config = RescnnConfig.from_json({k: v for k, v in data.items() if k in known}, str(config_path))
    return model_fingerprint(folder, config)


class RescnnRetriever:
    name = "rescnn"

    def __init__(
        self,
        encoder: RescnnEncoder,
        *,
        version: str = "unsaved",
        index_dir: str | Path | None = None,
        index_kind: str | None = None,
        cache_size: int = DEFAULT_CACHE_SIZE,
        encode_workers: int | None = None,
        encode_engine: str = "local",
    ):
        self.encoder = encoder
        self.model_folder: Path | None = None  # set by `load`: parallel encoders load the model from it
        self.encode_workers = encode_workers  # None: one process per core above PARALLEL_MIN_NAMES
        self.encode_engine = encode_engine
        self.cache = CandidateCache(cache_size)
        self.version = version
        self.index_dir = Path(index_dir) if index_dir is not None else None
        self.index_kind = index_kind
        self.kb: KnowledgeBase | None = None
        self.name_index: NameIndex | None = None
        self._legacy_version = ""  # how older versions named this model's index files
        self.builds = 0  # name indexes encoded from the KB by `index` (not loaded from index/)
        self._stem = ""  # the saved index this one matches (index_stem of the KB and model version)

    @classmethod
    def load(
        cls,
        folder: str | Path,
        *,
        backend: str = DEFAULT_BACKEND,
        threads: int = DEFAULT_THREADS,
        index_dir: str | Path | None = None,
        index_kind: str | None = None,
        cache_size: int = DEFAULT_CACHE_SIZE,
        encode_workers: int | None = None,
        encode_engine: str = "local",
    ) -> RescnnRetriever:
        """A saved model version; `index_dir` (a project's index/) caches the name index on disk."""
        folder = Path(folder)
        encoder = RescnnEncoder.load(folder, backend=backend, threads=threads)
        retriever = cls(
            encoder,
            version=model_fingerprint(folder, encoder.model.config),
            index_dir=index_dir,
            index_kind=index_kind,
            cache_size=cache_size,
            encode_workers=encode_workers,
            encode_engine=encode_engine,
        )
        retriever._legacy_version = f"{folder.name}.{model_fingerprint(folder)}"
        retriever.model_folder = folder
        return retriever

    def index(
        self, kb: KnowledgeBase, *, progress: ProgressFn = no_progress, cancel: CancelToken = NEVER_CANCELLED
    ) -> None:
        """Reuse the saved index for this KB and model version, or encode every name and build one."""
        self.kb = kb
        self.cache.clear()
        stem = self._stem = index_stem(kb.fingerprint(), self.version)
        if self.index_dir is not None and self._legacy_version:
            adopt_legacy_index(self.index_dir, index_stem(kb.fingerprint(), self._legacy_version), stem)
        if self.index_dir is not None and NameIndex.exists(self.index_dir, stem):
            try:
                loaded = NameIndex.load(self.index_dir, stem, dim=self.encoder.dim)
                self.name_index = _agreeing(loaded, kb, self.index_dir / f"{stem}.json")
                log.info(
                    "loaded name index %s (%d names%s)",
                    stem,
                    self.name_index.visible_count(),
                    f", {len(loaded) - loaded.visible_count()} withdrawn rows hidden"
                    if loaded.hidden is not None
                    else "",
                )
                return
            except ModelError as exc:  # damaged, truncated, crafted: never fatal, rebuilt from the KB
                log.warning("%s; rebuilding the name index", exc)
        rows = list(kb.names)
        self.name_index = self.build_index(rows, progress=progress, cancel=cancel)
        self.builds += 1
        log.info("built %s name index over %d names", self.name_index.kind, len(rows))
        self._save(stem)

    def build_index(
        self,
        rows: Sequence[NameEntry],
        *,
        progress: ProgressFn = no_progress,
        cancel: CancelToken = NEVER_CANCELLED,
        **options,
    ) -> NameIndex:
        """Encode `rows` (in parallel processes when there are many and the model has a folder) into one
        index, streamed so a compressed index never holds every float. `options` go to `build_streaming`."""
        from core.retrieve.index_build import build_streaming
        from core.retrieve.parallel_encode import (
            PARALLEL_MIN_NAMES,
            ParallelEncoder,
            default_workers,
            serial_chunks,
        )

        workers = self.encode_workers
        if workers is None:  # processes of 2 threads each; on 2 cores one process of 2 threads was as fast
            workers = default_workers() // 2 if len(rows) >= PARALLEL_MIN_NAMES else 1
        if (workers <= 1 and self.encode_engine == "local") or self.model_folder is None:
            chunks = serial_chunks(self.encoder, cancel=cancel)
            index, report = build_streaming(
                rows,
                chunks,
                self.encoder.dim,
                kind=self.index_kind,
                progress=progress,
                cancel=cancel,
                **options,
            )
        else:
            with ParallelEncoder(
                self.model_folder,
                workers=workers,
                engine=self.encode_engine,
                backend=self.encoder.backend,
                threads_per_worker=max(1, min(self.encoder.threads, default_workers() // workers)),
                cancel=cancel,
            ) as parallel:
                index, report = build_streaming(
                    rows,
                    parallel.encode_chunks,
                    self.encoder.dim,
                    kind=self.index_kind,
                    progress=progress,
                    cancel=cancel,
                    **options,
                )
        log.info("name index build times (s): %s", report.seconds)
        return index

    def _save(self, stem: str) -> bool:
        """Save the index for the next run; a failed write (disk full) costs a rebuild then, not this run."""
        if self.index_dir is None or self.name_index is None:
            return False
        try:
            self.name_index.save(self.index_dir, stem)
        except CuralinkError as exc:
            log.warning("%s; linking goes on with the index in memory, it is rebuilt next time", exc)
            return False
        return True

    def add_names(self, entries: Sequence[NameEntry], *, drop_superseded: bool = False) -> None:
        """New synonyms (already added to the KB with `KnowledgeBase.add_names`) join the index in place:
        only they are encoded, appended, and the pair saved under the KB's new fingerprint.
        `drop_superseded`: the names are in the store now, so the saved index without them is deleted."""
        if self.name_index is None or self.kb is None:
            raise ModelError("add_names before index(kb)")
        if not entries:
            return
        self.cache.clear()
        self.name_index.add(self.encoder.encode([e.name for e in entries]), list(entries))
        self._save_for_kb(drop_superseded)

    def withdraw_names(self, entries: Sequence[NameEntry], *, drop_superseded: bool = False) -> int:
        """Names taken out of the KB since loading (an undone curator link) stop being found at once:
        their rows are hidden from every search, not re-encoded, and the index is saved with its hidden
        rows under the KB's new fingerprint, so the next start loads it instead of rebuilding (a full
        build drops hidden rows). `drop_superseded`: the store no longer holds the names, so the saved
        index that still shows them is deleted. Returns the rows newly hidden."""
        if self.name_index is None or self.kb is None:
            raise ModelError("withdraw_names before index(kb)")
        rows, codes = self.name_index.rows, self.name_index.codes
        wanted: dict[str, set[str]] = {}
        for entry in entries:
            wanted.setdefault(entry.concept_id, set()).add(entry.name)
        code_of = {
            concept_id: code for code, concept_id in enumerate(codes.concept_ids) if concept_id in wanted
        }
        matching = [
            row
            for concept_id, code in code_of.items()
            for row in np.flatnonzero(np.asarray(codes.codes) == code).tolist()
            if rows[row].name in wanted[concept_id]
        ]
        count = self.name_index.hide(matching)
        if count:
            self.cache.clear()
            self._save_for_kb(drop_superseded)
        return count

    def _save_for_kb(self, drop_superseded: bool) -> None:
        """Save the changed index under the KB's fingerprint now; `drop_superseded` deletes the one saved
        for the KB as it was (the store has moved on from it)."""
        stem = index_stem(self.kb.fingerprint(), self.version)
        if self._save(stem) and drop_superseded and self._stem and self._stem != stem:
            _remove_index(self.index_dir, self._stem)
        self._stem = stem

    def retrieve(self, mentions: Sequence[str], k: int = 64) -> list[list[Candidate]]:
        if self.name_index is None or self.kb is None:
            raise ModelError("retrieve before index(kb)")
        if not mentions:
            return []
        keys = [self._key(m) for m in mentions]
        answers: dict[str, list[Candidate]] = {}
        missing: list[str] = []
        for key in dict.fromkeys(keys):
            cached = self.cache.get(key, k)
            if cached is None:
                missing.append(key)
            else:
                answers[key] = cached
        if missing:
            # keys are already normalised when the model normalises, and normalising twice is a no-op
            vectors = self.encoder.encode(missing)
            index = self.name_index
            found = search_concepts(
                self.kb, index.rows, index.search, vectors, k, index.codes, hidden=index.hidden
            )
            for key, candidates in zip(missing, found):
                answers[key] = candidates
                self.cache.put(key, k, candidates)
        return [list(answers[key]) for key in keys]

    def _key(self, mention: str) -> str:
        """Strings the encoder cannot tell apart share one cache entry."""
        return normalize_name(mention) if self.encoder.model.config.normalize_text else mention


def _agreeing(index: NameIndex, kb: KnowledgeBase, sidecar: Path) -> NameIndex:
    """The loaded index if its name rows, less the hidden ones, are exactly the KB's names (else a sidecar
    from elsewhere would link mentions to names the KB does not hold)."""

    def key(entry: NameEntry) -> tuple[str, str]:
        return entry.concept_id, entry.name

    visible = index.visible_count()
    same = same_rows(index.rows, index.hidden, kb.names) if isinstance(index.rows, NameRows) else None
    if same is None:
        same = visible == len(kb.names) and (
            all(a == b for a, b in zip(map(key, index.visible_rows()), map(key, kb.names)))  # built and
            # extended in the KB's order (compared as they stream: no list of a UMLS-size KB's rows)
            or sorted(map(key, index.visible_rows())) == sorted(map(key, kb.names))
        )
    if not same:
        raise IndexDamaged(
            f"{sidecar}: its {visible} name rows are not the knowledge base's {len(kb.names)} names"
        )
    return index


def _remove_index(folder: Path | None, stem: str) -> None:
    """Delete a superseded index (sidecar first, so a half-removed index never loads)."""
    if folder is None:
        return
    for suffix in INDEX_SUFFIXES:
        try:
            (folder / f"{stem}{suffix}").unlink(missing_ok=True)
        except OSError as exc:  # a read-only copy: housekeeping prunes it later
            log.warning("%s: could not remove the superseded index %s (%s)", folder, stem, exc)
