"""The registered claims, per paper section, and the one rule they are registered by (issue 23 §3).

A claim cannot silently disappear: the test lists every registered claim per paper and section,
and the registry must hold exactly these. Every claim's tolerance follows
``optkit.claims.rule_tolerance``; a range "a% to b%" is two approx claims in every paper; claims
measured on another testbed, hardware, solver or trace are "not comparable" with their reason.
"""

from __future__ import annotations

import pytest

from optkit.claims import (INCOMPARABLE_KINDS, NO_PAPER_VALUE, REL_TOLERANCE, Claim, overall_verdict, range_claims,
                           rule_tolerance, verdict)
from optkit.reproduce import experiments

REGISTERED = {
    "a-srpt": {
        "Sec. IV-C-3 (the PAI trace, the forest's training)": [
            "a-srpt-pai-recurring-share", "a-srpt-prediction-train-time-pai"],
        "Sec. V-A (testbed, Fig. 4, Fig. 5)": [
            "a-srpt-testbed-vs-perfect", "a-srpt-testbed-max-reduction", "a-srpt-testbed-overhead",
            "a-srpt-prediction-correct-share", "a-srpt-prediction-train-time"],
        "Sec. V-B-2-a, Fig. 6": [
            "a-srpt-fig6-min-reduction", "a-srpt-fig6-max-reduction", "a-srpt-fig6-spjf-worst",
            "a-srpt-tau-min-reduction", "a-srpt-tau-max-reduction", "a-srpt-tau-spjf-worst"],
        "Sec. V-B-2-b, Fig. 7": ["a-srpt-fig7-reduction-80", "a-srpt-fig7-reduction-0", "a-srpt-fig7-gain-grows",
                                 "a-srpt-pai-single-gpu-share"],
        "Sec. V-B-2-c, Fig. 8": ["a-srpt-fig8-vs-wcs-duration-50g", "a-srpt-fig8-max-reduction-1g"],
        "Sec. V-B-2-d, Fig. 9": [
            "a-srpt-fig9-rf-vs-perfect", "a-srpt-fig9-mean-vs-rf", "a-srpt-fig9-mae-rf", "a-srpt-fig9-mae-median",
            "a-srpt-fig9-mae-mean", "a-srpt-prediction-mae", "a-srpt-prediction-vs-perfect"],
        "Sec. V-B-2-e, Table II": [
            "a-srpt-table2-vgg19-he-pitt", "a-srpt-table2-vgg19-opt-pitt", "a-srpt-table2-vgg19-gap",
            "a-srpt-table2-vgg19-he-pct", "a-srpt-table2-vgg19-opt-pct", "a-srpt-table2-gpt175b-he-pitt",
            "a-srpt-table2-gpt175b-opt-pitt", "a-srpt-table2-gpt175b-gap", "a-srpt-table2-gpt175b-he-pct",
            "a-srpt-table2-gpt175b-opt-pct", "a-srpt-heavy-edge-speedup"],
        "Sec. IV-B (alpha~min)": ["a-srpt-table2-vgg19-alpha-min", "a-srpt-table2-gpt175b-alpha-min"],
    },
    "sjf-bco": {
        "Sec. 6 (Lemmas 2-3, Theorem 5)": ["sjf-bco-lemma2-gap", "sjf-bco-lemma3-ratio", "sjf-bco-theorem5-ratio"],
        "Sec. 7, Fig. 4": ["sjf-bco-fig4-makespan-vs-best-baseline", "sjf-bco-fig4-jct-vs-best-baseline"],
        "Sec. 7, Fig. 5": ["sjf-bco-fig5-turning-points", "sjf-bco-fig5-drop-rise-drop"],
        "Sec. 7, Fig. 6": ["sjf-bco-fig6-sjf-bco-reduction", "sjf-bco-fig6-ff-reduction", "sjf-bco-fig6-ls-reduction",
                           "sjf-bco-fig6-ff-largest-reduction"],
        "Sec. 7, Fig. 7": ["sjf-bco-fig7-increases", "sjf-bco-fig7-reduction"],
    },
    "titan": {
        "Abstract": ["titan-abstract-profit-rate"],
        "Sec. II (Fig. 1)": ["titan-fig1-titan-cross", "titan-fig1-hived-cross", "titan-fig1-elasticflow-cross",
                             "titan-fig1-titan-vs-hived-cross", "titan-fig1-titan-vs-elasticflow-launched"],
        "Sec. IV (Theorems 4-5)": ["titan-theorem4-ratio", "titan-theorem5-ratio"],
        "Sec. V-B, Exp#1": ["titan-exp1-used-titan", "titan-exp1-used-elasticflow", "titan-exp1-used-hived",
                            "titan-exp1-used-tiresias", "titan-exp1-vs-elasticflow", "titan-exp1-vs-tiresias",
                            "titan-exp1-vs-hived"],
        "Sec. V-B, Exp#2": ["titan-exp2-frag-titan", "titan-exp2-frag-elasticflow", "titan-exp2-frag-hived",
                            "titan-exp2-frag-tiresias"],
        "Sec. V-B, Exp#3": ["titan-exp3-vs-tiresias", "titan-exp3-vs-hived"],
        "Sec. V-B, Exp#4": ["titan-exp4-profit-vs-elasticflow", "titan-exp4-profit-ratio-tiresias",
                            "titan-exp4-profit-ratio-hived", "titan-exp4-total-profit-ratio-elasticflow",
                            "titan-exp4-total-profit-ratio-tiresias", "titan-exp4-total-profit-ratio-hived"],
        "Sec. V-C, Exp#5": ["titan-exp5-hours-titan", "titan-exp5-hours-elasticflow", "titan-exp5-hours-tiresias",
                            "titan-exp5-hours-hived", "titan-exp5-vs-elasticflow", "titan-exp5-vs-tiresias",
                            "titan-exp5-vs-hived"],
        "Sec. V-C, Exp#6": ["titan-exp6-throughput-elasticflow", "titan-exp6-throughput-titan",
                            "titan-exp6-throughput-tiresias", "titan-exp6-throughput-hived",
                            "titan-exp6-vs-elasticflow"],
        "Sec. V-C, Exp#7 and Fig. 12": [
            "titan-exp7-comm-elasticflow", "titan-exp7-comm-titan", "titan-exp7-comm-tiresias", "titan-exp7-comm-hived",
            "titan-exp7-vs-elasticflow", "titan-exp7-vs-tiresias", "titan-fig12-accuracy", "titan-fig12-time-titan",
            "titan-fig12-time-elasticflow", "titan-fig12-time-tiresias", "titan-fig12-time-hived"],
    },
    "llm": {
        "Sec. VI, Heavy-Edge vs the exact model on tensor-parallel and MoE jobs": [
            f"llm-gpu-mapping-{kind}-{gpus}-{what}" for gpus in (8, 32, 128, 256) for kind in ("tp", "moe")
            for what in ("gap", "he-time", "exact-time", "proven")],
        "Sec. VI, A-SRPT vs the baselines with 3D-parallel and MoE jobs": [
            "llm-a-srpt-vs-best-baseline", "llm-a-srpt-vs-worst-baseline", "llm-tp-job-share", "llm-moe-job-share"],
    },
}
"""Every registered claim, per paper and section. A claim added or removed must be added or
removed here too."""

