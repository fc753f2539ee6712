"""Synthetic inputs built from real formats: projects, PubMed XML, MRCONSO.RRF, link-batch shards."""
