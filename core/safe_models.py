"""Model folders are untrusted input: a project from someone else must not run code or unpickle anything.

transformers' Auto* classes pick the class from the folder's `config.json`; with `auto_map` and a
`model_type` of its own, a folder makes them import its own Python file (after a y/N prompt on stdin).
So Curalink chooses the class itself (BERT only: the packaged MiniLM, BiomedBERT, PubMedBERT, SapBERT
are all `model_type: bert`), passes `trust_remote_code=False`, refuses a folder that asks for custom
code, and reads weights only from safetensors files whose header it has checked, so a pickle, a
truncated file or a config that does not match its weights is a one-line error naming the file.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

from core.errors import InputError, ModelError
from core.limits import json_nodes_problem, limit, over_limit
from core.locations import find_project_root, inside_project

CONFIG_FILE = "config.json"
WEIGHTS_FILE = "model.safetensors"
SHARD_INDEX_FILE = "model.safetensors.index.json"
ALLOWED_MODEL_TYPES = ("bert",)
"""BERT-family checkpoints Curalink trains on; each is loaded with a class Curalink names (Bert*)."""
_CODE_KEYS = ("auto_map", "custom_pipelines")
_JSON_FILES = (CONFIG_FILE, "tokenizer_config.json", "special_tokens_map.json", "processor_config.json")
_PICKLES = ("pytorch_model.bin", "pytorch_model.bin.index.json", "model.ckpt", "model.pt", "model.pth")
_MAX_JSON_BYTES = 16 * 1024 * 1024
_PICKLE_MAGIC = (b"\x80\x02", b"\x80\x03", b"\x80\x04", b"\x80\x05", b"PK\x03\x04")


def read_json_file(path: Path, what: str = "JSON file") -> object:
    """A small JSON file of a model folder, or a ModelError naming it (size, encoding, syntax, depth)."""
    try:
        if path.stat().st_size > _MAX_JSON_BYTES:
            raise ModelError(f"{path}: {what} larger than {_MAX_JSON_BYTES // 2**20} MB; not read")
        return json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise ModelError(f"{path}: not a valid {what} ({type(exc).__name__}: {exc})") from exc
    except OSError as exc:
        raise ModelError(f"{path}: cannot read the {what} ({exc.strerror or exc})") from exc


def refuse_custom_code(folder: Path) -> None:
    """A folder whose JSON files ask for code of its own (auto_map ...) is refused before anything loads."""
    for name in _JSON_FILES:
        path = folder / name
        if not path.is_file():
            continue
        data = read_json_file(path)
        keys = [key for key in _CODE_KEYS if isinstance(data, dict) and key in data]
        if keys:
            raise ModelError(
                f"{path}: asks to run code shipped with the model ({', '.join(keys)}); Curalink never "
                "runs code from a model folder: use a model Curalink trained"
            )


def check_model_files(folder: str | Path) -> None:
    """Inside a project, a model folder and each of its files stay inside the project (a symbolic link
    may not lead elsewhere), and every file is a regular file (a device or a pipe would be read forever)."""
    folder = Path(folder)
    root = find_project_root(folder)
    if root is not None:
        inside_project(root, folder, "the model folder")
    if not folder.is_dir():
        return
    for entry in folder.iterdir():
        if root is not None and entry.is_symlink():
            inside_project(root, entry, "a model file")
        if entry.exists() and not (entry.is_file() or entry.is_dir()):
            raise ModelError(f"{entry}: not a regular file; a model folder holds only files Curalink wrote")


def check_bert_config(folder: Path) -> dict:
    """The folder's config.json as a dict, refused unless it is a BERT model without custom code."""
    path = folder / CONFIG_FILE
    check_model_files(folder)
    if not path.is_file():
        raise ModelError(f"{folder}: not a model folder (no {CONFIG_FILE})")
    refuse_custom_code(folder)
    config = read_json_file(path, "model configuration")
    if not isinstance(config, dict):
        raise ModelError(f"{path}: not a model configuration (a JSON object is expected)")
    model_type = config.get("model_type", "")
    if model_type not in ALLOWED_MODEL_TYPES:
        raise ModelError(
            f"{path}: model_type {model_type!r} is not BERT-family; Curalink loads only "
            f"{', '.join(ALLOWED_MODEL_TYPES)} models (MiniLM, BiomedBERT, PubMedBERT, SapBERT, ...)"
        )
    return config


