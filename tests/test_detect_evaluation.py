"""A chemicals + diseases project on real BioRED abstracts and real MeSH names: `link --detect` tags both
types from raw text in one pass, and `evaluate detect` reports exactly what a score of the suggestions
`link --detect` stores gives (computed here by set arithmetic from the corpus file, not by the code's
metrics)."""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest
from sqlalchemy import select

from app.cli import main
from core.formats import read_corpus
from core.kb import load_kb
from core.store import Project
from core.store.schema import DocumentRow, MentionRow, SuggestionRow
from core.text.abbreviations import find_abbreviations
from core.text.normalize import normalize_name

TRAIN = slice(0, 40)
EVALUATED = slice(40, 52)
DISTRACTORS = 400  # MeSH rows of other concepts (anatomy, organisms, chemicals, diseases), in file order


def _documents(shared_data: Path):
    return list(read_corpus(shared_data / "biored" / "BioRED_TrainDev.PubTator", "pubtator"))


@pytest.fixture(scope="module")
def template(shared_data: Path, tmp_path_factory) -> Path:
    """KB: the MeSH rows of every chemical and disease the 52 abstracts name, plus distractors; 40
    abstracts as train gold; a retriever trained one epoch."""
    from core.jobs.models.retriever import train_retriever

    documents = _documents(shared_data)
    wanted = {
        part
        for d in documents[: EVALUATED.stop]
        for m in d.mentions
        if m.type in ("Chemical", "Disease")
        for part in re.split(r"[,;|+]", m.concept_id)
    }
    gene_names = {
        normalize_name(m.text) for d in documents[: EVALUATED.stop] for m in d.mentions if m.type == "Gene"
    }
    lines = (
        (shared_data / "vocab" / "mesh-dhimmel" / "tree-numbers.tsv").read_text(encoding="utf-8").splitlines()
    )
    kept = (
        [lines[0]]
        + [line for line in lines[1:] if line.split("\t")[0] in wanted]
        # and the descriptors named like the genes and proteins the corpus annotates (insulin, leptin)
        + [line for line in lines[1:] if normalize_name(line.split("\t")[1]) in gene_names]
        + lines[1 : DISTRACTORS + 1]
    )
    folder = tmp_path_factory.mktemp("biored")
    kb_file = folder / "mesh-slice.tsv"
    kb_file.write_text("\n".join(dict.fromkeys(kept)) + "\n", encoding="utf-8")
    path = folder / "template"
    with Project.create(path) as project:
        project.kb.import_concepts(load_kb(kb_file, "tsv"))
        project.documents.import_documents(documents[TRAIN], split="train")
        train_retriever(project, epochs=1, patience=0)
    return path


def _copy(template: Path, tmp_path: Path, name: str) -> Path:
    destination = tmp_path / name
    shutil.copytree(template, destination, ignore=shutil.ignore_patterns("*-wal", "*-shm"))
    return destination


def _raw_project(template: Path, tmp_path: Path, documents) -> Path:
    path = _copy(template, tmp_path, "raw")
    with Project.open(path) as project:
        project.documents.import_documents([d.with_mentions([]) for d in documents], split="test")
    return path


def _stored(path: Path) -> list[tuple[str, int, int, str, str]]:
    """(doc, start, end, type, top suggestion) of every detected mention, straight from the tables."""
    with Project.open(path) as project, project.session() as session:
        rows = session.execute(
            select(DocumentRow.external_id, MentionRow.id, MentionRow.start, MentionRow.end, MentionRow.type)
            .join(DocumentRow, DocumentRow.id == MentionRow.document_id)
            .where(MentionRow.origin == "detected", MentionRow.removed.is_(False))
        ).all()
        top: dict[int, tuple[int, str]] = {}
        for mention_id, rank, concept_id in session.execute(
            select(SuggestionRow.mention_id, SuggestionRow.rank, SuggestionRow.concept_id)
        ):
            if mention_id not in top or rank < top[mention_id][0]:
                top[mention_id] = (rank, concept_id)
    return [
        (doc, start, end, kind, top.get(mention_id, (0, ""))[1]) for doc, mention_id, start, end, kind in rows
    ]


