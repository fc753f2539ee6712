"""The ResCNN retriever's word-piece tokenizer, built with the `tokenizers` library directly (issue 23).

transformers' BertTokenizer is a thin wrapper around the same Rust WordPiece, but importing
transformers costs about a second of every linking-process start, and the retriever only needs the
ids of a name (no [CLS]/[SEP], truncated) and the [UNK] id. So the folder's tokenizer is rebuilt here
the way transformers' BertTokenizer (5.x) builds it: the vocabulary from `tokenizer.json` (or
`vocab.txt`), the BERT normaliser from `tokenizer_config.json` (do_lower_case, strip_accents,
tokenize_chinese_chars), the BERT pre-tokeniser, and the five special tokens matched on the raw text.
A folder with settings this does not reproduce (no basic tokenisation, never_split, extra added
tokens, another subword prefix, ...) falls back to transformers' BertTokenizer, logged. Tests compare
the ids with transformers' on thousands of MEDIC names and hard cases.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from core.errors import ModelError
from core.safe_models import read_json_file

log = logging.getLogger(__name__)

TOKENIZER_FILE = "tokenizer.json"
VOCAB_FILE = "vocab.txt"
_SPECIAL = {
    "unk_token": "[UNK]",
    "sep_token": "[SEP]",
    "pad_token": "[PAD]",
    "cls_token": "[CLS]",
    "mask_token": "[MASK]",
}
_PLAIN_FLAGS = {"lstrip": False, "rstrip": False, "single_word": False, "normalized": False}
"""How transformers' BertTokenizer matches its special tokens: exactly, on the raw text."""
_BERT_CLASSES = (None, "BertTokenizer", "BertTokenizerFast")
_WORDPIECE_DEFAULTS = {"continuing_subword_prefix": "##", "max_input_chars_per_word": 100}
"""What transformers' BertTokenizer gives its WordPiece model whatever tokenizer.json says."""


class Unsupported(Exception):
    """A setting this module does not reproduce: the caller falls back to transformers."""


class WordPieceTokenizer:
    """Just the calls Curalink makes: `tokenizer(texts, ...)["input_ids"]`, `unk_token_id`, `get_vocab()`."""

    def __init__(self, tokenizer, unk_token_id: int, folder: Path):
        self._tokenizer = tokenizer
        self.unk_token_id = unk_token_id
        self.folder = folder

    def __call__(
        self,
        texts: Sequence[str],
        *,
        add_special_tokens: bool = False,
        truncation: bool = True,
        max_length: int | None = None,
    ) -> dict[str, list[list[int]]]:
        """Ids of each text; with truncation, the first max_length (transformers' right-side truncation
        of a single sequence)."""
        if add_special_tokens:
            raise ValueError("the retriever's tokenizer encodes names without [CLS]/[SEP]")
        encoded = [e.ids for e in self._tokenizer.encode_batch(list(texts), add_special_tokens=False)]
        if truncation and max_length is not None:
            encoded = [ids[:max_length] for ids in encoded]
        return {"input_ids": encoded}

    def get_vocab(self) -> dict[str, int]:
        """Token -> id, the special tokens included (as transformers' get_vocab)."""
        return self._tokenizer.get_vocab(with_added_tokens=True)


def _token_text(token: object) -> str:
    """A special token as stored (a string, or an AddedToken's fields), or Unsupported when its matching
    flags are not the plain ones transformers gives BERT's special tokens."""
    if isinstance(token, str):
        return token
    if isinstance(token, dict) and isinstance(token.get("content"), str):
        if all(token.get(flag, value) == value for flag, value in _PLAIN_FLAGS.items()):
            return token["content"]
    raise Unsupported(f"special token {token!r}")


