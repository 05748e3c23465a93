"""rar-ddls facts that the surviving mutants of the seed-0 mutation sample at b68cbbf broke while
every other selected test passed (issue 36 item 5; ``benchmarks/mutation.py``): fields named in
refusals, the contracts of the claims' helpers, the exact solvers' results and fallbacks, the
generators' documented ranges and the planner's pieces, each worked on a small instance."""

from __future__ import annotations

import dataclasses
import time

import numpy as np
import pytest

from optkit.errors import InputError
from optkit.formulations.rar_ddls import bounds, claims, exact, generate, plan
from optkit.formulations.rar_ddls.baselines import run_ls, run_rand
from optkit.formulations.rar_ddls.model import RarInstance, evaluate, simulate
from optkit.formulations.rar_ddls.readings import DEFAULTS
from optkit.formulations.rar_ddls.sample import sample
from optkit.formulations.rar_ddls.sjf_bco import run_sjf_bco, sjf_bco
from optkit.result import Status
from optkit.validation import MAX_COUNT
from tests.rar_ddls_cases import pair_case
from tests.test_rar_ddls_sjf_bco import tiny_instance

SWEPT = {k: DEFAULTS[k] for k in ("available", "kappa_select", "theta_search", "fa_ffp")}
STALL_NET = {"inter_bandwidth": 1.25e9, "intra_bandwidth": 3.0e11, "compute_speed": 5.0e10, "xi1": 1.0,
             "xi2": 0.002, "degradation": 0.2}
STALL_JOB = {"gpus": 3, "iterations": 2, "grad_bytes": 4.6875e8, "batch": 1, "fwd_time_per_sample": 0.0,
             "bwd_time": 0.0}


def _stalling(pairs: int) -> dict:
    """``pairs`` pairs of 3-GPU jobs on 3·pairs servers of 2 GPUs (the stalling pair of the
    claims tests): alone on 2 servers phi = 1; two sharing a server (p = 2) get phi = 0 (eq. 9)."""
    return {"problem": "rar-ddls", "servers": [2] * (3 * pairs), "network": dict(STALL_NET), "horizon": 10,
            "jobs": [dict(STALL_JOB, id=f"j{k}") for k in range(2 * pairs)]}


def _first_tiny() -> RarInstance:
    return RarInstance.from_dict(next(iter(generate.SUITES["tiny"].build()))[1])


def _field(call, *args, **kw) -> InputError:
    with pytest.raises(InputError) as err:
        call(*args, **kw)
    return err.value


# ----------------------------------------------------------------------------- model: refusals
def test_instance_refusals_name_their_field() -> None:
    """Too many servers, a slot of 0 s, no jobs, a job id that is not a string: each refused
    with the field it is about (a typed instance gets the file's message for a bad busy row)."""
    d = pair_case()
    err = _field(RarInstance.from_dict, dict(d, servers=[1] * (MAX_COUNT + 1)))
    assert (err.field, err.message) == ("servers", f"lists {MAX_COUNT + 1} servers; at most {MAX_COUNT} are supported")
    err = _field(RarInstance.from_dict, dict(d, slot_seconds=0))
    assert (err.field, err.message) == ("instance.slot_seconds", "must be > 0, got 0.0")
    err = _field(RarInstance.from_dict, dict(d, jobs=[]))
    assert (err.field, err.message) == ("jobs", "must be a non-empty list")
    err = _field(RarInstance.from_dict, dict(d, jobs=[dict(d["jobs"][0], id=5)]))
    assert (err.field, err.message) == ("jobs[0].id", "must be a non-empty string, got 5")
    inst = RarInstance.from_dict(d)
    err = _field(dataclasses.replace, inst, busy_until=(5, (), ()))
    assert err.field == "busy_until[0]" and err.message.startswith("must be a list of slots (one per GPU of server 0)")


def test_simulate_refusals_name_their_field() -> None:
    inst = RarInstance.from_dict(pair_case())
    err = _field(simulate, inst, "three", starts=[0, 0])
    assert err.field == "y" and err.message == "must be a jobs x servers array of GPU counts, got str"
    y = np.array([[3, 1, 0], [0, 2, 2]])
    err = _field(simulate, inst, y, predecessors=[[], []], release=[0])
    assert (err.field, err.message) == ("release", "must give one entry per job (2), got 1")


