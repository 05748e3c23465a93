"""The store's memo (optkit.memo): parts a reading does not touch are computed once per store.

What is checked: a memoised part is computed once and its value equals a fresh computation;
numpy values come back as Python numbers either way (hits equal misses); a torn file is computed
again; without a folder nothing is kept; the ddlwmp policy runs and the nimp replay summaries
are memoised under keys that split every reading the part reads and nothing else; and
``reproduce`` with the memo measures exactly what it measures without it, computing fewer runs.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from optkit import memo
from optkit.formulations.ddlwmp import claims as ddlwmp_claims
from optkit.formulations.ddlwmp.sec5 import (A_SRPT_READINGS, HEAVY_EDGE_READINGS, compare, instance_of,
                                              policy_readings, run_policy_readout)
from optkit.formulations.nimp import claims as nimp_claims


def _counter() -> tuple[list[int], Any]:
    calls: list[int] = []

    def part() -> dict[str, Any]:
        calls.append(1)
        return {"total": np.float64(1.25), "counts": np.arange(3), "name": "fifo", "inf": math.inf}

    return calls, part


def test_a_part_is_computed_once_per_folder_and_equals_a_fresh_one(tmp_path: Path) -> None:
    calls, part = _counter()
    with memo.using(tmp_path):
        assert memo.active()
        a = memo.cached("t", {"policy": "fifo", "seed": 0}, part)
        b = memo.cached("t", {"policy": "fifo", "seed": 0}, part)
        c = memo.cached("t", {"policy": "fifo", "seed": 1}, part)
    assert len(calls) == 2  # seed 1 is another key
    fresh = memo.cached("t", {"policy": "fifo", "seed": 0}, part)  # no folder: computed, same round trip
    assert a == b == c == fresh == {"total": 1.25, "counts": [0, 1, 2], "name": "fifo", "inf": math.inf}
    assert type(a["total"]) is float and type(fresh["total"]) is float
    assert len(list((tmp_path / "t").glob("*.json"))) == 2
    assert not memo.active()


def test_no_folder_keeps_nothing_and_a_missing_folder_is_no_memo(tmp_path: Path) -> None:
    calls, part = _counter()
    memo.cached("t", 1, part)
    memo.cached("t", 1, part)
    with memo.using(tmp_path / "absent"):
        assert not memo.active()
        memo.cached("t", 1, part)
    assert len(calls) == 3 and not (tmp_path / "absent").exists()


def test_a_torn_file_is_computed_again_and_replaced(tmp_path: Path) -> None:
    calls, part = _counter()
    with memo.using(tmp_path):
        memo.cached("t", 7, part)
        (f,) = (tmp_path / "t").glob("*.json")
        f.write_text('{"total": 1.2')  # torn write
        assert memo.cached("t", 7, part)["total"] == 1.25
        assert json.loads(f.read_text())["total"] == 1.25
    assert len(calls) == 2


def test_a_value_json_cannot_hold_is_refused(tmp_path: Path) -> None:
    with memo.using(tmp_path), pytest.raises(TypeError, match="JSON cannot hold"):
        memo.cached("t", 1, lambda: {"x": object()})


# ----------------------------------------------------------------------------- ddlwmp policy runs
def _instance() -> Any:
    r = ddlwmp_claims._r({})
    return instance_of(ddlwmp_claims._workload(r, jobs=60, scale="ci", seed=4)), r


def _without_wall(runs: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {p: {k: v for k, v in x.items() if k != "wall_s"} for p, x in runs.items()}


def test_a_policy_run_reads_only_its_own_readings() -> None:
    inst, r = _instance()
    for name in ("a-srpt", "spjf", "wcs-subtime"):
        own = policy_readings(name, r)
        expected = (*HEAVY_EDGE_READINGS, *(A_SRPT_READINGS if name == "a-srpt" else ("consolidate",)))
        assert sorted(own) == sorted(expected)
        full = run_policy_readout(inst, name, r, 4)
        only = run_policy_readout(inst, name, own, 4)
        full.pop("wall_s"), only.pop("wall_s")
        assert full == only


def test_compare_with_the_memo_reuses_the_runs_a_reading_does_not_touch(tmp_path: Path) -> None:
    inst, r = _instance()
    tau = dict(r, tau=1.0)
    cons = dict(r, consolidate=not r["consolidate"])
    plain = {name: _without_wall(compare(inst, x, 4)) for name, x in (("r", r), ("tau", tau), ("cons", cons))}
    assert plain["tau"]["a-srpt"] != plain["r"]["a-srpt"] or r["tau"] == 1.0
    runs = tmp_path / "ddlwmp-policy-run-v2"
    with memo.using(tmp_path):
        got = {"r": _without_wall(compare(inst, r, 4))}
        assert len(list(runs.glob("*.json"))) == 6
        got["tau"] = _without_wall(compare(inst, tau, 4))
        assert len(list(runs.glob("*.json"))) == 7  # A-SRPT again, the five baselines reused
        got["cons"] = _without_wall(compare(inst, cons, 4))
        assert len(list(runs.glob("*.json"))) == 12  # the five baselines again, A-SRPT reused
    assert got == plain


# ----------------------------------------------------------------------------- nimp replay summaries
def test_replay_summaries_are_memoised_per_policy_and_its_readings(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.test_nimp_claims import _write_trace

    _write_trace(tmp_path / "traces")
    monkeypatch.setenv("OPTKIT_TRACE_ROOT", str(tmp_path / "traces"))
    monkeypatch.setattr(nimp_claims, "_CACHE", {})
    plain = nimp_claims.measure_replay(readings={"tiresias_spread": "emptiest"}, seed=0, scale="ci")
    folder = tmp_path / "memo"
    folder.mkdir()
    summaries = folder / "nimp-replay-summary"
    monkeypatch.setattr(nimp_claims, "_CACHE", {})
    with memo.using(folder):
        first = nimp_claims.measure_replay(readings={"tiresias_spread": "emptiest"}, seed=0, scale="ci")
        assert len(list(summaries.glob("*.json"))) == 4  # one per policy
        monkeypatch.setattr(nimp_claims, "_CACHE", {})  # a new measurement process
        other = nimp_claims.measure_replay(readings={"tiresias_spread": "best-fit"}, seed=0, scale="ci")
        assert len(list(summaries.glob("*.json"))) == 5  # Tiresias again, the other three reused
    assert _no_wall(first) == _no_wall(plain)
    monkeypatch.setattr(nimp_claims, "_CACHE", {})
    assert _no_wall(other) == _no_wall(nimp_claims.measure_replay(readings={"tiresias_spread": "best-fit"}, seed=0,
                                                                  scale="ci"))


def _no_wall(m: dict[str, Any]) -> dict[str, Any]:
    """A replay measurement without its wall times (the only values a memo may not reproduce)."""
    out = json.loads(json.dumps(m))
    for x in out["_details"]["policies"].values():
        x.pop("replay_wall_s")
    return out


# ----------------------------------------------------------------------------- reproduce
def test_reproduce_with_the_memo_measures_what_it_measures_without(tmp_path: Path) -> None:
    """Under tau = 0 and 1 with the memo, the five baselines run once (under tau = 0) and are read
    back under tau = 1; the tau = 1 claims equal those of a run without the memo, which runs all
    six policies under tau = 1 (the tau = 0 claims, every run a miss, take the same JSON round
    trip with or without the memo, so the run without it skips tau = 0); a ``rerun`` empties the
    memo and measures again what the store holds.

    The rerun is made on ``titan-testbed`` (one measurement, no memoised part), measured beside
    the first run in the same store: emptying the memo folder and re-running every stored
    measurement is ``reproduce``'s own step (``if rerun: shutil.rmtree(folder)``, ``done =
    set()``), the same whatever the experiment, and a rerun of ``a-srpt-sec5-tau`` spent six
    ddlwmp policy runs to show it; that the memo then fills again as it did the first time is
    the first run's check. (Each ``reproduce`` call starts its own pool, a few CPU seconds: the
    test makes three, as before.)"""
    from optkit.reproduce import reproduce

    TAU = "a-srpt-sec5-tau"
    kw: dict[str, Any] = {"seeds": [0], "readings": {"tau": [0.0, 1.0]}, "scale": "ci", "jobs": 1, "progress": False}
    with_memo = reproduce(["a-srpt-sec5-tau", "a-srpt-testbed"], db=tmp_path / "a.sqlite", **kw)
    without = reproduce(["a-srpt-sec5-tau"], db=tmp_path / "b.sqlite", memo=False, **dict(kw, readings={"tau": [1.0]}))
    runs = tmp_path / "a.sqlite.memo" / "ddlwmp-policy-run-v2"
    assert len(list(runs.glob("*.json"))) == 7  # six runs under tau = 0, then A-SRPT alone under tau = 1
    assert not (tmp_path / "b.sqlite.memo").exists()

    def claims(m: Any, tau: bool = True) -> dict[tuple[str, int], dict[str, Any]]:
        return {(json.dumps(r["params"]["readings"], sort_keys=True), r["seed"]):
                {k: v for k, v in r["metrics"].items() if not k.startswith("_")} for r in m.rows
                if (r["instance_name"] == TAU) == tau}

    memo_tau1 = {k: v for k, v in claims(with_memo).items() if '"tau": 1.0' in k[0]}
    assert len(claims(with_memo)) == 2 and memo_tau1 == claims(without) and len(claims(without)) == 1
    testbed = [r["key"] for r in with_memo.rows if r["instance_name"] != TAU]
    assert len(testbed) == len(with_memo.rows) - 2 >= 1
    ran: list[str] = []
    rerun = reproduce(["a-srpt-testbed"], db=tmp_path / "a.sqlite", rerun=True, on_row=lambda r: ran.append(r["key"]),
                      **kw)
    assert not runs.exists() and (tmp_path / "a.sqlite.memo").is_dir()  # emptied (and made again)
    assert sorted(ran) == sorted(testbed)  # every stored measurement measured again
    assert claims(rerun, tau=False) == claims(with_memo, tau=False)