def _settings(folder: Path) -> dict:
    """tokenizer_config.json (with special_tokens_map.json) as the BERT settings, or Unsupported."""
    config_path = folder / "tokenizer_config.json"
    config = read_json_file(config_path, "tokenizer configuration") if config_path.is_file() else {}
    if not isinstance(config, dict):
        raise ModelError(f"{config_path}: not a tokenizer configuration (a JSON object is expected)")
    map_path = folder / "special_tokens_map.json"
    special_map = read_json_file(map_path, "special-token map") if map_path.is_file() else {}
    if not isinstance(special_map, dict):
        raise ModelError(f"{map_path}: not a special-token map (a JSON object is expected)")
    if config.get("tokenizer_class") not in _BERT_CLASSES:
        raise Unsupported(f"tokenizer_class {config.get('tokenizer_class')!r}")
    if config.get("do_basic_tokenize", True) is not True or config.get("never_split"):
        raise Unsupported("do_basic_tokenize off or never_split set")
    if config.get("additional_special_tokens") or special_map.get("additional_special_tokens"):
        raise Unsupported("additional special tokens")
    specials = {}
    for key, default in _SPECIAL.items():
        values = {_token_text(source[key]) for source in (config, special_map) if key in source}
        value = values.pop() if len(values) == 1 else default if not values else None
        if not isinstance(value, str):
            raise Unsupported(f"{key} {sorted(map(repr, values))}")
        specials[key] = value
    added = config.get("added_tokens_decoder") or {}
    if not isinstance(added, dict) or not {_token_text(e) for e in added.values()} <= set(specials.values()):
        raise Unsupported("added tokens besides the special ones")
    settings = {
        "lowercase": config.get("do_lower_case", True),
        "strip_accents": config.get("strip_accents"),
        "handle_chinese_chars": config.get("tokenize_chinese_chars", True),
    }
    if not all(isinstance(v, bool) for v in (settings["lowercase"], settings["handle_chinese_chars"])) or (
        settings["strip_accents"] not in (None, True, False)
    ):
        raise Unsupported(f"normaliser settings {settings}")
    return {"specials": specials, "normalizer": settings}


def _build(folder: Path, settings: dict):
    """The tokenizers.Tokenizer transformers' BertTokenizer would hold, from the folder's files."""
    from tokenizers import AddedToken, Tokenizer, normalizers, pre_tokenizers
    from tokenizers.models import WordPiece

    specials = settings["specials"]
    json_path = folder / TOKENIZER_FILE
    if json_path.is_file():
        tokenizer = Tokenizer.from_file(str(json_path))
        model = tokenizer.model
        if not isinstance(model, WordPiece):
            raise Unsupported(f"{TOKENIZER_FILE} holds a {type(model).__name__} model, not WordPiece")
        found = {key: getattr(model, key) for key in _WORDPIECE_DEFAULTS} | {"unk_token": model.unk_token}
        if found != _WORDPIECE_DEFAULTS | {"unk_token": specials["unk_token"]}:
            raise Unsupported(f"WordPiece settings {found}")
        for token in tokenizer.get_added_tokens_decoder().values():
            fields = {"content": token.content} | {flag: getattr(token, flag) for flag in _PLAIN_FLAGS}
            if _token_text(fields) not in specials.values():
                raise Unsupported(f"added token {token.content!r}")
    else:
        tokenizer = Tokenizer(WordPiece.from_file(str(folder / VOCAB_FILE), unk_token=specials["unk_token"]))
    tokenizer.normalizer = normalizers.BertNormalizer(clean_text=True, **settings["normalizer"])
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.no_truncation()
    tokenizer.no_padding()
    vocab = tokenizer.get_vocab(with_added_tokens=False)
    missing = [token for token in specials.values() if token not in vocab]
    if missing:
        raise Unsupported(f"special tokens {missing} not in the vocabulary")
    tokenizer.add_special_tokens([AddedToken(t, normalized=False, special=True) for t in specials.values()])
    return tokenizer, vocab[specials["unk_token"]]


def load_wordpiece_tokenizer(folder: str | Path):
    """The folder's word-piece tokenizer without importing transformers where the `tokenizers` library
    reproduces it (local files only); else transformers' BertTokenizer. A bad file is a ModelError
    naming the folder. The caller has checked the folder (check_bert_config)."""
    folder = Path(folder)
    if not ((folder / VOCAB_FILE).is_file() or (folder / TOKENIZER_FILE).is_file()):
        raise ModelError(f"{folder}: no tokenizer ({VOCAB_FILE} or {TOKENIZER_FILE})")
    try:
        tokenizer, unk_id = _build(folder, _settings(folder))
    except Unsupported as why:
        from core.safe_models import load_bert_tokenizer

        log.info("%s: tokenizer loaded with transformers (%s)", folder, why)
        return load_bert_tokenizer(folder)
    except ModelError:
        raise
    except Exception as exc:  # OSError, the tokenizers library's own exception types for a damaged file
        raise ModelError(f"{folder}: cannot load the tokenizer ({type(exc).__name__}: {exc})") from exc
    return WordPieceTokenizer(tokenizer, unk_id, folder)