# ----------------------------------------------------------------------------- model: evaluate
def test_evaluate_names_five_stuck_jobs_and_counts_split_jobs() -> None:
    """Six split jobs at once, two to a shared server: all stuck (phi = 0), the message names the
    first five. Two split jobs run together are counted as 2 split jobs (one per job)."""
    inst = RarInstance.from_dict(_stalling(3))
    rows = []
    for p in range(3):  # pair p: own servers 3p, 3p+1, shared server 3p+2
        for own in (3 * p, 3 * p + 1):
            row = [0] * 9
            row[own], row[3 * p + 2] = 2, 1
            rows.append(row)
    sol = {"jobs": [{"id": f"j{k}", "start": 0, "gpus_per_server": rows[k]} for k in range(6)]}
    ev = evaluate(inst, sol)
    assert not ev.feasible
    assert ev.violations == ["jobs j0, j1, j2, j3, j4 never complete: phi = 0 (eq. 9) under the contention they "
                             "meet, and nothing else changes"]
    pair = RarInstance.from_dict(pair_case())
    sol = {"jobs": [{"id": "a", "start": 0, "gpus_per_server": [3, 1, 0]},
                    {"id": "b", "start": 0, "gpus_per_server": [0, 2, 2]}]}
    ev = evaluate(pair, sol)
    assert ev.feasible and ev.metrics["split_jobs"] == 2
    one = {"jobs": [{"id": "a", "start": 0, "gpus_per_server": [3, 1, 0]},
                    {"id": "b", "start": 10, "gpus_per_server": [0, 2, 2]}]}
    assert evaluate(pair, one).metrics["split_jobs"] == 2


A = {"id": "a", "start": 0, "gpus_per_server": [3, 1, 0]}
B = {"id": "b", "start": 8, "gpus_per_server": [0, 2, 2]}


@pytest.mark.parametrize("entries", [
    [{"id": "zz", "start": 0, "gpus_per_server": [3, 1, 0]}, A, B],
    [A, A, B],
    [dict(B, start=-1), A],
    [dict(B, gpus_per_server=[0, 2]), A],
    [dict(B, gpus_per_server=[0, 2, 1]), A],
], ids=["unknown-id", "twice", "negative-start", "short-row", "wrong-sum"])
def test_evaluate_reports_only_the_bad_entry(entries: list) -> None:
    """A bad entry is reported and the entries after it are still read: the one violation, no
    'not scheduled' for a job listed after it."""
    ev = evaluate(RarInstance.from_dict(pair_case()), {"jobs": entries})
    assert len(ev.violations) == 1 and "not scheduled" not in ev.violations[0]


# ----------------------------------------------------------------------------- bounds
def test_sjf_bco_guarantee_as_built() -> None:
    """The guarantee registry built again (the import builds it before any test runs)."""
    reg = bounds._guarantees()
    assert list(reg) == ["sjf-bco"]
    g = reg["sjf-bco"]
    assert (g.algorithm, g.objective, g.sense) == ("sjf-bco", "makespan", "at_most")
    assert g.citation == "Yu et al., SJF-BCO paper, Theorem 5"
    assert g.statement == ("makespan(SJF-BCO) / OPT <= n_g·phi·u/l with u = 1 "
                           "(formulations/rar_ddls/bounds.py; inf when contention can stall a job)")
    inst = RarInstance.from_dict(pair_case(0.2))
    assert g.ratio(inst, {}) == pytest.approx(6.25)
    assert g.figures(inst, {}) == "n_g = 4, phi = 1.25, u = 1, l = 0.8"


def test_theorem5_refusal_names_the_problem() -> None:
    err = _field(bounds.theorem5, RarInstance.from_dict(pair_case()), u=0.5)
    assert (err.field, err.problem) == ("u", "rar-ddls")


def test_lemma3_met_with_equality_holds_at_any_size() -> None:
    """One 1-GPU job alone (phi = 1, tau = 0.6 s) of 2^24 iterations: makespan = W_max = 2^24
    slots and n_g = 1, Lemma 3 holds with equality (where 2^24 + 1e-9 rounds to 2^24)."""
    job = {"id": "a", "gpus": 1, "iterations": 2**24, "grad_bytes": 0.0, "batch": 1, "fwd_time_per_sample": 0.0,
           "bwd_time": 0.6}
    inst = RarInstance.from_dict({"problem": "rar-ddls", "servers": [1], "horizon": 2**24,
                                  "network": dict(STALL_NET, xi2=0.0), "jobs": [job]})
    _, res = sjf_bco(inst)
    got = bounds.lemma_checks(inst, res)
    assert got["makespan_slots"] == got["lemma3_bound"] == 2.0**24
    assert got["lemma3_holds"] and got["lemma3_busy_holds"]


