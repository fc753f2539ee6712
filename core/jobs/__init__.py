"""The operations on a project: the only code that touches both the store and the stages.

Training, evaluating, retraining, promoting and rolling back model versions (one `ModelKind` registry,
one `publish_version`, one promotion rule), linking and re-suggesting, finding mentions, live learning.
The CLI and the desk call these and nothing below them. Four rooms, by concern: `curation/` (decisions,
undo, learnt synonyms), `models/` (kinds, training, promotion), `linking/` (suggestions, detection,
batch), `io/` (corpora, KB export, PubMed). The package face imports nothing heavy:
import the module you need (`core.jobs.models.retrain`, `core.jobs.linking.suggestions`, ...).
"""
