"""Heavy-Edge's ``colocate`` groups (A-SRPT paper Sec. VI: "all tensor slices of a layer must
reside within a single server"; the reading is heavy_edge.py's module docstring).

Checked: every group on one server and every server exactly full in every result (seeded
instances built around a hidden feasible placement, group sizes in a divisibility chain and
not); refusal, with an ``InputError`` naming the field, exactly when brute force finds no
placement (tiny instances, random groups); never better than the brute-force optimum; and no
change at all without groups.
"""

from __future__ import annotations

import itertools
from typing import Iterator

import networkx as nx
import numpy as np
import pytest

from optkit.errors import InputError
from optkit.formulations.gpu_mapping import (
    Cluster, GpuMappingInstance, PipelineJob, evaluate, heavy_edge, heavy_edge_arrays, heavy_edge_job,
)
from tests.test_gpu_mapping_stage_path import random_graph, random_job, random_servers

READINGS = [(sg, ss) for sg in ("unassigned", "total") for ss in ("heaviest-pair", "from-placed")]


def hidden_groups(rng: np.random.Generator, caps: list[int], sizes: list[int]) -> list[list[int]]:
    """Groups carved out of a random placement on servers ``caps``: feasible by construction."""
    n = sum(caps)
    perm = [int(v) for v in rng.permutation(n)]
    groups, pos = [], 0
    for c in caps:
        left = c
        while left:
            t = int(rng.choice([t for t in sizes if t <= left] or [1]))
            if t >= 2:
                groups.append(perm[pos:pos + t])
            pos += t
            left -= t
    return groups


def check_placement(servers: list[int], caps: list[int], groups: list[list[int]]) -> None:
    assert [servers.count(m) for m in range(len(caps))] == caps
    for g in groups:
        assert len({servers[v] for v in g}) == 1, g


@pytest.mark.parametrize("sizes", [[1, 2, 4, 8], [1, 2, 3], [2, 3, 5]])
def test_every_group_on_one_server(sizes: list[int]) -> None:
    rng = np.random.default_rng(len(sizes) * 10 + sizes[-1])
    for trial in range(120):
        n = int(rng.integers(2, 40))
        caps = random_servers(rng, n)
        groups = hidden_groups(rng, caps, sizes)
        u, v, w = random_graph(rng, n)
        sg, ss = READINGS[trial % 4]
        caps_shuffled = [caps[i] for i in rng.permutation(len(caps))]  # the hidden placement's servers reordered
        servers = heavy_edge_arrays(n, u, v, w, caps_shuffled, seed=trial, colocate=groups, single_gpu_weight=sg,
                                    server_start=ss)
        check_placement(servers, caps_shuffled, groups)


def test_every_replica_group_of_a_job_on_one_server() -> None:
    """Jobs (stage structure) with groups of replicas, as a tensor-parallel layout would give them."""
    rng = np.random.default_rng(4)
    for trial in range(100):
        job = random_job(rng)
        caps = random_servers(rng, job.n_replicas)
        groups = hidden_groups(rng, caps, [1, 2, 4])
        a = heavy_edge_job(job, caps, seed=trial, colocate=groups)
        flat = [m for row in a for m in row]
        check_placement(flat, caps, groups)


def test_singleton_groups_and_none_change_nothing() -> None:
    rng = np.random.default_rng(6)
    for trial in range(60):
        job = random_job(rng)
        caps = random_servers(rng, job.n_replicas)
        plain = heavy_edge_job(job, caps, seed=trial)
        assert heavy_edge_job(job, caps, seed=trial, colocate=[[v] for v in range(0, job.n_replicas, 2)]) == plain
        assert heavy_edge_job(job, caps, seed=trial, colocate=[]) == plain


def placements(n: int, caps: list[int], groups: list[list[int]]) -> Iterator[list[int]]:
    """Every placement (the server of each vertex) filling each server exactly, each group on one."""
    grouped = {v for g in groups for v in g}
    units = groups + [[v] for v in range(n) if v not in grouped]
    for choice in itertools.product(range(len(caps)), repeat=len(units)):
        load = [0] * len(caps)
        for unit, m in zip(units, choice):
            load[m] += len(unit)
        if load == caps:
            server = [0] * n
            for unit, m in zip(units, choice):
                for v in unit:
                    server[v] = m
            yield server