# ----------------------------------------------------------------------------- claims
def test_claim_helpers_on_hand_values() -> None:
    """A curve that first rises is not Fig. 5's drop-rise-drop, whatever comes after; a ratio
    over a non-positive reference is no ratio."""
    assert not claims._drop_rise_drop([1, 2, 3, 2])
    assert not claims._drop_rise_drop([5, 4, 3])
    assert claims._ratio(1.0, 0.0) is None and claims._ratio(2.0, -1.0) is None
    assert claims._ratio(3.0, 2.0) == 1.5


def test_plug_in_run_reports_slots_whatever_the_slot_length() -> None:
    """With 2-s slots a plug-in's mean JCT is the mean completion slot, not seconds / 1 s."""
    from optkit.solve import solve

    data = dict(tiny_instance(1), slot_seconds=2.0)
    got = claims._run_any("ls", data, 1)
    completion = [j["completion"] for j in solve("rar-ddls", data, "ls", seed=1).solution["jobs"]]
    assert got["makespan"] == max(completion)
    assert got["jct"] == pytest.approx(float(np.mean(completion)), rel=1e-12)


def test_run_policy_passes_the_seed_and_the_policys_readings(monkeypatch: pytest.MonkeyPatch) -> None:
    """run_policy hands the policy its seed and exactly the readings it declares (RAND takes
    ``available`` but neither ``theta_search`` nor SJF-BCO's ``kappa_select``/``fa_ffp``), and
    reports SJF-BCO's accepted theta_u."""
    seen: dict = {}
    real = claims._runner

    def spy(policy: str):
        fn = real(policy)

        def call(inst, **kw):
            seen.clear()
            seen.update(kw)
            return fn(inst, **kw)
        return call

    monkeypatch.setattr(claims, "_runner", spy)
    data = tiny_instance(1)
    claims.run_policy("rand", data, SWEPT, 7)
    assert seen == {"objective": "makespan", "seed": 7, "available": SWEPT["available"]}
    got = claims.run_policy("sjf-bco", data, SWEPT, 1)
    theta = run_sjf_bco(RarInstance.from_dict(data), **SWEPT).info["theta_u"]
    assert isinstance(theta, int) and got["theta_u"] == theta


def test_fig6_reduction_reads_the_most_servers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fig. 6 on three server counts (1, 2, 3 servers of tiny_instance(1)): the reductions
    compare the first and the last count, not the middle one."""
    from tests.test_rar_ddls_claims import _tiny_sec7

    _tiny_sec7(monkeypatch)
    monkeypatch.setitem(claims.FIG6_SERVERS, "ci", (1, 2, 3))
    out = claims.measure_fig6(readings=SWEPT, seed=1, scale="ci")
    curves = out["_details"]["makespan"]
    assert any(c[1] != c[2] for c in curves.values())
    for p, c in curves.items():
        assert out[f"sjf-bco-fig6-{p}-reduction"] == (c[0] - c[2]) / c[0]


def test_series_fig4_runs_the_plug_in_with_the_seed(monkeypatch: pytest.MonkeyPatch) -> None:
    """RAND as a plug-in: series_fig4's makespan is RAND's at the series' seed (seed 1 and the
    harness's default seed give different makespans here: 13 and 7 slots)."""
    from tests.test_rar_ddls_claims import _tiny_sec7

    _tiny_sec7(monkeypatch)
    data = tiny_instance(1)
    mine = claims._run_any("rand", data, 1)["makespan"]
    assert mine != claims._run_any("rand", data, None)["makespan"]
    assert claims.series_fig4("rand", readings=SWEPT, seed=1, scale="ci")["makespan_slots"] == mine


