"""Experiments of gpu-mapping (filled in by the next commit)."""

EXPERIMENTS: dict = {}
