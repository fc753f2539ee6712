"""Type routing on real MeSH tree numbers (dhimmel's MeSH 2015 tables) and on NCBI-disease with MEDIC.

Expectations come from the tree-number file read here with the csv module, not from the router.
"""

from __future__ import annotations

import csv
import json
import logging
from pathlib import Path

import pytest

from app.cli import EXIT_ERROR, main
from core.detect.dictionary import DictionaryDetector
from core.documents import Document, Mention, Passage
from core.errors import CuralinkError
from core.formats import read_corpus
from core.jobs.linking.suggestions import link_project
from core.kb import load_kb
from core.kb.concept import Concept
from core.kb.knowledge_base import KnowledgeBase
from core.kb.routing import SETTING_KEY, TypeRouter, parse_route, route_table, set_route
from core.pipeline import Linker
from core.retrieve.routed import retrieve_routed
from core.retrieve.tfidf import TfidfRetriever
from core.store import Project

K = 16
# (text, type): strings whose nearest MeSH names cross types (lead / lead poisoning, insulin / insulinoma)
QUERIES = [
    ("lead", "Chemical"),
    ("lead poisoning", "Chemical"),
    ("lead", "Disease"),
    ("insulin", "Disease"),
    ("insulin", "Chemical"),
    ("diabetes", "Chemical"),
    ("breast cancer", "SpecificDisease"),
    ("tamoxifen", "DiseaseClass"),
    ("BRCA1 breast cancer gene", "Gene"),
    ("tumor suppressor p53 colon cancer", "GeneOrGeneProduct"),
]


@pytest.fixture(scope="module")
def mesh_dir(vocab_dir: Path) -> Path:
    folder = vocab_dir / "mesh-dhimmel"
    if not (folder / "tree-numbers.tsv").is_file():
        pytest.skip(f"{folder}/tree-numbers.tsv not found")
    return folder


