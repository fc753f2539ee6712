"""The ResCNN retriever's tokenizer is built with the `tokenizers` library, without transformers (issue 23),
and must give exactly the ids transformers' BertTokenizer gives (the trained CNNs and the stored name
indexes were made with those): checked on MEDIC's names and hard cases, for the packaged MiniLM folder
(tokenizer.json) and for a folder with only vocab.txt, lower-casing on and off."""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import pytest

from core.errors import ModelError
from core.retrieve.encoder import tokenize
from core.retrieve.rescnn import default_base_model, load_tokenizer
from core.retrieve.wordpiece import WordPieceTokenizer

SMALL_FILES = (
    "config.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "vocab.txt",
    "tokenizer.json",
)
HARD_CASES = [
    "",
    " ",
    "\t\n",
    "Ménière's disease",
    "Sjögren syndrome",
    "CAFÉ-AU-LAIT spots",
    "naïve Crohn’s",
    "TGF-β1 deficiency",
    "α-thalassemia / β-thalassemia",
    "Δ508 CFTR",
    "IκB kinase",
    "肺癌",
    "乳腺癌 breast cancer",
    "がん",
    "암",
    "Ｆｕｌｌｗｉｄｔｈ ＡＢＣ",
    "e\u0301le\u0300ve",  # combining accents
    "zero\u200bwidth",
    "ctrl\x00char\x07s",
    "[MASK] deficiency",
    "[UNK]",
    "[mask] [cls] [SEP]",
    "##ing",
    "IL-2R(α); C3/C5 -- (N-terminal) [type II]...",
    "50% 3.5mg/kg >=2 @home #1 ~x",
    "emoji 😀 disease",
    "a" * 150,
    "supercalifragilisticexpialidociousnessdisorderwithanextremelylongsinglewordthatgoesbeyondahundredcharacterslimit!",
    " ".join(["Hereditary nonpolyposis colorectal cancer type"] * 40),
    "Ｄｉａｂｅｔｅｓ\u3000Ｍｅｌｌｉｔｕｓ",
]
SETTINGS = [
    {},
    {"do_lower_case": False},
    {"do_lower_case": False, "strip_accents": True},
    {"do_lower_case": True, "strip_accents": False, "tokenize_chinese_chars": False},
]


@pytest.fixture(scope="module")
def names(vocab_dir: Path) -> list[str]:
    """Several thousand MEDIC names and synonyms (every 8th line's), plus the hard cases."""
    found: list[str] = []
    lines = (vocab_dir / "medic_06Jul2012.txt").read_text(encoding="utf-8").splitlines()
    for line in lines[::8]:
        found.extend(field for field in line.split("|")[1:] if field and not field.isdigit())
    assert len(found) > 5000
    return found + HARD_CASES


def _folder(tmp_path: Path, with_json: bool, settings: dict) -> Path:
    """A copy of the packaged MiniLM folder's small files (no weights: the tokenizer does not read them)."""
    source = Path(default_base_model())
    folder = tmp_path / "base"
    folder.mkdir()
    for name in SMALL_FILES:
        if name != "tokenizer.json" or with_json:
            shutil.copy(source / name, folder / name)
    config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
    (folder / "tokenizer_config.json").write_text(json.dumps(config | settings), encoding="utf-8")
    return folder


def _transformers_ids(folder: Path, texts: list[str], max_length: int) -> tuple[list[list[int]], int, dict]:
    from transformers import BertTokenizer

    reference = BertTokenizer.from_pretrained(str(folder), local_files_only=True)
    return tokenize(reference, texts, max_length), reference.unk_token_id, reference.get_vocab()


def _assert_same_ids(folder: Path, texts: list[str]) -> None:
    ours = load_tokenizer(folder)
    assert isinstance(ours, WordPieceTokenizer)  # built without transformers
    for max_length in (8, 25, 512):
        expected, unk, vocab = _transformers_ids(folder, texts, max_length)
        assert ours.unk_token_id == unk and ours.get_vocab() == vocab
        got = tokenize(ours, texts, max_length)
        wrong = [(text, g, e) for text, g, e in zip(texts, got, expected, strict=True) if g != e]
        assert not wrong, f"{len(wrong)} of {len(texts)} differ at max_length {max_length}, e.g. {wrong[:3]}"


def test_the_packaged_model_folder_gives_transformers_ids(names):
    _assert_same_ids(Path(default_base_model()), names)


@pytest.mark.parametrize("with_json", [True, False], ids=["tokenizer.json", "vocab.txt-only"])
@pytest.mark.parametrize(
    "settings", SETTINGS, ids=lambda s: ",".join(f"{k}={v}" for k, v in s.items()) or "as-is"
)
def test_folder_variants_give_transformers_ids(names, tmp_path, with_json, settings):
    folder = _folder(tmp_path, with_json, settings)
    assert (folder / "tokenizer.json").is_file() == with_json
    _assert_same_ids(folder, names)


def test_special_tokens_stored_as_added_token_fields_are_read(names, tmp_path):
    """special_tokens_map.json as transformers writes it today: each token an AddedToken's fields."""
    folder = _folder(tmp_path, False, {})
    plain = {"lstrip": False, "rstrip": False, "single_word": False, "normalized": False}
    tokens = json.loads((folder / "special_tokens_map.json").read_text(encoding="utf-8"))
    fields = {key: {"content": value} | plain for key, value in tokens.items()}
    (folder / "special_tokens_map.json").write_text(json.dumps(fields), encoding="utf-8")
    _assert_same_ids(folder, names)


MASK_LSTRIP = {"103": {"content": "[MASK]", "lstrip": True, "normalized": False, "special": True}}


@pytest.mark.parametrize(
    "settings, why",
    [({"never_split": ["IL-2"]}, "never_split"), ({"added_tokens_decoder": MASK_LSTRIP}, "[MASK]")],
    ids=["never_split", "mask-lstrip"],
)
def test_unusual_settings_fall_back_to_transformers_with_the_same_ids(names, tmp_path, caplog, settings, why):
    folder = _folder(tmp_path, False, settings)
    with caplog.at_level(logging.INFO, logger="core.retrieve.wordpiece"):
        ours = load_tokenizer(folder)
    assert not isinstance(ours, WordPieceTokenizer)
    assert why in caplog.text and str(folder) in caplog.text
    texts = names[:500] + ["a [MASK] b", "x[MASK]"]
    assert tokenize(ours, texts, 25) == _transformers_ids(folder, texts, 25)[0]


@pytest.mark.parametrize("name", ["tokenizer.json", "tokenizer_config.json"])
def test_a_damaged_tokenizer_file_is_a_model_error_naming_it(tmp_path, name):
    folder = _folder(tmp_path, True, {})
    (folder / name).write_text('{"model": {"type": "WordPiece", "vocab": [1, 2', encoding="utf-8")
    with pytest.raises(ModelError, match=str(folder)):
        load_tokenizer(folder)


def test_a_folder_without_vocabulary_is_a_model_error(tmp_path):
    folder = _folder(tmp_path, False, {})
    (folder / "vocab.txt").unlink()
    with pytest.raises(ModelError, match=f"{folder}: no tokenizer"):
        load_tokenizer(folder)
