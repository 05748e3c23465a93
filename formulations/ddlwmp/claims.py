"""Sec. V of the A-SRPT paper as claims (filled in below)."""

from __future__ import annotations

EXPERIMENTS: dict = {}
