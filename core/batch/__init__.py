"""Batch linking of whole collections (`curalink link-batch`) and bringing the results back
(`curalink import-linked`).

A batch reads input shards (PubTator, BioC XML / JSON, JSONL, PubMed XML, JATS; gzip too), runs
detect (when asked) -> retrieve -> rank -> rerank through the one `Linker` with a project's models
in force, and writes one linked shard per input plus `manifest.json`. Its KB and models come from a
Curalink project folder, opened read-only: a batch never writes the project.

- `models`: what a worker loads (`BatchSpec`), the identity a manifest records, the name index made
  ready once before workers start;
- `worker`: `ShardLinker`, loaded once per worker (process or Ray actor), links one shard at a time;
- `linked`: candidates into mention infons and back;
- `manifest`: the output folder's record: finished shards with their input hashes, refusals; its
  shard names are checked as untrusted input (plain file names inside the folder, no links);
- `kb_identity`: which KB a folder was linked against (the base KB; curator synonyms recorded apart);
- `plan`: inputs -> shard tasks (formats, output names, what is finished already);
- `engines`: local (in-process or N spawned processes) and Ray Data;
- `deletions`: PubMed DeleteCitation across the shards of one run;
- `job`: `run_batch`, the one entry point front ends call;
- `import_linked`: linked shards into a project as suggestions, each checked whole first
  (`shard_check`).
"""

from core.batch.job import BatchSummary, run_batch

__all__ = ["BatchSummary", "run_batch"]
