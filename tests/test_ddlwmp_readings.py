"""The declared readings of ddlwmp are the keywords its algorithms take, with the same defaults."""

from __future__ import annotations

import inspect
import re
import subprocess
from pathlib import Path

import pytest

from optkit.formulations.ddlwmp import FORMULATION
from optkit.formulations.ddlwmp.a_srpt import ASRPT
from optkit.formulations.ddlwmp.policies import QueuePolicy
from optkit.errors import InputError
from optkit.readings import readings_for, resolve_params
from optkit.solve import solve
from tests.ddlwmp_cases import random_instance_dict
from tests.needs import missing


def _target(name: str):
    run = FORMULATION.algorithms[name].run
    fn = getattr(run, "target", None)
    return fn() if callable(fn) else run


@pytest.mark.parametrize("algorithm", sorted(FORMULATION.algorithms))
def test_every_reading_is_an_explicit_keyword_with_the_declared_default(algorithm: str) -> None:
    params = inspect.signature(_target(algorithm)).parameters
    assert not any(p.kind is p.VAR_KEYWORD for p in params.values()), "readings must be explicit keywords"
    for r in readings_for(FORMULATION, algorithm):
        assert r.name in params, f"{algorithm} does not take reading {r.name}"
        assert params[r.name].kind is params[r.name].KEYWORD_ONLY
        assert params[r.name].default == r.default, (algorithm, r.name)
        assert r.name in (_target(algorithm).__doc__ or ""), f"{algorithm}'s docstring does not name {r.name}"


def test_policy_classes_default_to_the_declared_readings() -> None:
    asrpt = inspect.signature(ASRPT.__init__).parameters
    queue = inspect.signature(QueuePolicy.__init__).parameters
    for r in FORMULATION.readings:
        users = [a for a in r.algorithms]
        if any(a.startswith("a-srpt") for a in users):
            assert asrpt[r.name].default == r.default, r.name
        elif users:
            assert queue[r.name].default == r.default, r.name


def test_resolve_params_fills_every_a_srpt_reading() -> None:
    got = resolve_params(FORMULATION, "a-srpt", {"tau": "3"})
    assert got == {"comm_heavy": 1.5, "comm_heavy_test": "ge", "delay_blocks_queue": True, "head_of_line": "strict",
                   "light_placement": "best-fit", "tau": 3}
    # the baselines' better option (issue 23)
    assert resolve_params(FORMULATION, "fifo", None) == {"consolidate": False}


def test_bad_reading_values_are_input_errors_naming_the_parameter() -> None:
    data = random_instance_dict(0)
    with pytest.raises(InputError, match="light_placement"):
        solve("ddlwmp", data, "a-srpt", params={"light_placement": "worst-fit"})
    with pytest.raises(InputError, match="tau"):
        solve("ddlwmp", data, "a-srpt", params={"tau": -1})
    with pytest.raises(InputError, match="tau"):
        solve("ddlwmp", data, "spjf", params={"tau": 1})


# ----------------------------------------------------------------------------- histories (issue 34 §5)
_CITED = re.compile(r"\b([0-9a-f]{7})\b(?:,| \((?:issue \d+, )?)\s*(\d{4}-\d{2}-\d{2})")


def _git(*args: str) -> str:
    root = Path(__file__).resolve().parents[1]
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True).stdout.strip()


def test_every_history_cites_real_commits_and_post_hoc_follows_them() -> None:
    """Each ddlwmp reading's ``history`` names the commits its options arrived in, each with its
    date: every cited commit exists and was made on the date given beside it. ``post_hoc`` follows
    those commits: a post-hoc reading cites one made after the first Sec. V results
    (``FIRST_SEC5_RESULTS``), and a reading that is not post hoc either cites none after them or
    has a single option (declaring an existing behaviour adds no option)."""
    from optkit.formulations.ddlwmp.readings import FIRST_SEC5_RESULTS, READINGS

    first, when = FIRST_SEC5_RESULTS.split(", ")
    cited = {r.name: set(re.findall(r"\b[0-9a-f]{7}\b", r.history)) for r in READINGS}
    try:
        _git("rev-parse", "--verify", f"{first}^{{commit}}")
    except (OSError, subprocess.CalledProcessError):
        missing("the git history of the repository (the readings' histories cite its commits)")
    short = sorted({first}.union(*cited.values()))
    absent = [h for h in short if subprocess.run(["git", "-C", str(Path(__file__).resolve().parents[1]), "cat-file",
                                                  "-e", f"{h}^{{commit}}"], capture_output=True).returncode]
    assert not absent, f"histories cite commits that do not exist: {absent}"
    full = dict(zip(short, _git("rev-parse", *(f"{h}^{{commit}}" for h in short)).split()))
    dates = dict(line.split(" ", 1) for line in _git("log", "--no-walk=unsorted", "--format=%H %ad",
                                                     "--date=format:%Y-%m-%d %H:%M", *full.values()).splitlines())
    assert dates[full[first]] + " UTC" == when
    later = set(_git("rev-list", "--ancestry-path", f"{full[first]}..HEAD").split())
    for r in READINGS:
        dated = _CITED.findall(r.history)
        assert dated, f"{r.name}: no commit with its date in the history"
        for commit, day in dated:
            assert dates[full[commit]][:10] == day, (r.name, commit)
        if r.name in ("single_gpu_weight", "server_start"):
            continue  # gpu-mapping's readings: their first results are gpu-mapping's
        after = [h for h in cited[r.name] if full[h] in later]
        if r.post_hoc:
            assert after and "after" in r.history, r.name
        else:
            assert not after or len(r.options) == 1, (r.name, after)