@pytest.fixture(scope="module")
def branches(mesh_dir: Path) -> dict[str, set[str]]:
    """Descriptor ids per route, straight from the file's tree numbers."""
    trees: dict[str, set[str]] = {}
    with open(mesh_dir / "tree-numbers.tsv", encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            trees.setdefault(row["mesh_id"], set()).add(row["mesh_tree_number"])

    def where(test) -> set[str]:
        return {i for i, numbers in trees.items() if any(test(n) for n in numbers)}

    return {
        "disease": where(lambda n: n[0] == "C" or n.split(".")[0] == "F03"),
        "chemical": where(lambda n: n[0] == "D"),
        "gene": where(lambda n: n.startswith(("G05.360.340", "D12.776"))),
        "D02": where(lambda n: n.split(".")[0] == "D02"),
        "all": set(trees),
    }


@pytest.fixture(scope="module")
def mesh_project(mesh_dir: Path, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("routing") / "mesh"
    with Project.create(path) as project:
        project.kb.import_concepts(load_kb(mesh_dir / "tree-numbers.tsv", "tsv"))
    return path


@pytest.fixture(scope="module")
def mesh_kb(mesh_project: Path) -> KnowledgeBase:
    with Project.open(mesh_project) as project:
        return project.kb.knowledge_base()


@pytest.fixture(scope="module")
def tfidf(mesh_kb: KnowledgeBase) -> TfidfRetriever:
    retriever = TfidfRetriever()
    retriever.index(mesh_kb)
    return retriever


def _slice(path: Path, folder: Path, lines: int) -> Path:
    """The header and the first `lines` rows of a shared file, written to the test's folder."""
    with open(path, encoding="utf-8") as handle:
        head = [line for _, line in zip(range(lines + 1), handle)]
    out = folder / path.name
    out.write_text("".join(head), encoding="utf-8")
    return out


def _document(queries: list[tuple[str, str]]) -> Document:
    text, mentions, cursor = "", [], 0
    for mention_text, mention_type in queries:
        mentions.append(Mention(cursor, cursor + len(mention_text), mention_text, mention_type))
        text += mention_text + ". "
        cursor = len(text)
    return Document("1", (Passage(0, text, "title"),), tuple(mentions))


def _expected(retriever, text: str, allowed: set[str] | None) -> list[str]:
    """The unrouted ranking (deep enough to hold k admitted concepts), filtered by the file's trees."""
    ranked = [c.concept_id for c in retriever.retrieve([text], 2000)[0]]
    return [c for c in ranked if allowed is None or c in allowed][:K]


def test_each_type_gets_only_its_branch_and_the_best_of_it(mesh_project, mesh_kb, tfidf, branches) -> None:
    with Project.open(mesh_project) as project:
        router = TypeRouter.for_project(project, mesh_kb)
    linker = Linker(tfidf, candidates=K, router=router)
    found = linker.retrieve([_document(QUERIES)])[0]
    allowed_by_type = {
        "Chemical": branches["chemical"],
        "Disease": branches["disease"],
        "SpecificDisease": branches["disease"],
        "DiseaseClass": branches["disease"],
        "Gene": branches["gene"],
        "GeneOrGeneProduct": branches["gene"],
    }
    crossed = 0
    for (text, mention_type), candidates in zip(QUERIES, found, strict=True):
        allowed = allowed_by_type[mention_type]
        ids = [c.concept_id for c in candidates]
        assert len(ids) == K, (text, mention_type)
        assert set(ids) <= allowed, (text, mention_type, set(ids) - allowed)
        assert ids == _expected(tfidf, text, allowed), (text, mention_type)  # routing loses no recall
        crossed += bool(set(_expected(tfidf, text, None)) - allowed)
        if mention_type.startswith("Gene"):
            assert not set(ids) & branches["disease"], "a gene mention got a disease suggestion"
    assert crossed >= 8, "the queries must be ones the unrouted retriever answers across types"
    assert not router.unrouted and not router.warnings


def test_over_fetch_widens_until_a_narrow_route_is_filled(mesh_kb, tfidf, branches) -> None:
    """A route holding 1 in 90 concepts still gets its full top k (several searches, each wider)."""
    narrow = {i for i in branches["all"] if i in branches["gene"] and i.endswith(("1", "7"))}
    stats: dict[str, int] = {}
    [candidates] = retrieve_routed(tfidf, ["lead poisoning"], K, narrow, concepts=len(mesh_kb), stats=stats)
    assert [c.concept_id for c in candidates] == _expected(tfidf, "lead poisoning", narrow)
    assert len(candidates) == K and stats["searches"] > 1


def test_unknown_type_is_unfiltered_and_warned_once(mesh_kb, tfidf, caplog) -> None:
    router = TypeRouter(mesh_kb)
    linker = Linker(tfidf, candidates=K, router=router)
    queries = [("lead", "Widget"), ("insulin", "Widget"), ("lead", "")]
    with caplog.at_level(logging.WARNING, logger="core.kb.routing"):
        found = linker.retrieve([_document(queries)])[0]
    for (text, _), candidates in zip(queries, found, strict=True):
        assert [c.concept_id for c in candidates] == _expected(tfidf, text, None)
    assert dict(router.unrouted) == {"Widget": 2, "": 1}
    widget = [r for r in caplog.records if "'Widget'" in r.getMessage()]
    assert len(widget) == 1 and "all concepts" in widget[0].getMessage()


def test_the_link_summary_counts_mentions_of_unrouted_types(mesh_dir, branches, tmp_path, caplog) -> None:
    queries = [("lead", "Widget"), ("insulin", "Widget"), ("lead", "Chemical"), ("lead", "Disease")]
    with Project.create(tmp_path / "p") as project:
        project.kb.import_concepts(load_kb(_slice(mesh_dir / "tree-numbers.tsv", tmp_path, 6000), "tsv"))
        project.documents.import_documents([_document(queries)])
        kb = project.kb.knowledge_base()
        retriever = TfidfRetriever()
        retriever.index(kb)
        linker = Linker(retriever, candidates=K, router=TypeRouter.for_project(project, kb))
        with caplog.at_level(logging.WARNING, logger="core.kb.routing"):
            first = link_project(project, linker)
            second = link_project(project, linker)
        assert first.unrouted == second.unrouted == {"Widget": 2}
        assert len(caplog.records) == 1 and "'Widget'" in caplog.records[0].getMessage()
        assert first.routing_warnings == [caplog.records[0].getMessage()]
        [(document, ids)] = list(project.documents.documents_with_mention_ids())
        allowed = {"Widget": None, "Chemical": branches["chemical"], "Disease": branches["disease"]}
        for mention, mention_id in zip(document.mentions, ids, strict=True):
            stored = [c.concept_id for c in project.curation.suggestions(mention_id)]
            assert stored == _expected(retriever, mention.text, allowed[mention.type]), mention.type


def test_typed_detection_tags_only_names_of_the_types_concepts(mesh_kb, branches) -> None:
    text = (
        "Lead poisoning after lead exposure; insulin and tamoxifen in breast neoplasms and diabetes mellitus."
    )
    document = Document("1", (Passage(0, text, "title"),))
    router = TypeRouter(mesh_kb)
    expected = {
        "Chemical": (["Lead", "lead", "insulin", "tamoxifen"], branches["chemical"]),
        "Disease": (["Lead poisoning", "breast neoplasms", "diabetes mellitus"], branches["disease"]),
    }
    for mention_type, (texts, allowed) in expected.items():
        detector = DictionaryDetector.from_kb(router.restricted_kb(mention_type), mention_type=mention_type)
        found = detector.detect([document])[0]
        assert [m.text for m in found] == texts, mention_type
        ids = {i for m in found for i in m.infons["dictionary_ids"].split("|")}
        assert ids <= allowed, (mention_type, ids - allowed)


def test_a_vocabulary_without_trees_turns_routing_off_with_a_warning(mesh_dir, tmp_path, caplog) -> None:
    with Project.create(tmp_path / "terms") as project:
        project.kb.import_concepts(load_kb(_slice(mesh_dir / "terms.tsv", tmp_path, 4000), "tsv"))
        kb = project.kb.knowledge_base()
        with caplog.at_level(logging.INFO, logger="core.kb.routing"):
            router = TypeRouter.for_project(project, kb)
    assert not router.active
    said = [r for r in caplog.records if "no tree numbers or semantic types" in r.getMessage()]
    # one vocabulary: nothing to route between, so it is said (info), not warned
    assert [r.levelno for r in said] == [logging.INFO] and len(router.warnings) == 1
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="core.kb.routing"):
        beside_mesh = TypeRouter(
            KnowledgeBase([*kb, Concept("X:D007854", "MESHTREES", "Lead", tree_numbers=("D01.268",))])
        )
    said = [r for r in caplog.records if "no tree numbers or semantic types" in r.getMessage()]
    assert [r.levelno for r in said] == [logging.WARNING] and beside_mesh.active
    retriever = TfidfRetriever()
    retriever.index(kb)
    queries = [("lead", "Chemical"), ("lead", "Disease"), ("BRCA1", "Gene")]
    found = Linker(retriever, candidates=K, router=router).retrieve([_document(queries)])[0]
    for (text, _), candidates in zip(queries, found, strict=True):
        assert [c.concept_id for c in candidates] == _expected(retriever, text, None)


def test_ncbi_disease_with_medic_is_unaffected(ncbi_dir, vocab_dir, caplog) -> None:
    kb = KnowledgeBase(load_kb(vocab_dir / "medic_06Jul2012.txt", "medic"))
    documents = list(read_corpus(ncbi_dir / "NCBItestset_corpus.txt", "pubtator"))[:25]
    types = {m.type for d in documents for m in d.mentions}
    assert types == {"SpecificDisease", "DiseaseClass", "Modifier", "CompositeMention"}
    retriever = TfidfRetriever()
    retriever.index(kb)
    with caplog.at_level(logging.WARNING, logger="core.kb.routing"):
        router = TypeRouter(kb)
        routed = Linker(retriever, candidates=K, router=router).retrieve(documents)
    plain = Linker(retriever, candidates=K).retrieve(documents)
    assert routed == plain
    assert all(router.admitted(router.route_key(t)) is None for t in types)
    assert not router.unrouted and not caplog.records
    # ...and in a MEDIC-only project a chemical or gene mention is offered no disease
    assert router.admitted(router.route_key("Gene")) == frozenset()
    assert router.admitted(router.route_key("Chemical")) == frozenset()


def test_routes_are_checked_and_stored_in_the_project(mesh_dir, branches, tmp_path, capsys) -> None:
    for bad, message in [
        ("tree:C1", "not a MeSH tree branch"),
        ("group:XYZ", "unknown semantic group"),
        ("color:red", "cannot read"),
        ("all,tree:C", "cannot be combined"),
        (" , ", "empty"),
    ]:
        with pytest.raises(CuralinkError, match=message):
            parse_route(bad, mention_type="X")
    with pytest.raises(CuralinkError, match="not a table"):
        route_table(["tree:C"])
    assert set_route({"gene": "all"}, "Gene", "group:GENE") == {"Gene": "group:GENE"}
    with pytest.raises(CuralinkError, match="kb routes reset"):
        set_route(["tree:C"], "Gene", "group:GENE")
    with pytest.raises(CuralinkError, match="'Chemical'.*cannot read"):
        route_table({"Chemical": "colour:blue"})

    copy = tmp_path / "p"
    with Project.create(copy) as project:
        project.kb.import_concepts(load_kb(_slice(mesh_dir / "tree-numbers.tsv", tmp_path, 4000), "tsv"))
        ids = set(project.kb.knowledge_base().concepts)
    argv = ["-p", str(copy), "kb", "routes"]
    assert main([*argv, "set", "Chemical", "tree:D02"]) == 0
    assert main([*argv, "set", "CellLine", "tree:A11.251"]) == 0
    assert main([*argv, "set", "Chemical", "colour:blue"]) == EXIT_ERROR
    capsys.readouterr()
    assert main([*argv, "--json"]) == 0
    rows = {r["type"]: r for r in json.loads(capsys.readouterr().out)["routes"]}
    with Project.open(copy) as project:
        assert project.settings.setting(SETTING_KEY) == {"Chemical": "tree:D02", "CellLine": "tree:A11.251"}
    assert rows["Chemical"]["origin"] == "project" and rows["Disease"]["origin"] == "default"
    assert rows["Chemical"]["concepts"] == len(branches["D02"] & ids) > 0
    assert rows["Disease"]["concepts"] == len(branches["disease"] & ids) > 0
    assert main([*argv, "reset"]) == 0
    with Project.open(copy) as project:
        assert route_table(project.settings.setting(SETTING_KEY))["Chemical"] == "tree:D,group:CHEM"


def test_evaluate_searches_each_mention_among_its_types_concepts(
    mesh_project, mesh_kb, tfidf, branches
) -> None:
    # `evaluate retriever` measures what the desk runs: the same routed lists as the Linker's
    from dataclasses import replace

    from core.evaluate.retrieval import evaluate_retriever

    with Project.open(mesh_project) as project:
        router = TypeRouter.for_project(project, mesh_kb)
    diseases = [(t, kind) for t, kind in QUERIES if kind in ("Disease", "SpecificDisease", "DiseaseClass")]
    plain = _document(diseases)
    gold = [_expected(tfidf, m.text, branches["disease"])[0] for m in plain.mentions]
    document = plain.with_mentions(
        [replace(m, concept_id=g) for m, g in zip(plain.mentions, gold, strict=True)]
    )
    routed, unrouted = [], []
    result = evaluate_retriever(tfidf, [document], mesh_kb, reindex=False, router=router, details=routed)
    evaluate_retriever(tfidf, [document], mesh_kb, reindex=False, details=unrouted)
    linked = Linker(tfidf, candidates=K, router=router).retrieve([document])[0]
    for (_, _, top), candidates in zip(routed, linked, strict=True):
        assert {c.concept_id for c in top} <= branches["disease"]
        assert [c.concept_id for c in top] == [c.concept_id for c in candidates[:5]]
    assert result["acc@1"] == 100.0  # gold is the best disease concept by the file's own trees
    assert any({c.concept_id for c in top} - branches["disease"] for _, _, top in unrouted)