TESTBED = {"a-srpt-testbed-vs-perfect", "a-srpt-testbed-max-reduction", "a-srpt-testbed-overhead",
           *REGISTERED["titan"]["Sec. V-C, Exp#5"], *REGISTERED["titan"]["Sec. V-C, Exp#6"],
           *REGISTERED["titan"]["Sec. V-C, Exp#7 and Fig. 12"], "titan-abstract-profit-rate"}


def _claims() -> dict[str, tuple[str, Claim]]:
    # the test-only plugin "coin" (tests/plugins/coin.py) may be registered by another test module
    return {c.id: (e.paper, c) for f, e in experiments().values() if f.name != "coin" for c in e.claims}


def test_the_registry_holds_exactly_the_listed_claims_per_paper() -> None:
    got = _claims()
    listed = {cid: paper for paper, sections in REGISTERED.items() for ids in sections.values() for cid in ids}
    assert sum(len(ids) for s in REGISTERED.values() for ids in s.values()) == len(listed)  # no id listed twice
    assert {cid: paper for cid, (paper, _) in got.items()} == listed


def test_every_tolerance_follows_the_one_rule() -> None:
    for cid, (_, c) in _claims().items():
        if c.paper_value is None:  # the paper states no number: nothing to be within (test below)
            continue
        if c.comparison == "approx":
            assert c.tolerance == max(REL_TOLERANCE * abs(c.paper_value), c.precision, c.resolution), cid
            assert c.precision > 0 or c.paper_value == 0 or c.unit in ("K", "ratio"), cid
        else:
            assert c.tolerance == c.resolution, cid
    assert rule_tolerance(4.0, precision=0.5) == 0.5 and rule_tolerance(174, precision=0.5) == pytest.approx(17.4)
    with pytest.raises(TypeError):
        # no tolerance argument any more: a ninth positional value is refused
        Claim("c", "w", 1.0, "%", "s", "approx", "", ("ci", "paper"), 0.5)  # type: ignore[misc]