# ----------------------------------------------------------------------------- exact solvers
def test_exact_results_name_problem_and_objective() -> None:
    """Every result of the exact solvers, with or without a schedule, names rar-ddls and the
    makespan: optimal (CP-SAT, brute force), infeasible within a too-short horizon (CP-SAT,
    brute force), and the fault of a solver that calls a satisfiable model infeasible."""
    inst = _first_tiny()
    short = RarInstance.from_dict(dict(inst.to_dict(), horizon=2))
    results = [exact.run_cpsat(inst, time_limit=30), exact.run_brute_force(inst),
               exact.run_cpsat(short, time_limit=30), exact.run_brute_force(short),
               exact._infeasible(inst, 3, 5, {}, "highs")]
    assert [r.status for r in results] == [Status.OPTIMAL, Status.OPTIMAL, Status.INFEASIBLE, Status.INFEASIBLE,
                                           Status.ERROR]
    for r in results:
        assert (r.problem, r.objective_name) == ("rar-ddls", "makespan")


def test_greedy_offered_when_it_meets_the_horizon_exactly() -> None:
    """The greedy warm start is the time-limit fallback when its makespan is the horizon itself
    (ub <= T): the fallback returns it with the lower bound and says so in its info."""
    from optkit.deadline import current, within

    base = _first_tiny()
    greedy = exact.greedy_schedule(base)
    inst = RarInstance.from_dict(dict(base.to_dict(), horizon=greedy[2]))
    with within(60):
        exact._offer_greedy(inst, greedy, None, {"k": 1})
        fallback = current().fallback
    assert fallback is not None
    res = fallback("cut")
    assert res.status == Status.TIME_LIMIT and res.info == {"k": 1, "incumbent": "greedy warm start"}
    assert res.objective == greedy[2] * inst.slot_seconds and res.bound == bounds.lower_bound(inst, "makespan")


def test_highs_presolve_retry_keeps_seed_and_time_left(monkeypatch: pytest.MonkeyPatch) -> None:
    """A MILP that HiGHS' presolve calls infeasible is solved again without presolve, with the
    run's seed and what is left of its time limit (at least 1 ms); the optimum stands and the
    solver's time is reported."""
    import optkit.solvers.milp as milp

    real = milp.solve_pyomo_model
    calls: list[dict] = []

    def fake(m, **kw):
        calls.append(kw)
        out = real(m, **kw)
        return dataclasses.replace(out, status=Status.INFEASIBLE) if len(calls) == 1 else out

    monkeypatch.setattr(milp, "solve_pyomo_model", fake)
    inst = _first_tiny()
    res = exact.run_highs(inst, time_limit=60, seed=3)
    assert len(calls) == 2 and calls[1]["seed"] == 3 and calls[1]["options"] == {"presolve": "off"}
    assert 1e-3 <= calls[1]["time_limit"] <= 60
    assert res.status == Status.OPTIMAL and res.objective == 16.0 and res.info["presolve_off_retry"]
    assert res.info["solver_time_s"] >= 0


def test_heuristic_incumbent_runs_within_a_short_window() -> None:
    """Under a second left for the warm start still runs the heuristics (they take milliseconds
    on the tiny instance); only a window already closed gives nothing."""
    inst = _first_tiny()
    got = exact.heuristic_incumbent(inst, until=time.perf_counter() + 0.9)
    assert got is not None and got[2] == exact.heuristic_incumbent(inst)[2]
    assert exact.heuristic_incumbent(inst, until=time.perf_counter() - 1.0) is None


def test_placement_options_refuse_a_job_without_progress() -> None:
    """Rate tables with phi = 0 everywhere: the job makes no progress on any placement."""
    inst = RarInstance.from_dict(pair_case())
    zero = [{n: np.zeros(3, dtype=np.int64) for n in range(1, 4)} for _ in inst.jobs]
    err = _field(exact.placement_options, inst, zero)
    assert (err.field, err.message) == ("jobs[0]", "job a makes no progress on any placement")


def test_brute_force_when_no_gpu_is_free_at_slot_0() -> None:
    """Every GPU busy until slot 2: no job can start at 0, and brute force still finds the
    optimum, the tiny instance's 16 slots shifted by 2 (the zero-start pruning is off with busy
    GPUs)."""
    inst = _first_tiny()
    busy = [[2] * o for o in inst.servers]
    late = RarInstance.from_dict(dict(inst.to_dict(), horizon=inst.horizon + 2, busy_until=busy))
    value, sol = exact.brute_force(late)
    assert value == 18.0 and min(j["start"] for j in sol["jobs"]) == 2