def brute_force(n: int, edges: list[tuple[int, int, float]], caps: list[int],
                groups: list[list[int]]) -> float | None:
    """The least cut over every placement with each group on one server, or None if none exists."""
    cuts = [sum(x for a, b, x in edges if server[a] != server[b]) for server in placements(n, caps, groups)]
    return min(cuts) if cuts else None


def test_against_brute_force_on_tiny_instances() -> None:
    """Random groups (often impossible to place): Heavy-Edge refuses exactly the instances brute
    force finds no placement for, and otherwise returns a feasible placement no better than the
    optimum."""
    rng = np.random.default_rng(11)
    refused = placed = 0
    for trial in range(250):
        n = int(rng.integers(2, 8))
        caps = random_servers(rng, n)
        if len(caps) > 4:
            continue
        perm = [int(v) for v in rng.permutation(n)]
        groups, pos = [], 0
        while pos < n:
            t = int(rng.integers(1, 5))
            if t >= 2 and pos + t <= n:
                groups.append(perm[pos:pos + t])
            pos += t
        u, v, w = random_graph(rng, n)
        edges = [(a, b, x) for a, b, x in zip(u, v, w) if a != b]
        opt = brute_force(n, edges, caps, groups)
        if opt is None:
            with pytest.raises(InputError) as err:
                heavy_edge_arrays(n, u, v, w, caps, seed=trial, colocate=groups)
            assert err.value.field.startswith("colocate")
            refused += 1
            continue
        servers = heavy_edge_arrays(n, u, v, w, caps, seed=trial, colocate=groups)
        check_placement(servers, caps, groups)
        cut = sum(x for a, b, x in edges if servers[a] != servers[b])
        assert cut >= opt - 1e-9
        placed += 1
    assert refused >= 20 and placed >= 100, (refused, placed)


def test_job_result_evaluates_and_is_never_better_than_the_optimum() -> None:
    """On a job, ``evaluate`` accepts the placement and its cut is at least the brute-force optimum."""
    st = {"fwd_time": 0.01, "bwd_time": 0.02, "param_bytes": 4e6}
    job = PipelineJob.from_dict({"allreduce": "ring", "stages": [
        {**st, "replicas": 3, "in_bytes": 0, "out_bytes": 2e6},
        {**st, "replicas": 3, "in_bytes": 2e6, "out_bytes": 0}]})
    inst = GpuMappingInstance(Cluster(4, 1.25e9, 3e11), job, (4, 2))
    groups = [[0, 3], [1, 4], [2, 5]]  # each replica of stage 0 with one of stage 1
    a = heavy_edge_job(job, inst.servers, seed=0, colocate=groups)
    ev = evaluate(inst, {"assignment": a})
    assert ev.feasible
    u, v, w = job.edges
    edges = list(zip(u.tolist(), v.tolist(), w.tolist()))
    assert ev.objectives["cut"] >= brute_force(job.n_replicas, edges, [4, 2], groups) - 1e-6


def test_networkx_groups_name_the_graph_vertices() -> None:
    g = nx.Graph()
    g.add_weighted_edges_from([("a", "b", 20.0), ("b", "c", 1.0), ("c", "d", 0.5)])
    assert heavy_edge(g, [3, 1]) == {"a": 0, "b": 0, "c": 0, "d": 1}
    out = heavy_edge(g, [2, 2], colocate=[["a", "d"]])
    assert out["a"] == out["d"] and out["b"] == out["c"] != out["a"]
    with pytest.raises(InputError, match="not a vertex of graph") as err:
        heavy_edge(g, [2, 2], colocate=[["a", "z"]])
    assert err.value.field == "colocate[0][1]"


