"""Metrics the CLI, the desk and the benchmark commands share: retrieval, ranking, detection and
end-to-end scores. The benchmark harnesses themselves live in bench/."""