# ----------------------------------------------------------------------------- generators
def test_generator_defaults_and_refusals() -> None:
    """generate() without a seed is seed 0; the tiny generator refuses 0 jobs naming ``jobs``;
    a Sec. 7 job too fast for any F in [1000, 6000] with an estimate in [50, 300] is refused."""
    assert generate.generate(kind="tiny") == generate.tiny(0)
    assert generate.generate() == generate.paper_sec7(0)
    err = _field(generate.tiny, 0, jobs=0)
    assert err.field == "jobs"
    inst = RarInstance.from_dict(pair_case())
    fast = dataclasses.replace(inst.jobs[0], grad_bytes=0.0, fwd_time_per_sample=0.0, bwd_time=0.001)
    err = _field(generate._sec7_iterations, fast, [4], inst.network, np.random.default_rng(0))
    assert err.field == "jobs" and err.message.startswith("no F in (1000, 6000) gives an estimate in (50, 300)")


def test_tiny_suite_iterations_span_8_to_39() -> None:
    """The tiny suite's jobs have 8-39 iterations (module docstring), both ends met."""
    its = [j["iterations"] for _, d in generate.SUITES["tiny"].build() for j in d["jobs"]]
    assert (min(its), max(its)) == (8, 39)


def test_sample_refuses_a_limit_out_of_range() -> None:
    err = _field(sample, lambda lo, hi: lo, max_gpus=MAX_COUNT + 1)
    assert err.field == "max_gpus" and err.message.startswith(f"must be <= {MAX_COUNT}")


# ----------------------------------------------------------------------------- planner pieces
def test_theta_search_pieces() -> None:
    """bisect_theta records the horizon it searched; theta_cap is the latest busy slot plus the
    sum of each job's largest finite estimate plus 1 (xi2 instance: 6 and 12 slots, busy until 4);
    a timed-out search without a plan is a NoPlanError saying so."""
    from tests.test_rar_ddls_sjf_bco import xi2_instance

    bis = plan.bisect_theta(7, lambda theta, horizon: None)
    assert (bis.plan, bis.steps, bis.search_horizon) == (None, 3, 7)
    inst = xi2_instance([4, 4, 4], [1, 3])
    assert plan.theta_cap(plan.Estimates(inst)) == 6 + 12 + 1
    busy = RarInstance.from_dict(dict(inst.to_dict(), busy_until=[[4], [], []]))
    assert plan.theta_cap(plan.Estimates(busy)) == 4 + 6 + 12 + 1
    with pytest.raises(plan.NoPlanError) as err:
        plan.finish(inst, plan.Bisection(None, None, None, 3, 0, True, 10), what="LS")
    assert err.value.timed_out and str(err.value) == (
        "LS: the time limit ran out before any execution-time limit theta_u gave a complete plan")
    assert _field(plan.Estimates, inst, u=0.5).field == "u"


def test_plan_state_and_random_pick() -> None:
    """A plan refuses an unknown ``available`` naming it; under ``idle-now`` a server is occupied
    only while a GPU of it is still busy at ``now`` (planned load alone does not count); RAND's
    pick without a generator is seed 0's."""
    c = plan.ClusterIndex.of([2, 2])
    assert _field(plan.Plan.empty, c, available="bogus").field == "available"
    p = plan.Plan.empty(c, available="idle-now")
    p.U[:] = [5.0, 0, 0, 0]
    p.free[:] = [5.0, 0, 0, 0]
    p.now = 10.0
    assert p.occupied_servers().tolist() == [False, False]
    p.now = 3.0
    assert p.occupied_servers().tolist() == [True, False]
    big = plan.ClusterIndex.of([4] * 8)
    cand = np.arange(32)
    none = plan.pick_random(plan.Plan.empty(big), 0, 5, cand)
    zero = plan.pick_random(plan.Plan.empty(big, rng=np.random.default_rng(0)), 0, 5, cand)
    one = plan.pick_random(plan.Plan.empty(big, rng=np.random.default_rng(1)), 0, 5, cand)
    assert none.tolist() == zero.tolist() != one.tolist()


def test_planner_names_jobs_stuck_in_its_schedule() -> None:
    """LS on the stalling pair plans both at slot 0 and neither progresses: no solution, and the
    message says why."""
    res = run_ls(RarInstance.from_dict(_stalling(1)))
    assert res.status == Status.NO_SOLUTION
    assert res.message == "jobs j0, j1 never complete under the contention of the planned schedule (phi = 0, eq. 9)"


