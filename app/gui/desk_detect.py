"""Finding mentions in raw text from the desk: the open document, or every document that has none yet.

The link service tags them in the background (the detector in force per type: the tagger, the span
model or the KB dictionary, as `curalink link --detect` uses), the window shows the new mentions at
once, unsuggested, and their suggestions as each document is linked. Detected spans keep their probability; the abstract
draws the uncertain ones apart (states.LOW_SPAN_PROBABILITY) until a curator decides them.
"""

from __future__ import annotations

from app.gui.desk_host import DeskHost
from app.gui.desk_linking import BackgroundLinking
from app.gui.desk_model import DeskModel
from app.gui.document_queue import DocumentQueue
from app.gui.workers import Job, LinkService
from core.jobs.linking.detect_targets import SKIP_GOLD, SKIP_HAS_MENTIONS, SKIP_OTHER_SPLIT

SKIP_REASONS = {
    SKIP_GOLD: "annotated by a gold file (the command line's --include-gold adds to them)",
    SKIP_HAS_MENTIONS: "already have mentions",
    SKIP_OTHER_SPLIT: "in another split",
}


def found_message(found) -> str:
    """One status-bar line: what was found, by which detector (its short name: the bar cuts long lines),
    and what was left alone and why, first when nothing was tagged."""
    detector = found.detector.split(" (")[0] if found.detector else "detector"
    head = f"found {found.added} mention(s) in {found.documents} document(s) with the {detector}"
    skipped = [
        f"{len(ids)} document(s) skipped: {SKIP_REASONS.get(reason, reason)}"
        for reason, ids in found.skipped.items()
    ]
    parts = [head, *skipped] if found.documents else [*skipped, head]
    if found.overlapping:
        parts.append(f"{found.overlapping} span(s) overlapping stored or deleted mentions left out")
    return "; ".join(parts)


class FindMentions:
    """Finding mentions for the window (`host`) through the link service, shown in the open document
    (`model`) as they are stored; the job's progress goes through `links`."""

    def __init__(
        self,
        host: DeskHost,
        model: DeskModel,
        service: LinkService,
        queue: DocumentQueue,
        links: BackgroundLinking,
    ):
        self.host, self.model, self.service, self.queue, self.links = host, model, service, queue, links
        service.mentionsFound.connect(self._on_mentions_found)

    def find_mentions_here(self) -> Job | None:
        if self.model.doc is None:
            self.host.statusBar().showMessage("no document open", 3000)
            return None
        return self._find_mentions([self.model.doc.doc_id], "finding mentions in this document")

    def find_mentions_in_raw(self) -> Job | None:
        """Every queue document without a mention (raw text), the open one first."""
        ids = [e.doc_id for e in self.queue.model.entries if e.mentions == 0]
        if not ids:
            self.host.statusBar().showMessage("every document already has mentions", 4000)
            return None
        if self.model.doc is not None and self.model.doc.doc_id in ids:
            ids.remove(self.model.doc.doc_id)
            ids.insert(0, self.model.doc.doc_id)
        return self._find_mentions(ids, f"finding mentions in {len(ids)} document(s)")

    def _find_mentions(self, ids: list[str], title: str) -> Job:
        self.links.models_loading()
        self.model.linking.update(ids)
        job = self.service.find_mentions(ids, name=title)
        self.links.track(job, title)
        job.signals.returned.connect(
            lambda found: self.host.statusBar().showMessage(found_message(found), 15000)
        )
        for signal in (job.signals.returned, job.signals.errored, job.signals.cancelled):
            signal.connect(lambda *_args, asked=tuple(ids): self.model.linking.difference_update(asked))
        return job

    def _on_mentions_found(self, found_for: tuple) -> None:
        """New mentions are in the store: show them now (unsuggested) in the open document; the queue
        rows follow as each document is linked."""
        found, asked = found_for
        if found.added and self.model.doc is not None and self.model.doc.doc_id in found.tagged(asked):
            self.host.document.open_document(
                self.model.doc.doc_id, mention_id=self.model.current_mention_id()
            )
