"""The operations on a project: the only code that touches both the store and the stages.

Training, evaluating, retraining, promoting and rolling back model versions (one `ModelKind` registry,
one `publish_version`, one promotion rule), linking and re-suggesting, finding mentions, live learning.
The CLI and the desk call these and nothing below them. The package face imports nothing heavy:
import the module you need (`core.jobs.retrain`, `core.jobs.linking`, ...).
"""
