"""Metrics and benchmark harnesses shared by the CLI, the GUI and the README figures."""