def test_a_range_is_two_approx_ends_in_every_paper() -> None:
    """Fig. 6's '31% to 91%', Fig. 7's '16% to 57%' and Exp#3's '40.6%-76.4%' are registered alike."""
    claims = _claims()
    for low, high, a, b in [("a-srpt-fig6-min-reduction", "a-srpt-fig6-max-reduction", 31, 91),
                            ("a-srpt-tau-min-reduction", "a-srpt-tau-max-reduction", 31, 91),
                            ("a-srpt-fig7-reduction-80", "a-srpt-fig7-reduction-0", 16, 57),
                            ("titan-exp3-vs-tiresias", "titan-exp3-vs-hived", -40.6, -76.4)]:
        lo, hi = claims[low][1], claims[high][1]
        assert (lo.comparison, hi.comparison) == ("approx", "approx")
        assert (lo.paper_value, hi.paper_value) == (a, b)
        assert "low end of the range" in lo.where and "high end of the range" in hi.where
        assert lo.tolerance == pytest.approx(0.1 * abs(a)) and hi.tolerance == pytest.approx(0.1 * abs(b))
    ends = range_claims("x-lo", "x-hi", "w", 31.0, 91.0, "%", "min", "max", precision=0.5)
    assert [c.tolerance for c in ends] == [pytest.approx(3.1), pytest.approx(9.1)]


def test_incomparable_claims_say_why_and_still_show_both_values() -> None:
    claims = _claims()
    for cid in TESTBED:
        assert claims[cid][1].incomparable.startswith("testbed:"), cid
    for cid in ("a-srpt-table2-vgg19-opt-pct", "a-srpt-table2-gpt175b-opt-pct", "a-srpt-heavy-edge-speedup"):
        assert claims[cid][1].incomparable.startswith("solver:"), cid
    for cid in ("a-srpt-table2-vgg19-he-pct", "a-srpt-table2-gpt175b-he-pct"):
        assert claims[cid][1].incomparable.startswith("hardware:"), cid
    for cid in REGISTERED["titan"]["Sec. V-B, Exp#2"] + ["titan-exp4-profit-vs-elasticflow",
                                                        "titan-exp4-profit-ratio-tiresias",
                                                        "titan-exp4-profit-ratio-hived"]:
        assert claims[cid][1].incomparable.startswith("private trace:"), cid
    for cid, (_, c) in claims.items():
        assert not c.incomparable or c.incomparable.split(":")[0] in INCOMPARABLE_KINDS
    # comparable claims of trace 1 stay comparable
    assert not claims["titan-exp1-vs-elasticflow"][1].incomparable
    assert not claims["titan-exp4-total-profit-ratio-elasticflow"][1].incomparable
    c = claims["titan-exp2-frag-titan"][1]
    v = verdict(c, [7.4, 7.5], "paper")
    assert (v.reproduces, v.mean) == (None, pytest.approx(7.45)) and v.text.startswith("not comparable: private trace")
    assert overall_verdict({"default": v}, claim=c).startswith("not comparable: private trace")
    with pytest.raises(ValueError, match="incomparable must start with"):
        Claim("c", "w", 1.0, "%", "s", incomparable="different: no")


def test_the_47_9_percent_is_cited_where_the_paper_says_it() -> None:
    """47.9% is in Exp#1 and the Sec. V highlights; the abstract's number is 74.9% (profit rate)."""
    claims = _claims()
    where = claims["titan-exp1-vs-elasticflow"][1].where
    assert "Exp#1" in where and "highlights" in where and "abstract" not in where.lower()
    abstract = claims["titan-abstract-profit-rate"][1]
    assert abstract.paper_value == 74.9 and "Abstract" in abstract.where


def test_quantities_the_paper_states_no_number_for_have_no_paper_value_and_no_verdict() -> None:
    """Sec. VI (the ``llm`` page) states no number: each of its quantities has ``paper_value``
    None and the kind ``no paper value``, its verdict is "not comparable" whatever is measured,
    and no other claim lacks a paper value. A claim cannot have one without the other."""
    claims = _claims()
    no_value = {cid for cid, (_, c) in claims.items() if c.paper_value is None}
    assert no_value == {cid for ids in REGISTERED["llm"].values() for cid in ids}
    for cid in no_value:
        c = claims[cid][1]
        assert c.states_no_value and c.incomparable.startswith(NO_PAPER_VALUE + ": Sec. VI"), cid
    c = claims["llm-a-srpt-vs-best-baseline"][1]
    v = verdict(c, [3.0, -5.0], "paper")
    assert (v.reproduces, v.mean, v.low, v.high) == (None, -1.0, -5.0, 3.0)
    assert v.text == f"not comparable: {c.incomparable}"
    assert overall_verdict({"default": v}, claim=c) == f"not comparable: {c.incomparable}"
    assert not any(c.states_no_value for cid, (_, c) in claims.items() if cid not in no_value)
    with pytest.raises(ValueError, match="paper_value is None exactly when"):
        Claim("c", "w", None, "%", "s")
    with pytest.raises(ValueError, match="paper_value is None exactly when"):
        Claim("c", "w", 1.0, "%", "s", incomparable=f"{NO_PAPER_VALUE}: the paper states none")
