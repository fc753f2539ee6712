"""A MeSH-like desk project for screenshots of long, tree-numbered names (issue 31): MeSH's C-tree
descriptors with their tree numbers (dhimmel's 2015 tables) and entry terms (MeSH 2024), 30 NCBI-disease
test abstracts, a retriever trained briefly on the KB's synonyms, every document linked.

`python -m bench.gui.mesh_project OUT [--train-seconds 60]`, with CURALINK_SHARED_DATA set to the shared
data folder (its files are read, never copied into the repository). About 3 minutes on 2 loaded cores."""

from __future__ import annotations

import argparse
import csv
import gzip
import itertools
import os
import sys
from pathlib import Path

SYNONYMS_PER_CONCEPT = 30


def write_kb(data: Path, out: Path) -> Path:
    """id / name / synonyms / tree number rows (one per tree number) for the C (Diseases) tree."""
    trees: dict[str, list[str]] = {}
    names: dict[str, str] = {}
    with open(data / "vocab/mesh-dhimmel/tree-numbers.tsv", encoding="utf-8") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            if row["mesh_tree_number"].startswith("C"):
                trees.setdefault(row["mesh_id"], []).append(row["mesh_tree_number"])
                names[row["mesh_id"]] = row["mesh_name"]
    synonyms: dict[str, list[str]] = {}
    with gzip.open(data / "vocab/mesh2024/descriptor_terms.tsv.gz", "rt", encoding="utf-8") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            wanted = row["DescriptorUI"] in trees and row["IsPermutedTermYN"] != "Y"
            if wanted and row["TermName"] != row["DescriptorName"]:
                synonyms.setdefault(row["DescriptorUI"], []).append(row["TermName"])
    with open(out, "w", encoding="utf-8") as f:
        f.write("mesh_id\tmesh_name\tsynonyms\ttree_number\n")
        for mesh_id, numbers in trees.items():
            entry = "|".join(synonyms.get(mesh_id, [])[:SYNONYMS_PER_CONCEPT])
            for number in numbers:
                f.write(f"{mesh_id}\t{names[mesh_id]}\t{entry}\t{number}\n")
    return out


def main(argv: list[str] | None = None) -> int:
    from core.formats import read_corpus
    from core.jobs.linking.suggestions import ProjectLinker
    from core.jobs.models.kinds import train
    from core.kb import load_kb
    from core.store import Project

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out", type=Path, help="the project folder to create")
    parser.add_argument("--train-seconds", type=float, default=60.0)
    args = parser.parse_args(argv)
    data = Path(os.environ.get("CURALINK_SHARED_DATA", ""))
    if not (data / "vocab/mesh-dhimmel/tree-numbers.tsv").is_file():
        sys.stderr.write("set CURALINK_SHARED_DATA to the shared data folder (vocab/, ncbi-disease/)\n")
        return 2
    args.out.parent.mkdir(parents=True, exist_ok=True)
    kb_file = write_kb(data, args.out.parent / f"{args.out.name}-mesh-c.tsv")
    project = Project.create(args.out)
    project.kb.import_concepts(load_kb(kb_file, "tsv"), source=str(kb_file), fmt="tsv")
    corpus = data / "ncbi-disease/NCBItestset_corpus.txt"
    documents = itertools.islice(read_corpus(corpus, "pubtator"), 30)
    project.documents.import_documents(documents, source=str(corpus), fmt="pubtator", split="test")
    train(project, "retriever", epochs=2, max_seconds=args.train_seconds, include_gold=False)
    ProjectLinker.for_project(project).link_project(project)
    project.close()
    sys.stdout.write(f"built {args.out}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
