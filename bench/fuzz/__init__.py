"""Reader fuzz targets and the crafted bad-input corpus (`curalink bench fuzz`, `bench bad-inputs`)."""
