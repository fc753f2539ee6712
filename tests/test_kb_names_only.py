"""`kb import --names-only`: a second vocabulary's synonyms onto the concepts a project already has, on
real files: MEDIC's disease entry terms (CTD_diseases.tsv.gz) onto MeSH 2015 descriptors (tree-numbers.tsv),
which carry no entry terms. Expected figures are read from the files here, not from the importer."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from sqlalchemy import func, select

from app.cli import main
from core.store import Project
from core.store.schema import ConceptIdRow, ConceptRow, NameRow

# Diseases named in BioRED abstracts by MEDIC entry terms that MeSH 2015's preferred names lack
# ("Hyperactivity" for Hyperkinesis, "Type 2 Diabetes Mellitus", "Cystic Fibrosis" as "CF"), and a
# chemical, which MEDIC does not list
KEPT = ("D006948", "D003924", "D003550", "D010634")


def _ctd_rows(path: Path) -> list[list[str]]:
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return [line.rstrip("\n").split("\t") for line in handle if not line.startswith("#")]


@pytest.fixture
def mesh_project(vocab_dir: Path, tmp_path: Path) -> Path:
    lines = (vocab_dir / "mesh-dhimmel" / "tree-numbers.tsv").read_text(encoding="utf-8").splitlines()
    kb_file = tmp_path / "mesh-slice.tsv"
    kb_file.write_text(
        "\n".join([lines[0], *(line for line in lines[1:] if line.split("\t")[0] in KEPT)]) + "\n",
        encoding="utf-8",
    )
    path = tmp_path / "P"
    assert main(["init", str(path)]) == 0
    assert main(["-p", str(path), "kb", "import", str(kb_file), "--format", "tsv"]) == 0
    return path


def _state(path: Path) -> tuple[set[str], set[str], dict[str, set[str]], set[tuple[str, str]]]:
    with Project.open(path) as project, project.session() as session:
        concepts = set(session.scalars(select(ConceptRow.id)))
        ids = set(session.scalars(select(ConceptIdRow.id)))
        names: dict[str, set[str]] = {}
        for concept_id, name in session.execute(select(NameRow.concept_id, NameRow.name)):
            names.setdefault(concept_id, set()).add(name)
        preferred = set(
            session.execute(select(NameRow.concept_id, NameRow.name).where(NameRow.preferred)).all()
        )
        assert session.scalar(select(func.count()).select_from(ConceptRow)) == len(concepts)
    return concepts, ids, names, preferred


def test_names_only_adds_medic_synonyms_to_mesh_descriptors_and_no_concept(
    mesh_project: Path, vocab_dir: Path, capsys
) -> None:
    ctd = vocab_dir / "CTD_diseases.tsv.gz"
    concepts_before, ids_before, names_before, preferred_before = _state(mesh_project)
    assert concepts_before == set(KEPT)
    capsys.readouterr()

    assert main(["-p", str(mesh_project), "kb", "import", str(ctd), "--format", "ctd", "--names-only"]) == 0

    concepts, ids, names, preferred = _state(mesh_project)
    assert concepts == concepts_before, "names-only added or lost concepts"
    assert ids == ids_before, "the file's other ids (OMIM, DO) became ids of the project's concepts"
    assert preferred == preferred_before, "a MEDIC name became a preferred name"
    rows = {row[1]: row for row in _ctd_rows(ctd)}
    for concept_id in ("D006948", "D003924", "D003550"):
        row = rows[f"MESH:{concept_id}"]
        expected = {row[0], *(s for s in row[7].split("|") if s)}
        assert expected <= names[concept_id], expected - names[concept_id]
        assert expected - names_before[concept_id], f"{concept_id}: MEDIC added nothing to test"
    assert "Motor Hyperactivity" in names["D006948"]
    assert "Type 2 Diabetes Mellitus" in names["D003924"]
    assert names["D010634"] == names_before["D010634"], "a chemical gained disease names"
    # every other MEDIC concept (other descriptors, supplementary C ids, OMIM) matched none and is counted
    unmatched = sum(1 for key in rows if key.removeprefix("MESH:") not in KEPT)
    out = capsys.readouterr().out
    assert f"{unmatched} concepts of the file match none" in " ".join(out.split()), out


def test_names_only_finds_a_concept_by_its_alternative_id(tmp_path: Path, vocab_dir: Path) -> None:
    """A project keyed by another id (here a MEDIC project, whose D003924 also answers to OMIM:125853)
    gets names from a file that keys the concept by that other id."""
    ctd_row = next(row for row in _ctd_rows(vocab_dir / "CTD_diseases.tsv.gz") if row[1] == "MESH:D003924")
    kb_file = tmp_path / "kb.tsv"
    kb_file.write_text(
        "id\tname\talt_ids\nD003924\tDiabetes Mellitus, Type 2\tOMIM:125853\n", encoding="utf-8"
    )
    other = tmp_path / "other.tsv"
    other.write_text(
        f"id\tname\tsynonyms\nOMIM:125853\t{ctd_row[0]}\tNIDDM|Adult-Onset Diabetes\n", encoding="utf-8"
    )
    path = tmp_path / "P"
    assert main(["init", str(path)]) == 0
    assert main(["-p", str(path), "kb", "import", str(kb_file), "--format", "tsv"]) == 0
    assert main(["-p", str(path), "kb", "import", str(other), "--format", "tsv", "--names-only"]) == 0
    concepts, _, names, _ = _state(path)
    assert concepts == {"D003924"}
    assert {"NIDDM", "Adult-Onset Diabetes"} <= names["D003924"]