def safetensors_header(path: Path) -> dict:
    """The tensor table of a safetensors file, checked against the file's size (nothing is loaded)."""
    try:
        size = path.stat().st_size
        with path.open("rb") as handle:
            head = handle.read(8)
            if head[:2] in _PICKLE_MAGIC or head[:4] in _PICKLE_MAGIC:
                raise ModelError(
                    f"{path}: a pickled checkpoint (torch.save), not safetensors; Curalink never "
                    "loads pickles (they can run code)"
                )
            if len(head) < 8:
                raise ModelError(f"{path}: not a safetensors file ({size} bytes, truncated)")
            (length,) = struct.unpack("<Q", head)
            if length > size - 8:
                raise ModelError(
                    f"{path}: not a safetensors file (header of {length} bytes in a file of {size}; "
                    "truncated or another format)"
                )
            if length > limit("header-bytes"):
                raise ModelError(f"{path}: " + over_limit("header-bytes", f"a header of {length:,} bytes"))
            text = handle.read(length)
            try:
                json_nodes_problem(text, path)  # json.loads builds every value: 3 bytes make a 56-byte list
            except InputError as error:
                raise ModelError(f"{path}: not loaded: {error.problem}") from None
            header = json.loads(text.decode("utf-8"))
    except OSError as exc:
        raise ModelError(f"{path}: cannot read the weights ({exc.strerror or exc})") from exc
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise ModelError(f"{path}: not a safetensors file (unreadable header: {exc})") from exc
    if not isinstance(header, dict):
        raise ModelError(f"{path}: not a safetensors file (the header is not a table of tensors)")
    data_bytes = size - 8 - length
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        offsets = entry.get("data_offsets") if isinstance(entry, dict) else None
        shape = entry.get("shape") if isinstance(entry, dict) else None
        if (
            not isinstance(offsets, list)
            or len(offsets) != 2
            or not all(isinstance(o, int) for o in offsets)
            or not 0 <= offsets[0] <= offsets[1] <= data_bytes
            or not isinstance(shape, list)
            or not all(isinstance(d, int) and d >= 0 for d in shape)
        ):
            raise ModelError(f"{path}: tensor {name!r} lies outside the file (truncated or damaged)")
    return {name: entry for name, entry in header.items() if name != "__metadata__"}


def weight_files(folder: Path) -> list[Path]:
    """The safetensors file(s) of a model folder, each header checked; pickles are refused by name."""
    single = folder / WEIGHTS_FILE
    if single.is_file():
        safetensors_header(single)
        return [single]
    index = folder / SHARD_INDEX_FILE
    if index.is_file():
        data = read_json_file(index, "weight index")
        mapping = data.get("weight_map") if isinstance(data, dict) else None
        if not isinstance(mapping, dict) or not mapping:
            raise ModelError(f"{index}: no weight_map")
        shards = []
        for name in sorted(set(mapping.values())):
            shard = folder / str(name)
            if Path(str(name)).name != name or not shard.name.endswith(".safetensors") or not shard.is_file():
                raise ModelError(f"{index}: shard {name!r} is not a safetensors file of this folder")
            safetensors_header(shard)
            shards.append(shard)
        return shards
    pickled = [name for name in _PICKLES if (folder / name).is_file()]
    if pickled:
        raise ModelError(
            f"{folder / pickled[0]}: a pickled checkpoint; Curalink loads weights only from "
            f"{WEIGHTS_FILE} (safetensors), never pickles (they can run code). Convert the model to "
            "safetensors with the tool that made it"
        )
    raise ModelError(f"{folder}: no {WEIGHTS_FILE}")