@pytest.mark.parametrize("colocate,field,message", [
    ([[0, 1, 2, 3, 4]], "colocate[0]", "no server can hold the group"),
    ([[0], [1, 2, 3, 4, 5]], "colocate[1]", "no server can hold the group"),
    ([[0, 1, 2], [3, 4, 5]], "colocate", "cannot each be placed whole"),
    ([[0, 1], [1, 2]], "colocate[1][0]", "repeats vertex 1"),
    ([[0, 6]], "colocate[0][1]", "must be a vertex 0..5"),
    ([[]], "colocate[0]", "at least one vertex"),
    ([[0, True]], "colocate[0][1]", "must be a vertex"),
    ("01", "colocate", "sequence of groups"),
    ([3], "colocate[0]", "sequence of vertex indices"),
])
def test_bad_groups_are_refused_naming_the_field(colocate: object, field: str, message: str) -> None:
    """Six vertices on servers of 4 and 2 free GPUs."""
    with pytest.raises(InputError, match=message) as err:
        heavy_edge_arrays(6, [0, 1, 2], [1, 2, 3], [1.0, 1.0, 1.0], [4, 2], colocate=colocate)  # type: ignore[arg-type]
    assert err.value.field == field


def test_a_group_is_not_split_to_follow_a_heavy_edge() -> None:
    """Path 0-1-2-3 with a heavy edge 1-2, servers of 2 and 2, the group {0, 2}: without the group
    the heavy edge keeps 1 and 2 together; with it, 0 and 2 share a server. Worked by hand: server
    0 starts with the heaviest edge (1, 2); its first end 1 (a unit of one) fits, leaving server 1
    for the group; 2's unit {0, 2} no longer fits in the one GPU left; node_set's edges lead to 2
    and 0, both in that unit, so they are passed over; the random pick has one vertex whose unit
    may go, 3. Server 0 = {1, 3}, server 1 = {0, 2}."""
    u, v, w = [0, 1, 2], [1, 2, 3], [1.0, 9.0, 2.0]
    assert heavy_edge_arrays(4, u, v, w, [2, 2]) == [1, 0, 0, 1]
    assert heavy_edge_arrays(4, u, v, w, [2, 2], colocate=[[0, 2]]) == [1, 0, 1, 0]


def test_the_start_takes_both_ends_units() -> None:
    """Edges (0, 5) and (1, 3) of weight 9, the group {0, 3}, servers of 3 and 3. Server 0 starts
    with the heaviest edge (0, 5) (lowest pair of the two of weight 9): the unit of 0, {0, 3},
    then the unit of 5 (it fits). Growing from {0, 3} instead would have taken 1 (the edge (3, 1)
    ties with (0, 5) and 1 < 5)."""
    assert heavy_edge_arrays(6, [0, 1], [5, 3], [9.0, 9.0], [3, 3], colocate=[[0, 3]]) == [0, 1, 1, 0, 1, 0]


def test_a_start_passed_over_waits_for_a_later_server() -> None:
    """Reading from-placed: an edge from placed vertices whose unit may not go to this server stays
    a candidate start for the later ones. Groups A = {0, 1, 2}, B = {3, 4, 5}, U = {6, 7};
    servers of 4, 4, 2, 2. Worked by hand: server 0 takes A (heaviest pair (0, 1)) and 8 (the edge
    (0, 6) leads to U, which no longer fits; (2, 3) to B, neither). Server 1's start by the
    heaviest edge from placed vertices, (0, 6), would take U, leaving B no server of 3: passed
    over; next (2, 3): B, then 10. Server 2 starts at (0, 6) again: U. Server 3: 9 and 11."""
    u, v, w = [0, 0, 1, 2, 8, 5], [1, 6, 8, 3, 9, 10], [10.0, 5.0, 1.0, 4.0, 0.5, 0.3]
    out = heavy_edge_arrays(12, u, v, w, [4, 4, 2, 2], colocate=[[0, 1, 2], [3, 4, 5], [6, 7]],
                            server_start="from-placed")
    assert out == [0, 0, 0, 1, 1, 1, 2, 2, 0, 3, 1, 3]