def _packing_every_start(inst: RarInstance) -> int:
    """greedy_schedule's packing pass as its docstring states it, without the pruning of later
    starts: jobs by non-increasing G_j·rho_j^min, each at the (start in {0} and the completions
    so far, option) with the smallest makespan of the jobs placed so far, then the earliest own
    completion, then the earliest start. Returns the makespan (slots)."""
    opts = exact.placement_options(inst)
    n, S = len(inst.jobs), len(inst.servers)
    fastest = [min(o.solo for o in lst) for lst in opts]
    order = sorted(range(n), key=lambda j: (-inst.jobs[j].gpus * fastest[j], j))
    rows = inst.to_dict()["jobs"]
    y, starts, placed, comps, mk = np.zeros((n, S), dtype=np.int64), [0] * n, [], [0], 0
    for j in order:
        sub = placed + [j]
        sub_inst = RarInstance.from_dict(dict(inst.to_dict(), horizon=10**6, jobs=[rows[k] for k in sub]))
        choice = None
        for a in sorted(set(comps) | {0}):
            for o in opts[j]:
                y[j] = o.y
                starts[j] = a
                out = simulate(sub_inst, y[sub], starts=[starts[k] for k in sub])
                ev = evaluate(sub_inst, {"jobs": [{"id": rows[k]["id"], "start": starts[k],
                                                   "gpus_per_server": [int(v) for v in y[k]]} for k in sub]})
                if ev.feasible:
                    key = (ev.metrics["makespan_slots"], int(out.completion[-1]), a)
                    if choice is None or key < choice[0]:
                        choice = (key, a, o.y, [int(c) for c in out.completion])
        (mk, _, _), starts[j], y[j], comps = choice
        placed.append(j)
    return mk


def test_greedy_packing_prunes_only_starts_that_cannot_help() -> None:
    """On a contention case (3 servers of 2-3 GPUs, 4 jobs) the greedy schedule's makespan is
    the better of the sequential one (sum of solo times, the horizon) and the packing pass with
    every start tried: skipping a later start is exact (here it gives 7 slots, 6 is optimal)."""
    from tests.rar_ddls_cases import contention_case

    inst = RarInstance.from_dict(contention_case(35, jobs=4, servers=3, max_horizon=60))
    packing = _packing_every_start(inst)
    assert packing < inst.horizon
    assert exact.greedy_schedule(inst)[2] == min(packing, inst.horizon)


def test_place_job_limit_is_inclusive() -> None:
    """A GPU whose load plus the job's estimate reaches theta_u + TOL exactly is still eligible
    (Alg. 2 line 4, ``U + rho_hat/u <= theta_u``, with the float slack TOL); one ulp above, not."""
    from tests.test_rar_ddls_sjf_bco import xi2_instance

    inst = xi2_instance([1], [1])  # rho-hat 6 slots
    est = plan.Estimates(inst)
    limit = 10 + plan.TOL
    for reach, placed in ((limit, True), (np.nextafter(limit, 11), False)):
        p = plan.Plan.empty(plan.ClusterIndex.for_instance(inst))
        p.U[0] = p.free[0] = reach - 6  # exact (Sterbenz), and so is reach - 6 + 6 = reach
        assert p.U[0] + est.first[0] == reach
        assert plan.place_job(p, est, 0, 10, plan.pick_first_fit) is placed


def test_warm_start_skips_a_heuristic_without_a_plan(monkeypatch: pytest.MonkeyPatch) -> None:
    """SJF-BCO finding no plan (a NoPlanError, as when every plan stalls) leaves the warm start
    to the heuristics after it: LS's and FF's schedules, the better of which is returned."""
    from optkit.formulations.rar_ddls import sjf_bco as sjf_module
    from optkit.formulations.rar_ddls.baselines import run_ff

    def no_plan(instance, **kw):
        raise plan.NoPlanError("SJF-BCO: no plan")

    monkeypatch.setattr(sjf_module, "sjf_bco", no_plan)
    inst = _first_tiny()
    got = exact.heuristic_incumbent(inst)
    assert got is not None and got[3] in ("ls", "ff")
    assert got[2] == min(evaluate(inst, run(inst).solution).metrics["makespan_slots"] for run in (run_ls, run_ff))
