"""Candidate retrieval: ResCNN + FAISS over every KB name, and baselines behind one protocol."""