def check_weights_match_config(folder: Path, config: dict) -> None:
    """config.json's sizes agree with the tensors stored (else a crafted config could allocate gigabytes)."""
    shapes: dict[str, list[int]] = {}
    for path in weight_files(folder):
        shapes.update({name: entry["shape"] for name, entry in safetensors_header(path).items()})

    def stored(suffix: str) -> list[int] | None:
        return next((shape for name, shape in shapes.items() if name.endswith(suffix)), None)

    words = stored("embeddings.word_embeddings.weight")
    positions = stored("embeddings.position_embeddings.weight")
    layers = {name.split("encoder.layer.")[1].split(".")[0] for name in shapes if "encoder.layer." in name}
    expected = {
        "vocab_size x hidden_size": (words, [config.get("vocab_size"), config.get("hidden_size")]),
        "max_position_embeddings": (
            positions[:1] if positions else None,
            [config.get("max_position_embeddings")],
        ),
        "num_hidden_layers": ([len(layers)], [config.get("num_hidden_layers")]),
    }
    for what, (found, wanted) in expected.items():
        if found != wanted:
            raise ModelError(
                f"{folder / CONFIG_FILE}: {what} {wanted} does not match the weights stored ({found}); "
                "the folder's config and weights do not belong together"
            )


def bert_config(folder: str | Path, **overrides):
    """A BertConfig from a checked folder (overrides such as num_labels applied)."""
    from transformers import BertConfig

    folder = Path(folder)
    check_bert_config(folder)
    try:
        config = BertConfig.from_pretrained(str(folder), local_files_only=True, trust_remote_code=False)
    except (OSError, ValueError, TypeError) as exc:
        raise ModelError(f"{folder / CONFIG_FILE}: not a usable BERT configuration ({exc})") from exc
    for key, value in overrides.items():
        setattr(config, key, value)
    return config


def load_bert_tokenizer(folder: str | Path):
    """The folder's WordPiece tokenizer (BertTokenizer, Rust-backed), never a class the folder names."""
    from transformers import BertTokenizer

    folder = Path(folder)
    check_bert_config(folder)
    if not ((folder / "vocab.txt").is_file() or (folder / "tokenizer.json").is_file()):
        raise ModelError(f"{folder}: no tokenizer (vocab.txt or tokenizer.json)")
    try:
        return BertTokenizer.from_pretrained(str(folder), local_files_only=True, trust_remote_code=False)
    except Exception as exc:  # OSError, ValueError, the tokenizers library's own exception types
        raise ModelError(f"{folder}: cannot load the tokenizer ({type(exc).__name__}: {exc})") from exc


def _load(model_class, folder: Path, what: str, **overrides):
    """Always in float32: transformers 5 keeps a checkpoint's own dtype, and a base folder saved in
    float16 or bfloat16 would then be fine-tuned in half precision (AdamW loses most updates there)."""
    import torch
    import transformers

    config = bert_config(folder, **overrides)
    check_weights_match_config(folder, config.to_dict() | {"vocab_size": config.vocab_size})
    dtype_key = "dtype" if int(transformers.__version__.split(".")[0]) >= 5 else "torch_dtype"
    try:
        return model_class.from_pretrained(
            str(folder),
            config=config,
            local_files_only=True,
            use_safetensors=True,
            trust_remote_code=False,
            **{dtype_key: torch.float32},
        )
    except Exception as exc:  # safetensors, torch and transformers raise several types for a bad file
        raise ModelError(f"{folder}: cannot load the {what} ({type(exc).__name__}: {exc})") from exc


def load_token_classifier(folder: str | Path, num_labels: int | None = None):
    """BertForTokenClassification (the reranker's architecture) from a checked folder."""
    from transformers import BertForTokenClassification

    overrides = {"num_labels": num_labels} if num_labels is not None else {}
    return _load(BertForTokenClassification, Path(folder), "token-classification model", **overrides)


def load_bert_encoder(folder: str | Path):
    """BertModel (the bi-encoder baseline's architecture) from a checked folder."""
    from transformers import BertModel

    return _load(BertModel, Path(folder), "BERT encoder")


def token_classifier_class(folder: str | Path) -> type:
    """The class a reranker folder is loaded with (imports the modeling code; reads only config.json)."""
    from transformers import BertForTokenClassification

    check_bert_config(Path(folder))
    return BertForTokenClassification
