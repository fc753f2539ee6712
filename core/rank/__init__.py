"""The learned ranking stage: per-candidate features, a logistic model and a calibrated probability."""
