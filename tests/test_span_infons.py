"""A detected mention's span-derived infons (dictionary ids, probability) describe the text it was
found with: once a curator moves the span they are neither exported nor shown, and an undo that moves it
back brings them back (issue 23 item 8: "an edited span exports its old dictionary_ids")."""

from __future__ import annotations

import json

from core.documents import Document, Mention, Passage
from core.formats import FormatReport, write_corpus
from core.store.curation import curated_documents

TEXT = "Patients with hereditary breast cancer were studied."


def _mention(project):
    start = TEXT.index("breast cancer")
    detected = Mention(
        start,
        start + len("breast cancer"),
        "breast cancer",
        "Disease",
        origin="detected",
        infons={"dictionary_ids": "D001943", "probability": 0.62, "source": "dictionary"},
    )
    project.documents.import_documents([Document("777", (Passage(0, TEXT, "title"),), (detected,))])
    ((doc, ids),) = project.documents.documents_with_mention_ids(ids=["777"])
    return doc.mentions[0], ids[0]


def _exported(project, tmp_path) -> dict:
    out = tmp_path / "out.bioc.json"
    write_corpus(curated_documents(project), out, "bioc-json", report=FormatReport())
    collection = json.loads(out.read_text(encoding="utf-8"))
    document = next(d for d in collection["documents"] if d["id"] == "777")
    return document["passages"][0]["annotations"][0]


def test_a_moved_span_drops_its_detected_infons_and_an_undo_brings_them_back(demo, tmp_path):
    mention, mention_id = _mention(demo)
    assert mention.infons["dictionary_ids"] == "D001943"
    start = TEXT.index("hereditary")
    old = demo.documents.set_mention_span(mention_id, start, mention.end, curator="tester")

    ((doc, _ids),) = demo.documents.documents_with_mention_ids(ids=["777"])
    moved = doc.mentions[0]
    assert moved.text == "hereditary breast cancer"
    assert "dictionary_ids" not in moved.infons and "probability" not in moved.infons
    assert moved.infons["source"] == "dictionary"  # not about the span: kept
    annotation = _exported(demo, tmp_path)
    assert annotation["text"] == "hereditary breast cancer"
    assert "dictionary_ids" not in annotation["infons"] and "detected_span" not in annotation["infons"]

    demo.documents.set_mention_span(mention_id, *old, curator="tester")  # what an undo does
    ((doc, _ids),) = demo.documents.documents_with_mention_ids(ids=["777"])
    assert doc.mentions[0].infons == mention.infons
    assert _exported(demo, tmp_path)["infons"]["dictionary_ids"] == "D001943"
