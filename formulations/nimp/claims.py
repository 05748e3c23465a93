"""The Titan paper's quantitative claims (filled below)."""

from __future__ import annotations

EXPERIMENTS: dict = {}
