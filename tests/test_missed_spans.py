"""`bench missed-spans`: each missed gold span gets the cause a curator would name, on a hand-built
abstract whose causes are written out here, and the command reads any detector's output from a file."""

from __future__ import annotations

import json
from pathlib import Path

from app.cli import main
from bench.missed_spans import CAUSES, looks_like_abbreviation, missed_by_cause
from core.documents import Document, Mention, Passage

TEXT = (
    "Breast and ovarian cancer patients received cisplatin. Chronic kidney disease (CKD) was seen. "
    "Aspirin and zorbexil were given. Type 2 diabetes mellitus and novelitis followed."
)


def _at(text: str, mention_type: str, concept_id: str = "", origin: str = "gold") -> Mention:
    start = TEXT.index(text)
    return Mention(start, start + len(text), text, mention_type, concept_id, origin=origin)


# gold mention -> the cause its miss must get (None: found)
GOLD = [
    (_at("Breast and ovarian cancer", "Disease", "D001943|D010051"), "coordination"),
    (_at("cisplatin", "Chemical", "D002945"), None),
    (_at("Chronic kidney disease", "Disease", "D051436"), "boundary"),
    (_at("CKD", "Disease", "D051436"), "abbreviation"),
    (_at("Aspirin", "Chemical", "D001241"), "type confusion"),
    (_at("zorbexil", "Chemical", "C999999"), "gold id outside the KB"),
    (_at("Type 2 diabetes mellitus", "Disease", "D003924"), "other"),
    (_at("novelitis", "Disease", "D000690"), "not in the lexicon"),
]
DETECTED = [
    _at("ovarian cancer", "Disease", origin="detected"),
    _at("cisplatin", "Chemical", origin="detected"),
    _at("kidney disease", "Disease", origin="detected"),
    _at("Aspirin", "Disease", origin="detected"),
]
KB_IDS = {"D001943", "D010051", "D002945", "D051436", "D001241", "D003924", "D000690"}
LEXICON = {"type 2 diabetes mellitus", "cisplatin", "aspirin", "ckd", "chronic kidney disease"}


def test_each_missed_span_gets_its_cause() -> None:
    document = Document("1", [Passage(0, TEXT)], [m for m, _ in GOLD])
    result = missed_by_cause(
        [document],
        [DETECTED],
        in_lexicon=lambda text: text.lower() in LEXICON,
        in_kb=lambda concept_id: concept_id in KB_IDS,
    )
    for mention_type in ("Chemical", "Disease"):
        expected = [cause for m, cause in GOLD if m.type == mention_type]
        row = result["types"][mention_type]
        assert row["gold"] == len(expected)
        assert row["found"] == expected.count(None)
        assert row["missed"] == len(expected) - expected.count(None)
        assert row["causes"] == {cause: expected.count(cause) for cause in CAUSES}
    assert result["all"]["causes"] == {cause: [c for _, c in GOLD].count(cause) for cause in CAUSES}
    assert result["types"]["Disease"]["examples"]["boundary"] == ["Chronic kidney disease"]


def test_abbreviation_shape() -> None:
    assert all(looks_like_abbreviation(t) for t in ("CKD", "5-FU", "HNF-6", "PAH", "MPTP"))
    assert not any(
        looks_like_abbreviation(t) for t in ("cisplatin", "Aspirin", "HbA1c levels", "C", "type 2 DM")
    )


def test_bench_missed_spans_reads_another_detectors_output(shared_data: Path, tmp_path: Path, capsys) -> None:
    """Gold of two real BioRED abstracts as dev; the 'detector' output file is that gold with every third
    mention dropped, so exactly those are missed (counted here from the file, per type)."""
    blocks = (
        (shared_data / "biored" / "BioRED_TrainDev.PubTator").read_text(encoding="utf-8").split("\n\n")[:2]
    )
    gold_file = tmp_path / "gold.txt"
    gold_file.write_text("\n\n".join(b.strip("\n") for b in blocks) + "\n\n", encoding="utf-8")
    kept, dropped = [], {}
    for block in blocks:
        lines = block.strip("\n").split("\n")
        mentions = [line for line in lines if line.count("\t") >= 4]
        for number, line in enumerate(mentions):
            if number % 3 == 2:
                mention_type = line.split("\t")[4]
                dropped[mention_type] = dropped.get(mention_type, 0) + 1
            else:
                kept.append(line)
        kept_block = [line for line in lines if line.count("\t") < 4] + [m for m in mentions if m in kept]
        kept.append("\n".join(kept_block))
    detected_file = tmp_path / "detected.txt"
    detected_file.write_text(
        "\n\n".join(b for b in kept if "|t|" in b) + "\n\n",
        encoding="utf-8",
    )
    project = tmp_path / "P"
    assert main(["init", str(project)]) == 0
    assert (
        main(
            ["-p", str(project), "corpus", "import", str(gold_file), "--format", "pubtator", "--split", "dev"]
        )
        == 0
    )
    capsys.readouterr()
    assert (
        main(["-p", str(project), "bench", "missed-spans", "--detected", str(detected_file), "--json"]) == 0
    )
    result = json.loads(capsys.readouterr().out)
    assert {t: row["missed"] for t, row in result["types"].items() if row["missed"]} == dropped
    causes = result["all"]["causes"]
    assert sum(causes.values()) == sum(dropped.values())
    assert causes["not in the lexicon"] == causes["other"] == 0  # the KB is empty: outside it comes first
    assert causes["gold id outside the KB"] > 0