def test_link_detect_tags_chemicals_and_diseases_in_one_pass(
    template: Path, shared_data: Path, tmp_path: Path
) -> None:
    documents = _documents(shared_data)[EVALUATED]
    path = _raw_project(template, tmp_path, documents)
    assert main(["-p", str(path), "link", "--detect", "--split", "test"]) == 0
    stored = _stored(path)
    assert Counter(kind for *_, kind, _ in stored).keys() == {"Chemical", "Disease"}
    gold = {(d.doc_id, m.start, m.end): m.type for d in documents for m in d.mentions}
    matched = Counter((gold[(doc, s, e)], kind) for doc, s, e, kind, _ in stored if (doc, s, e) in gold)
    for kind in ("Chemical", "Disease"):
        assert matched[(kind, kind)] >= 5, f"too few {kind} spans found with their type: {matched}"
    right = sum(n for (g, k), n in matched.items() if g == k)
    named = sum(n for (g, _), n in matched.items() if g in ("Chemical", "Disease"))
    assert right >= 0.9 * named, f"types disagree with the corpus: {matched}"
    # MeSH's proteins (D12.776) are chemicals by route too, but this corpus annotates them as genes
    # (NCBI Gene ids): a name of the gene route is not tagged as a chemical (peptide hormones such as
    # ghrelin, outside that branch, cannot be told apart by MeSH and still are)
    rows = (
        (shared_data / "vocab" / "mesh-dhimmel" / "tree-numbers.tsv").read_text(encoding="utf-8").splitlines()
    )
    protein_names = {
        normalize_name(row.split("\t")[1])
        for row in rows[1:]
        if row.split("\t")[2].startswith(("D12.776", "G05.360.340"))
    }
    texts = {(d.doc_id, m.start, m.end): m.text for d in documents for m in d.mentions}
    as_chemical = [
        texts[(doc, s, e)]
        for doc, s, e, kind, _ in stored
        if gold.get((doc, s, e)) == "Gene"
        and kind == "Chemical"
        and normalize_name(texts[(doc, s, e)]) in protein_names
    ]
    assert not as_chemical, f"genes of the gene route tagged as chemicals: {as_chemical}"
    # a short form the text defines is a mention of its long form's type
    detected = {(doc, s, e): kind for doc, s, e, kind, _ in stored}
    pairs = 0
    for d in documents:
        for abbreviation in find_abbreviations(d.text):
            long_type = detected.get((d.doc_id, abbreviation.long_span.start, abbreviation.long_span.end))
            if long_type is None:
                continue
            pairs += 1
            span = (d.doc_id, abbreviation.short_span.start, abbreviation.short_span.end)
            assert detected.get(span) == long_type, f"{abbreviation} in {d.doc_id}"
    assert pairs >= 2

    # --type narrows to one type
    narrowed = _raw_project(template, tmp_path / "narrowed", documents[:4])
    assert main(["-p", str(narrowed), "link", "--detect", "--split", "test", "--type", "Chemical"]) == 0
    assert {kind for *_, kind, _ in _stored(narrowed)} == {"Chemical"}


def _prf(gold: set, predicted: set) -> tuple[float, float, float]:
    hits = len(gold & predicted)
    precision = hits / len(predicted) if predicted else 0.0
    recall = hits / len(gold) if gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return round(100 * precision, 2), round(100 * recall, 2), round(100 * f1, 2)


