"""Error types shared by the engine and every formulation.

Bad input is the user's to fix, so it gets one readable line that names the offending field
(``stages[2].replicas must be >= 1, got 0``); the CLI prints it on stderr and exits with status 2.
Anything else that goes wrong is an internal failure (status 1).
"""

from __future__ import annotations

__all__ = ["InputError", "OptkitError"]


class OptkitError(Exception):
    """Base class of every exception optkit raises on purpose."""


class InputError(OptkitError, ValueError):
    """Invalid input: an instance, a solution, a parameter or a file.

    Parameters
    ----------
    field
        Dotted path of the offending field, e.g. ``job.stages[2].replicas``.
    message
        What is wrong with it, e.g. ``must be >= 1, got 0``.
    problem
        The problem name (``gpu-mapping``) when known; it prefixes the message.
    """

    def __init__(self, field: str, message: str, *, problem: str | None = None) -> None:
        self.field = field
        self.message = message
        self.problem = problem
        prefix = f"{problem}: " if problem else ""
        super().__init__(f"{prefix}{field} {message}" if field else f"{prefix}{message}")

    def with_problem(self, problem: str) -> "InputError":
        """The same error, prefixed with ``problem`` if it had no problem yet."""
        if self.problem:
            return self
        return InputError(self.field, self.message, problem=problem)
