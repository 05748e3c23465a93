"""Sec. 7 experiments (filled in below)."""

EXPERIMENTS: dict = {}