def test_evaluate_detect_equals_a_score_of_the_stored_suggestions(
    template: Path, shared_data: Path, tmp_path: Path, capsys
) -> None:
    documents = _documents(shared_data)[EVALUATED]
    raw = _raw_project(template, tmp_path, documents)
    assert main(["-p", str(raw), "link", "--detect", "--split", "test"]) == 0
    stored = _stored(raw)

    with_gold = _copy(template, tmp_path, "gold")
    with Project.open(with_gold) as project:
        project.documents.import_documents(documents, split="test")
    capsys.readouterr()
    assert main(["-p", str(with_gold), "evaluate", "detect", "--split", "test", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    (row,) = [r for r in report["detectors"] if r["link_detect"]]
    assert row["name"].startswith("link --detect: dictionary + linker")

    # gold: every mention of the corpus, its first id; predicted: each stored mention, its top suggestion
    gold = [
        (d.doc_id, m.start, m.end, m.type, re.split(r"[,;|+]", m.concept_id)[0])
        for d in documents
        for m in d.mentions
    ]
    assert len({g[:3] for g in gold}) == len(gold), "no span is annotated twice in these abstracts"

    def score(gold_rows, predicted_rows) -> dict:
        spans = _prf({g[:3] for g in gold_rows}, {p[:3] for p in predicted_rows})
        linked = _prf({(*g[:3], g[4]) for g in gold_rows}, {(*p[:3], p[4]) for p in predicted_rows if p[4]})
        return {"spans": spans, "linked": linked}

    def reported(block: dict) -> tuple[float, float, float]:
        return block["precision"], block["recall"], block["f1"]

    expected = score(gold, stored)
    assert reported(row["strict"]) == expected["spans"]
    assert reported(row["end_to_end_strict"]) == expected["linked"]
    assert expected["linked"][2] > 0, "a score of zero would agree with anything"
    for kind in ("Chemical", "Disease"):
        typed = score([g for g in gold if g[3] == kind], [p for p in stored if p[3] == kind])
        block = row["types"][kind]
        assert reported(block["strict"]) == typed["spans"]
        assert reported(block["end_to_end_strict"]) == typed["linked"]
        assert block["detected"] == sum(p[3] == kind for p in stored)
        found = {p[:3] for p in stored}
        of_kind = [g[:3] for g in gold if g[3] == kind]
        assert block["span_recall"] == round(100 * sum(g in found for g in of_kind) / len(of_kind), 2)


def test_the_span_model_in_force_leaves_its_gaps_to_the_dictionary(
    template: Path, shared_data: Path, tmp_path: Path, tiny_bert: Path, capsys
) -> None:
    """`link --detect` with a span model stores its spans and, where it found nothing, the spans the
    project's dictionary finds; evaluate detect's product row is that union, and a row shows the span
    model alone. Expected sets are computed here from each detector alone."""
    from core.project_detector import dictionary_for_project, load_span_detector

    documents = _documents(shared_data)[EVALUATED]
    trained = _copy(template, tmp_path, "trained")
    args = ["-p", str(trained), "train", "detector", "--base-model", str(tiny_bert), "--device", "cpu"]
    assert main([*args, "--epochs", "1", "--promote", "always"]) == 0
    with Project.open(trained) as project:
        folder = Path(project.models.active_model("detector").path)
    # a strict threshold leaves the untrained-size model gaps to fill
    config = json.loads((folder / "detector.json").read_text())
    (folder / "detector.json").write_text(json.dumps({**config, "threshold": 0.9}))

    raw = _raw_project(trained, tmp_path, documents)
    capsys.readouterr()
    assert main(["-p", str(raw), "link", "--detect", "--split", "test"]) == 0
    assert "the dictionary where it finds none" in " ".join(capsys.readouterr().out.split())
    stored = {(doc, s, e, kind) for doc, s, e, kind, _ in _stored(raw)}

    with Project.open(raw) as project:
        kb = project.kb.knowledge_base()
        texts = [d.with_mentions([]) for d in project.documents.documents("test")]
        alone = load_span_detector(project, kb=kb, device="cpu").detect(texts)
        dictionary = dictionary_for_project(project, kb).detector.detect(texts)
    own = {(d.doc_id, m.start, m.end, m.type) for d, found in zip(texts, alone, strict=True) for m in found}
    filling = {
        (d.doc_id, m.start, m.end, m.type)
        for d, found, spans in zip(texts, dictionary, alone, strict=True)
        for m in found
        if not any(m.start < x.end and x.start < m.end for x in spans)
    }
    assert filling, "the dictionary filled no gap: nothing to test"
    assert stored == own | filling

    with_gold = _copy(trained, tmp_path, "gold")
    with Project.open(with_gold) as project:
        project.documents.import_documents(documents, split="test")
    capsys.readouterr()
    assert main(["-p", str(with_gold), "evaluate", "detect", "--split", "test", "--json"]) == 0
    rows = {row["name"]: row for row in json.loads(capsys.readouterr().out)["detectors"]}
    assert rows["span model v1"]["mentions"] == len(own | filling)
    assert rows["span model v1 alone"]["mentions"] == len(own)


def test_a_span_model_that_links_worse_than_the_dictionary_is_kept_as_a_candidate(
    template: Path, shared_data: Path, tmp_path: Path, tiny_bert: Path, capsys
) -> None:
    """`train detector` puts the span model in force only if `link --detect` links the held-out
    documents at least as well with it as with the dictionary alone; a tiny random-weight model does
    not, so the dictionary stays the detector and the CLI says why."""
    trained = _copy(template, tmp_path, "trained")
    args = ["-p", str(trained), "train", "detector", "--base-model", str(tiny_bert), "--device", "cpu"]
    capsys.readouterr()
    assert main([*args, "--epochs", "1"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    with Project.open(trained) as project:
        assert project.models.active_model("detector") is None
        (version,) = project.models.model_versions("detector")
        metrics = json.loads(version.metrics_json)
    scores = metrics["end_to_end_against_dictionary"]
    assert scores["dictionary"] > scores["span model"] >= 0, scores
    assert "kept as a candidate (the dictionary linked its 4 held-out documents better" in out, out
    assert f"{scores['dictionary']:.2f} against {scores['span model']:.2f}" in out
    # the speed bench names the candidate instead of asking to train a detector that exists
    assert main(["-p", str(trained), "bench", "detect", "--split", "train", "--documents", "2"]) != 0
    said = capsys.readouterr()
    said = " ".join((said.out + said.err).split())
    assert f"detector {version.version} is a candidate" in said and "promote detector" in said, said

    documents = _documents(shared_data)[EVALUATED][:3]
    raw = _raw_project(trained, tmp_path, documents)
    capsys.readouterr()
    assert main(["-p", str(raw), "link", "--detect", "--split", "test"]) == 0
    assert "with the dictionary" in " ".join(capsys.readouterr().out.split())
