"""Files and servers: corpus import and export, KB export, and PubMed fetching over E-utilities."""
