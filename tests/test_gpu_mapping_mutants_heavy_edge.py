"""Heavy-Edge's argument checks and small facts (formulations/gpu_mapping/heavy_edge.py): each bad
argument one InputError naming the field, its problem (``gpu-mapping: ``) and the valid range;
``fewest_servers`` by its definition; co-located groups placed whole."""

from __future__ import annotations

from typing import Any

import pytest

from optkit.errors import InputError
from optkit.formulations.gpu_mapping.heavy_edge import check_colocate, fewest_servers, heavy_edge_arrays


@pytest.mark.parametrize("args, kw, message", [
    ((3, [0, 3], [1, 2], [1.0, 1.0], [2, 1]), {}, "gpu-mapping: u[1] must be a vertex 0..2, got 3"),
    ((3, [0, 1], [1, -1], [1.0, 1.0], [2, 1]), {}, "gpu-mapping: v[1] must be a vertex 0..2, got -1"),
    ((3, [0, 1], [1, 2], [1.0, -2.0], [2, 1]), {},
     "gpu-mapping: w[1] must be a finite number >= 0 (bytes per iteration), got -2.0"),
    ((3, [0, 1], [1, 2], [1.0, float("inf")], [2, 1]), {},
     "gpu-mapping: w[1] must be a finite number >= 0 (bytes per iteration), got inf"),
    ((3, [0, 1], [1, 2], [1.0, 1.0], [2, 1]), {"colocate": [[0, 5]]},
     "gpu-mapping: colocate[0][1] must be a vertex 0..2, got 5"),
    ((3, [0, 1], [1, 2], [1.0, 1.0], [2, 1]), {"colocate": [[0, 1], [1, 2]]},
     "gpu-mapping: colocate[1][0] repeats vertex 1, already in colocate[0]"),
    ((3, [0, 1], [1, 2], [1.0, 1.0], [2, 1]), {"server_start": "lightest"}, "gpu-mapping: server_start must be"),
    ((3, [0, 1], [1, 2], [1.0, 1.0], [2, 2]), {}, "gpu-mapping: free_gpus must add up to the 3 vertices"),
])
def test_bad_arguments_are_named_with_the_problem(args: tuple, kw: dict[str, Any], message: str) -> None:
    with pytest.raises(InputError) as err:
        heavy_edge_arrays(*args, **kw)
    assert str(err.value).startswith(message)


def test_check_colocate_keeps_groups_of_two_or_more_with_their_positions() -> None:
    assert check_colocate([[2], [3, 1], (0, 4)], 5) == ([[1, 3], [0, 4]], [1, 2])
    with pytest.raises(InputError, match=r"^gpu-mapping: colocate\[0\] must list at least one vertex$"):
        check_colocate([[]], 2)
    with pytest.raises(InputError, match=r"^gpu-mapping: colocate must be a sequence of groups"):
        check_colocate(None, 2)


@pytest.mark.parametrize("n, g, want", [(12, 8, [8, 4]), (10, 4, [4, 4, 2]), (8, 4, [4, 4]), (3, 4, [3]), (1, 1, [1])])
def test_fewest_servers_are_full_but_the_last(n: int, g: int, want: list[int]) -> None:
    assert fewest_servers(n, g) == want


def test_a_colocated_group_lands_on_one_server_against_the_edges() -> None:
    """Vertices 0 and 3 must share a server although every heavy edge pulls them apart."""
    u, v, w = [0, 2, 1], [1, 3, 2], [10.0, 10.0, 1.0]
    for seed in range(3):
        sv = heavy_edge_arrays(4, u, v, w, [2, 2], seed=seed, colocate=[[0, 3]])
        assert sv[0] == sv[3] and sorted(sv) == [0, 0, 1, 1]
    free = heavy_edge_arrays(4, u, v, w, [2, 2], seed=0)
    assert free[0] == free[1] and free[2] == free[3]  # without the group the heavy edges decide
