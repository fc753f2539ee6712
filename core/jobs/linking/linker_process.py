"""The project's `Linker` in a child process (core/child_process.py says why), behind the methods the
desk's link service calls on a `Linker`: load, link some documents, find mentions in raw text,
learn from decisions, re-suggest some mentions.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from core.child_process import Child, EventToken, answer, child_logging, progress_to
from core.errors import CuralinkError
from core.progress import NEVER_CANCELLED, CancelToken, ProgressCallback, no_progress

if TYPE_CHECKING:
    from core.store.project import Project

log = logging.getLogger(__name__)


def _serve(conn, cancel_event, project_path: str, options: dict) -> None:
    """The child's loop: answer requests until "stop" (or the parent's end of the pipe closes)."""
    child_logging(conn)
    import torch

    from core.jobs.linking.suggestions import ProjectLinker
    from core.store import Project

    torch.set_num_threads(int(options.pop("threads", 1)))
    cancel = EventToken(cancel_event)
    progress = progress_to(conn)
    project = Project.open(Path(project_path))
    state: dict = {"linker": None, "mentions": {}}

    def loaded():
        if state["linker"] is None:
            state["linker"] = ProjectLinker.for_project(project, progress=progress, cancel=cancel, **options)
        return state["linker"]

    def handle(request: dict) -> object:
        op = request["op"]
        if op == "reset":
            state["linker"] = None
            return None
        if op == "mentions":  # a mention set sent once, named by a key in later requests
            state["mentions"][request["key"]] = frozenset(request["ids"])
            return None
        linker = loaded()
        if op == "load":
            result: object = None
        elif op == "link":
            key = request.get("mentions")
            result = linker.link_project(
                project,
                split=request.get("split"),
                ids=request.get("ids"),
                mentions=state["mentions"].get(key) if key else None,
                batch_documents=request.get("batch_documents", 32),
                progress=progress,
                cancel=cancel,
            )
        elif op == "detect":
            result = linker.find_mentions(
                project,
                request["ids"],
                split=request.get("split"),
                include_gold=request.get("include_gold", False),
                mention_type=request.get("mention_type"),
                progress=progress,
                cancel=cancel,
            )
        elif op == "learn":
            result = linker.learn(project, request["ids"])
        elif op == "resuggest":
            result = linker.resuggest(
                project,
                request["ids"],
                on_stored=lambda doc_ids: conn.send({"stored": list(doc_ids)}),
                cancel=cancel,
            )
        else:
            raise CuralinkError(f"unknown request {op!r}")
        return result, _describe(linker)

    try:
        while True:
            try:
                request = conn.recv()
            except EOFError:
                return
            if request["op"] == "stop":
                return
            answer(conn, lambda request=request: handle(request))
    finally:
        project.close()


def _describe(linker) -> dict:
    return {
        "device_description": linker.device_description,
        "retriever_version": linker.retriever_version,
        "ranked_version": linker.ranked_version,
        "ranks": linker.ranks,
    }


class LinkerProcess:
    """A `Linker` for `project_path` running in a child process. Call it from one thread at a time (the
    desk's link service has one worker); `close()` ends the child."""

    def __init__(
        self,
        project_path: Path,
        *,
        device: str = "auto",
        candidates: int = 16,
        use_reranker: bool = True,
        threads: int = 1,
        progress: ProgressCallback = no_progress,
        cancel: CancelToken = NEVER_CANCELLED,
    ):
        self.options = (device, candidates, use_reranker)
        self.project_path = Path(project_path)  # where the child opened the project
        options = {
            "device": device,
            "candidates": candidates,
            "use_reranker": use_reranker,
            "threads": threads,
        }
        self._child = Child(_serve, (str(project_path), options), what="linking")
        self._mentions: tuple[int, int] | None = None  # (id of the set sent, its key)
        self._next_key = 1
        self.device_description = ""
        self.retriever_version = ""
        self.ranked_version = ""
        self.ranks = False
        try:
            self._call({"op": "load"}, progress=progress, cancel=cancel)
        except BaseException:
            self.close()
            raise

    @property
    def pid(self) -> int | None:
        return self._child.pid

    def _call(
        self,
        request: dict,
        *,
        progress: ProgressCallback = no_progress,
        cancel: CancelToken = NEVER_CANCELLED,
        on_stored: Callable[[list[str]], None] | None = None,
    ) -> object:
        def notice(kind: str, value: object) -> None:
            if kind == "stored" and on_stored is not None:
                on_stored(value)

        outcome = self._child.call(request, progress=progress, cancel=cancel, on_notice=notice)
        if isinstance(outcome, tuple):
            outcome, described = outcome
            self.__dict__.update(described)
        return outcome

    def link_project(
        self,
        project: Project | None = None,
        *,
        split: str | None = None,
        ids: Sequence[str] | None = None,
        mentions: Collection[int] | None = None,
        batch_documents: int = 32,
        progress: ProgressCallback = no_progress,
        cancel: CancelToken = NEVER_CANCELLED,
    ):
        """`Linker.link_project` in the child (`project` is the child's own: the argument is ignored).
        A mention set is sent once and named in later requests (a relink passes the same set per batch)."""
        key = None
        if mentions is not None:
            if self._mentions is None or self._mentions[0] != id(mentions):
                key, self._next_key = self._next_key, self._next_key + 1
                self._call({"op": "mentions", "key": key, "ids": list(mentions)})
                self._mentions = (id(mentions), key)
            key = self._mentions[1]
        request = {
            "op": "link",
            "split": split,
            "ids": list(ids) if ids is not None else None,
            "mentions": key,
            "batch_documents": batch_documents,
        }
        return self._call(request, progress=progress, cancel=cancel)

    def find_mentions(
        self,
        project: Project,
        ids: Sequence[str] | None,
        *,
        split: str | None = None,
        include_gold: bool = False,
        mention_type: str | None = None,
        progress: ProgressCallback = no_progress,
        cancel: CancelToken = NEVER_CANCELLED,
    ):
        """`ProjectLinker.find_mentions` in the child (`project` is the child's own: the argument is ignored)."""
        request = {
            "op": "detect",
            "ids": None if ids is None else list(ids),
            "split": split,
            "include_gold": include_gold,
            "mention_type": mention_type,
        }
        return self._call(request, progress=progress, cancel=cancel)

    def resuggest(
        self,
        project: Project,
        mention_ids: Sequence[int],
        *,
        on_stored: Callable[[list[str]], None] | None = None,
        cancel: CancelToken = NEVER_CANCELLED,
    ) -> int:
        return int(
            self._call({"op": "resuggest", "ids": list(mention_ids)}, cancel=cancel, on_stored=on_stored)
        )

    def learn(self, project: Project, mention_ids: Sequence[int]):
        """`Linker.learn` in the child (`project` is the child's own: the argument is ignored)."""
        return self._call({"op": "learn", "ids": list(mention_ids)})

    def reload(
        self, *, progress: ProgressCallback = no_progress, cancel: CancelToken = NEVER_CANCELLED
    ) -> None:
        """Load the models in force again (after a promotion, a retrain, a KB import) in the same child."""
        self._call({"op": "reset"})
        self._mentions = None
        self._call({"op": "load"}, progress=progress, cancel=cancel)

    def alive(self) -> bool:
        return self._child.alive()

    def close(self) -> None:
        self._child.close()
