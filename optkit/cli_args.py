"""Argument types and checks shared by every ``optkit`` verb, so each bad argument gets the same
one-line error and exit status 2 whatever the verb (see :mod:`optkit.cli`).

* :class:`OneLineParser`: argparse's own errors (a missing or malformed argument) as one line,
  ``optkit: error: solve: argument --seed: must be an integer >= 0, got '-5' (see optkit solve --help)``, instead
  of the usage block.
* :func:`seed_arg`, :func:`time_limit_arg`: types of ``--seed`` and ``--time-limit``. A time
  limit is a finite number of seconds > 0 in every verb; leave it out for none (``solve``,
  ``simulate``); ``inf`` is refused everywhere alike.
* :func:`check_out_file`: an output file whose folder must exist, checked before any work.
* :func:`parse_params`: ``--param KEY=VALUE`` of the verbs that run one setting (``solve``,
  ``generate``, ``worst-case``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, NoReturn, Sequence

from optkit.errors import InputError
from optkit.validation import SEED_MESSAGE, TIME_LIMIT_MESSAGE, check_seed, check_time_limit

__all__ = ["OneLineParser", "seed_arg", "time_limit_arg", "check_out_file", "write_out_file", "parse_params"]


class OneLineParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose usage errors are one line on stderr, exit status 2.

    A parser given a ``lazy_epilog`` attribute (a function returning text) shows it under
    ``--help``, computed only then (e.g. lists that import every formulation)."""

    def format_help(self) -> str:
        lazy = getattr(self, "lazy_epilog", None)
        if callable(lazy):
            self.epilog = lazy()
        return super().format_help()

    def error(self, message: str) -> NoReturn:
        verb = self.prog.partition(" ")[2]  # "optkit solve" -> "solve"
        print(f"optkit: error: {verb + ': ' if verb else ''}{message} (see {self.prog} --help)", file=sys.stderr)
        sys.exit(2)


def seed_arg(text: str) -> int:
    """``--seed``: an integer >= 0 (numpy's generators refuse negative seeds); the check and its
    words are :func:`optkit.validation.check_seed`'s, the Python API's."""
    try:
        value = check_seed(int(text))
    except (ValueError, InputError):
        raise argparse.ArgumentTypeError(f"{SEED_MESSAGE}, got {text!r}") from None
    assert value is not None
    return int(value)


def time_limit_arg(text: str) -> float:
    """``--time-limit``: a finite number of seconds > 0 (leave the option out for no limit); the
    check and its words are :func:`optkit.validation.check_time_limit`'s, the Python API's."""
    try:
        value = check_time_limit(float(text))
    except (ValueError, InputError):
        value = None
    if value is None:
        raise argparse.ArgumentTypeError(
            f"{TIME_LIMIT_MESSAGE}, got {text!r} (leave it out for no limit where a verb allows it)")
    return value


def parse_params(items: Sequence[str] | None) -> dict[str, Any]:
    """``key=value`` pairs, one value each (``solve``, ``generate`` and ``worst-case``); a value
    that parses as JSON is taken as JSON, otherwise a string. ``key=v1,v2`` is a sweep: only
    ``compare`` and ``simulate`` run those, so here it is an :class:`InputError` naming
    ``--param KEY``."""
    from optkit.readings import parse_param_values

    params: dict[str, Any] = {}
    for key, values in parse_param_values(items).items():
        if len(values) != 1:
            raise InputError(f"--param {key}", "takes one value here; sweep several with `optkit compare` "
                                               "or `optkit simulate`")
        params[key] = values[0]
    return params


def check_out_file(path: str | None, arg: str = "--out") -> None:
    """:class:`InputError` naming ``arg`` unless ``path`` can be written: its folder exists and it
    is not a folder itself. ``None`` passes."""
    if path is None:
        return
    p = Path(path)
    if p.is_dir():
        raise InputError(arg, f"{path} is a folder; give a file name")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise InputError(arg, f"{path}: the folder {parent} does not exist")


def write_out_file(path: str | Path, text: str, arg: str = "--out") -> None:
    """Write ``text`` to ``path`` (checked with :func:`check_out_file`); an OS error is an
    :class:`InputError` naming ``arg``."""
    check_out_file(str(path), arg)
    try:
        Path(path).write_text(text)
    except OSError as exc:
        raise InputError(arg, f"{path} cannot be written: {exc.strerror or exc}") from None


_ENCODE = json.JSONEncoder().encode  # the C encoder (it serves only indent=None): json.dumps's defaults


def write_schedule(path: str | Path, solution: Any, arg: str = "--out", chunk: int = 4096) -> None:
    """Write a solution as JSON; an object whose only key is ``"jobs"`` (a schedule) is written one
    job per line, ``{"jobs": [`` / ``{...},`` / ``]}``, each job by the C encoder, ``chunk`` jobs
    at a time: the same values as ``json.dumps(solution, indent=1)``, several times faster, without
    the whole text in memory. Other solutions are written as before (indented). Errors as
    :func:`write_out_file`."""
    jobs = solution.get("jobs") if isinstance(solution, dict) and list(solution) == ["jobs"] else None
    if not isinstance(jobs, list):
        write_out_file(path, json.dumps(solution, indent=1) + "\n", arg)
        return
    check_out_file(str(path), arg)
    try:
        with open(path, "w") as f:
            f.write('{"jobs": [')
            for i in range(0, len(jobs), chunk):
                f.write(("\n" if i == 0 else ",\n") + ",\n".join(map(_ENCODE, jobs[i:i + chunk])))
            f.write("\n]}\n" if jobs else "]}\n")
    except OSError as exc:
        raise InputError(arg, f"{path} cannot be written: {exc.strerror or exc}") from None
