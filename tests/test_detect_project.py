"""The detector as a project model kind, through the command line: train (tiny BERT), register with the
KB fingerprint, evaluate every detector, tag raw text with `link --detect`, roll back; bad input refused."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from app.cli import EXIT_ERROR, main
from core.formats import read_corpus
from core.store import Project

RAW = (
    "Familial adenomatous polyposis in two brothers\n\n"
    "Two brothers with familial adenomatous polyposis and colorectal cancer were seen; "
    "their mother had breast cancer."
)


@pytest.fixture
def project_dir(demo_template: Path, tmp_path: Path, ncbi_dir: Path) -> Path:
    destination = tmp_path / "demo"
    shutil.copytree(demo_template, destination, ignore=shutil.ignore_patterns("*-wal", "*-shm"))
    train_file = ncbi_dir / "NCBItrainset_corpus.txt"
    documents = list(read_corpus(train_file, "pubtator"))[:16]
    with Project.open(destination) as project:
        project.documents.import_documents(documents[:12], source=str(train_file), split="train")
        project.documents.import_documents(documents[12:], source=str(train_file), split="dev")
    raw = tmp_path / "raw-1.txt"
    raw.write_text(RAW, encoding="utf-8")
    assert main(["-p", str(destination), "corpus", "import", str(raw), "--format", "text"]) == 0
    return destination


def _train(project_dir: Path, tiny_bert: Path, epochs: int) -> None:
    args = ["-p", str(project_dir), "train", "detector", "--base-model", str(tiny_bert)]
    assert main([*args, "--epochs", str(epochs), "--device", "cpu", "--promote", "always"]) == 0


def test_train_evaluate_link_and_roll_back_the_detector(project_dir: Path, tiny_bert: Path, capsys) -> None:
    _train(project_dir, tiny_bert, epochs=2)
    assert "detector v1 saved" in capsys.readouterr().out
    with Project.open(project_dir) as project:
        active = project.models.active_model("detector")
        assert active is not None and active.version == "v1"
        assert active.kb_fingerprint == project.kb.knowledge_base().fingerprint()
        folder = Path(active.path)
        assert folder.is_relative_to(project_dir / "models" / "detector")
        names = {p.name for p in folder.iterdir()}
        assert {
            "config.json",
            "model.safetensors",
            "heads.safetensors",
            "detector.json",
            "metrics.json",
        } <= names
        assert not any(name.endswith((".bin", ".pt", ".pkl")) for name in names)
        metrics = json.loads((folder / "metrics.json").read_text())
        assert (
            metrics["epochs"] == 2 and metrics["train_documents"] == 6 + 12 and metrics["dev_documents"] == 4
        )

    assert main(["-p", str(project_dir), "evaluate", "detect", "--split", "dev", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    names = [row["name"] for row in report["detectors"]]
    # first what link --detect stores: the span model in force, linked; then the dictionary for comparison
    assert (
        names[0].startswith("link --detect: span model v1 + linker") and report["detectors"][0]["link_detect"]
    )
    assert (
        "span model v1" in names
        and "dictionary" in names
        and any(n.startswith("dictionary + linker") for n in names)
    )
    assert report["detector"].startswith("span model v1")
    for row in report["detectors"]:
        for block in ("strict", "partial", "end_to_end_strict", "end_to_end_partial"):
            assert set(row[block]) >= {"precision", "recall", "f1"}
            assert 0 <= row[block]["f1"] <= 100
        assert row["end_to_end_strict"]["f1"] <= row["strict"]["f1"] + 1e-9, "a concept can only remove hits"
    assert report["documents"] == 4, "the dev split's gold documents"

    capsys.readouterr()
    assert main(["-p", str(project_dir), "link", "--detect", "--documents", "raw-1"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "with the span model v1" in out
    with Project.open(project_dir) as project:
        detector_json = Path(project.models.active_model("detector").path) / "detector.json"
        threshold = json.loads(detector_json.read_text())["threshold"]  # chosen on dev
        assert 0.1 <= threshold <= 0.9
        (raw,) = project.documents.documents(ids=["raw-1"])
        for mention in raw.mentions:
            assert mention.origin == "detected"
            assert raw.text[mention.start : mention.end] == mention.text
            assert mention.type
            if "probability" not in mention.infons:  # the dictionary filled a gap the span model left
                assert "dictionary_ids" in mention.infons
                continue
            assert mention.infons["probability"] >= threshold

    _train(project_dir, tiny_bert, epochs=1)
    with Project.open(project_dir) as project:
        assert project.models.active_model("detector").version == "v2"
    assert main(["-p", str(project_dir), "rollback", "detector", "--no-relink"]) == 0
    with Project.open(project_dir) as project:
        assert project.models.active_model("detector").version == "v1"
        assert {v.version: v.status for v in project.models.model_versions("detector")} == {
            "v1": "active",
            "v2": "retired",
        }

    # retrain: the detector in force is fine-tuned on the spans outside the held-out slice and judged
    args = ["-p", str(project_dir), "retrain", "--kind", "detector", "--promote", "always", "--no-relink"]
    capsys.readouterr()
    assert main([*args, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)["kinds"]["detector"]
    assert report["version"] == "v3" and report["parent_version"] == "v1" and report["promoted"]
    assert report["steps"] > 0 and "score" in report["new"] and "score" in report["old"]
    with Project.open(project_dir) as project:
        assert project.models.active_model("detector").version == "v3"
        metrics = json.loads(project.models.active_model("detector").metrics_json)
        assert metrics["warm_start"].endswith("v1")


def test_a_detector_from_another_knowledge_base_gets_vectors_for_this_one(
    project_dir: Path, tiny_bert: Path, tmp_path: Path, caplog
) -> None:
    from core.project_detector import load_span_detector

    _train(project_dir, tiny_bert, epochs=1)
    extra = tmp_path / "extra.tsv"
    extra.write_text("D999999\tQwertyuiop disease\tqwertyuiop syndrome\n", encoding="utf-8")
    assert main(["-p", str(project_dir), "kb", "import", str(extra), "--format", "tsv"]) == 0
    with Project.open(project_dir) as project:
        kb = project.kb.knowledge_base()
        assert project.models.active_model("detector").kb_fingerprint != kb.fingerprint()
        with caplog.at_level("INFO"):
            detector = load_span_detector(project, kb=kb, device="cpu")
        assert "concept vectors are encoded for this one" in caplog.text
        assert "D999999" in detector.vectors.concept_ids
        assert len(list((project_dir / "index").glob(f"{kb.fingerprint()}-detector-*.safetensors"))) == 1


def test_training_without_gold_spans_is_refused(tmp_path: Path, tiny_bert: Path, capsys) -> None:
    project_dir = tmp_path / "raw-only"
    assert main(["init", str(project_dir)]) == 0
    kb = tmp_path / "kb.tsv"
    kb.write_text("D003550\tCystic Fibrosis\tCF|mucoviscidosis\n", encoding="utf-8")
    raw = tmp_path / "raw.txt"
    raw.write_text(RAW, encoding="utf-8")
    assert main(["-p", str(project_dir), "kb", "import", str(kb), "--format", "tsv"]) == 0
    assert main(["-p", str(project_dir), "corpus", "import", str(raw), "--format", "text"]) == 0
    capsys.readouterr()
    assert main(["-p", str(project_dir), "train", "detector", "--base-model", str(tiny_bert)]) == EXIT_ERROR
    err = " ".join(capsys.readouterr().err.split())
    assert "no gold or curator-checked mention spans to train a detector on" in err
    with Project.open(project_dir) as project:
        assert project.models.model_versions("detector") == []
    assert not list((project_dir / "models").glob("detector/v*"))


def test_bench_detect_links_identical_mentions_four_ways(project_dir: Path, tiny_bert: Path, capsys) -> None:
    _train(project_dir, tiny_bert, epochs=1)
    capsys.readouterr()
    assert (
        main(["-p", str(project_dir), "bench", "detect", "--split", "dev", "--documents", "2", "--json"]) == 0
    )
    result = json.loads(capsys.readouterr().out)
    with Project.open(project_dir) as project:
        dev = [d for d in project.documents.documents("dev") if any(m.concept_ids for m in d.mentions)][:2]
    assert result["mentions"] == sum(sum(bool(m.concept_ids) for m in d.mentions) for d in dev)
    names = [row["name"] for row in result["linkers"]]
    assert names[0] == "collective dual encoder" and names[1] == "one-mention dual encoder"
    assert names[2].startswith("ResCNN") and names[3].startswith("pair cross-encoder")
    for row in result["linkers"]:
        assert row["mentions_per_s"] > 0 and row["seconds"] > 0
    assert result["linkers"][3]["acc@1"] is None, "an untrained cross-encoder's accuracy is not reported"
    assert result["linkers"][1]["speedup_vs_one_mention"] == 1.0
