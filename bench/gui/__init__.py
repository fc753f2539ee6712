"""The desk benchmarks (real Qt windows) and the README screenshot."""
