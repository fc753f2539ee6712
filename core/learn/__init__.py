"""Learning from the project: training sets from gold and decisions, training jobs, model versions."""
