"""Titan (Algorithms 1-3 of Fang et al.): greedy, submodular, non-idle-machine-aware placement.

Three readings of the algorithm (``titan_algorithm``, ``readings.py``; rule ``repaired``):
``repaired`` (the default), ``pseudo-code`` (Algorithms 1-3 line by line, Alg. 2 line 18 as
written) and ``pair-grouping`` (optkit <= 0.2). ``repaired`` and ``pair-grouping`` share the
machine selection and the worker sets and differ in one thing only: ``repaired`` checks Eq. (5)
as each worker joins a machine (Alg. 1), ``pair-grouping`` checks the whole placement afterwards.

The default, ``titan_algorithm="repaired"``: Algorithms 1-3, line by line
==========================================================================
The paper's intent (Sec. IV-B): a greedy, submodular selection of machines that maximises the
machines left unused ("remaining machines", Eq. 3), under Alg. 1's bandwidth check, run first
on the idle machines and then on S_f ∪ Phi_n (Alg. 3). What each line is read as:

* **Alg. 1** (:func:`feasible_worker_set`), the check, as written. Lines 2-3: A(s) = ∅, the
  available workers N_c are those not placed yet. Line 5: C_{f,f'} is the bytes already placed
  between machines s and s' in phase t, by every worker placed so far (the machines of a
  selection fill one after the other, so a machine may already carry traffic when a set joins
  it). Lines 6-9 and the prose ("If all communication pairs of worker n satisfy the bandwidth
  constraint, we will add it"): worker n joins s only if every pair (n, n') with n' on another
  machine keeps, in every phase, C_{f,f'} plus the bytes of the workers that joined before n
  plus n's own within P_{s,s'}; the check is made as each worker joins, never afterwards. The
  workers scanned (line 6, ``for n ∈ N_c``) are the worker subset offered to s (below).
* **Alg. 2, lines 1-3** ("Initiate N_s by randomly distributing workers"; Phi = ∅): every worker
  starts in a set of its own (deterministic; the random draw is never read before line 16 replaces
  it).
* **Alg. 2, lines 4-15** ("Iterative Merging Worker Subsets", H of Def. 1, the argmax
  ``argmax_{s ∈ S_n} H(Phi ∪ N_s)``). H counts the machines saved by merging worker subsets,
  so the greedy has two levels, both maximising it (:func:`_merged_sets`, :func:`choose`):

  - *machine selection*: the fewest machines whose idle GPUs hold the N workers. Coverage
    ``min(N, sum of R_s)`` is monotone submodular; its greedy (most idle GPUs first) reaches the
    minimum count when only the resource constraint binds. Eq. (1)'s objective is
    lexicographic, so step 2 first fixes the fewest idle machines, then the fewest non-idle
    ones (reading ``titan_step2``, below). Among selections of the same counts H is equal and
    the choice is the reading ``titan_tie_break``;
  - *worker-set merging*: worker pairs by their traffic per synchronisation (``sum_t C^t``),
    heaviest first (ties by worker index), merge their two sets while the merged set fits the
    largest selected machine; each merge saves one machine (H grows by one), and heaviest-first
    keeps the heavy pairs of the collective inside a machine (halving-doubling: the sub-cubes of
    the heaviest dimensions, {W1, W3} and {W2, W4} for N = 4).

* **Alg. 2, line 16** ("Update the feasible worker sets based on the bandwidth constraint of
  Eq. (5) with Alg. 1"): the sets go to the selected machines first fit decreasing (largest set
  first, machines by most idle GPUs); a machine takes a set when it has the room *and* Alg. 1
  accepts every worker of the set as it joins (:func:`_place` with a capacity).
* **Alg. 2, line 18, repaired.** As written, "Deploy the remaining workers on one machine"
  deploys them without any check and breaks the very constraint Alg. 1 exists to keep (Titan then
  returns nothing on instances that have a placement). Repaired: the remaining workers (those of
  a set no machine takes whole) are deployed one by one with the same check, each on the
  selected machine that holds the most traffic with it (then the most room) among those with room
  that the check accepts; when the check refuses a worker on every selected machine, the greedy
  takes the next machine (the next selection: one more non-idle machine, then one more idle one)
  and deploys again. The line as written is the option ``pseudo-code``. Line 5's bound
  ``|Phi| <= K - 1``: the selection grows at most to the whole pool (``max_attempts`` caps the
  attempts).
* **Alg. 3** (:func:`_two_steps`): step 1 (lines 1-4) runs Alg. 2 over the idle machines S_n,
  most idle GPUs first (the shortest prefix holding the job, one more machine when no
  deployment meets Eq. 5); Phi_n = the machines it uses (all of S_n when it finds none). Step 2
  (lines 5-8) runs it over ``S' = S_f ∪ Phi_n``, reading ``titan_step2``:

  - ``fix-idle-count`` (default): i = the fewest machines of Phi_n (largest first) that the
    non-idle machines need to reach N, then f = the fewest non-idle machines covering what those
    i leave; select (``titan_tie_break``), deploy; when no deployment meets Eq. (5), f + 1, ...,
    then i + 1, ... (at most ``max_attempts`` attempts);
  - ``pool-prefix`` (optkit <= 0.1): the shortest prefix of the pool "non-idle machines by most
    idle GPUs, then Phi_n", one machine longer while no deployment meets Eq. (5). Once it needs
    one idle machine it has taken every non-idle one: idle GPUs (3, 8, 5, 3) of 8, N = 16 gives
    (1 idle, 4 machines) where (1, 3) is optimal.

  Step 3 (lines 9-12) deploys step 2's placement, or step 1's when step 2 found none or step
  1's is lexicographically better on (idle used, used).

``titan_tie_break`` (among selections of equal counts): ``least-traffic`` (default; the best-fit
and the worst-fit selection are both deployed and the one crossing fewer bytes wins, ties to best
fit), ``best-fit`` (the fewest idle GPUs in total, :func:`choose`, an exact DP over the R_s
values) or ``worst-fit`` (the coverage greedy's order). A one-worker job has no traffic: it goes
best fit under ``least-traffic``.

What the repair keeps, proved here and measured in ``tests/test_nimp_titan.py``:

* *Lexicographic optimum where bandwidth cannot bind.* Without P no check refuses a worker, so
  step 2's first selection is deployed: i = i_lb and i + f = u_lb of
  :func:`.bounds.resource_relaxation` (step 1's Phi_n holds the i_lb largest idle machines,
  being the shortest prefix of them that holds N), a lower bound of every placement. Tested
  against a brute force over every placement on seeded instances.
* *Never fewer placements than ``pair-grouping``.* Both try the same selections in the same
  order. On a selection where ``pair-grouping``'s placement meets Eq. (5), ``repaired`` deploys
  the same placement: the bytes between two machines only grow as workers join, so every
  choice ``pair-grouping`` makes passes Alg. 1's check there. The same holds in step 1, so if
  step 1 of ``pair-grouping`` places, so does ``repaired``'s (no later), and if neither does,
  both run step 2 over the same pool. Whenever ``pair-grouping`` places, ``repaired`` places
  (tested instance by instance on the bandwidth-binding sets of
  ``approximation.BINDING_SETS``, the sets ``benchmarks/nimp_approximation.py`` measures).
* *Fig. 1(c).* Fig. 1 (4 machines of 4 GPUs with 4, 3, 2, 1 idle; HD with 4 workers): step 1
  gives Phi_n = {machine 1}; step 2 needs 0 idle machines and 2 non-idle ones. Best fit takes
  machines 2 and 4 (3 + 1) and must split the job 3 + 1 (3K/2); worst fit takes 2 and 3
  (3 + 2), merges {W1, W3} and {W2, W4} (the K/2 pairs) and refuses {W1..W4} (4 > 3): W1, W3
  on machine 2 and W2, W4 on machine 3, cross traffic K, which ``least-traffic`` keeps
  (``tests/test_nimp_fig1.py``).

Complexity: per attempt O(E log E) for the merging (E = distinct worker pairs) and O(N · T' · M)
for the checks (T' = a worker's pairs over the phases), plus the selection (O(M log M), the
best-fit DP); Theorem 7's order per pass.

Algorithms 1-3 as written (``titan_algorithm="pseudo-code"``, the literal line 18)
==================================================================================
Every line of the pseudo-code is followed; where it is garbled or silent, the most literal reading
is taken and named here (``tests/test_nimp_titan.py``, section "pseudo-code", checks each):

* **Alg. 1** (:func:`feasible_worker_set`): as above, with the workers not placed yet scanned in
  index order (line 6); on a machine not used yet C_{f,f'} is that of the workers that joined
  A(s) before n (every set of Phi goes to a machine of its own). A refused worker is skipped;
  A(s) holds at most R_s workers (Eq. 1's resource constraint; Alg. 1 is silent on it).
* **Alg. 2** (:func:`submodular_greedy`): at most K - 1 iterations over a pool of K machines
  (line 5; "The algorithm performs K-1 iterations"); each takes the unused machine whose A(s)
  maximises H(Phi ∪ A(s)) ("argmax_{s ∈ S_n} H(Phi ∪ N_s)"), H of Def. 1 read as the machines
  saved by merging (sum of |N_i| - 1), i.e. the largest feasible set; ties to the first machine
  in index order (line 10, ``tmp > opt``). Line 2's random initial distribution is never read
  before Alg. 1 replaces it, so it is not drawn. Line 18 deploys the remaining workers on one
  machine ("one idle machine" in the prose: the unused one with the most idle GPUs, idle first,
  then lowest index) *without* checking any constraint.
* **Alg. 3** (:func:`alg3_deployment`): step 1, Alg. 2 over the idle machines S_n, gives
  Phi_n (the machines it deploys on); step 2, Alg. 2 over S_f ∪ Phi_n, where a non-idle machine
  with a non-empty feasible set comes before an idle one (the prose of step 2: "we try to replace
  idle machines deployed with workers with the non-idle machine"; Eq. 3's first objective, the
  remaining idle machines; without it step 2 repeats step 1 and Fig. 1 would open the idle
  machine); step 3 deploys step 2's Phi. Titan returns it if it meets Eq. (1), else ``None``
  (line 18 may break a constraint; no fallback to step 1). ``titan_step2`` and
  ``titan_tie_break`` do not apply.

Consequences measured in the tests: on Fig. 1 the pseudo-code uses the figure's machines 2 and 3
but fills machine 2 with W1-W3 (cross traffic 3K/2, not Fig. 1(c)'s K); on issue 23's two
instances it finds nothing where the optimum uses (2 idle, 3) and (0 idle, 2) machines; with no
bandwidth in play it uses (1 idle, 3 machines) where (1, 1) is optimal (generate's tiny-33).
Complexity: O(K · |S'| · N · T) per Alg. 2 pass in the worst case (Theorem 7's order); the
greedy evaluates A(s) only for machines whose bound min(R_s, |N_c|) can still win.

Placement checked afterwards (``titan_algorithm="pair-grouping"``, optkit <= 0.2)
=================================================================================
The machine selection, the merging and the two passes of ``repaired``, with the sets placed
where they have room (no check while placing: a set no machine takes whole is split and its
workers go one by one to the machine holding the most traffic with them) and the whole placement
then checked against Eq. (5) for every phase and machine pair; on a violation the greedy takes
the next selection. No line of Algorithms 1-3 checks after placing.
"""

from __future__ import annotations

import math
import time
from typing import Any, Mapping, Sequence

import numpy as np

from optkit.errors import InputError
from optkit.result import Result, Status
from optkit.validation import checked_arguments, integer

from .model import REL_TOL, NimpInstance, Phase, solution_dict

__all__ = ["titan", "run_titan", "place_with_and_without_capacity", "Collective", "choose", "feasible_worker_set", "submodular_greedy",
           "alg3_deployment"]


class Collective:
    """Phases of a collective, preprocessed once: distinct phases as pair arrays with their
    volume, the worker pairs with their bytes per synchronisation, heaviest first, and
    ``C^t_{n,n'}`` per worker (``partners[n]``: (distinct phase t, partner n', bytes)). Phases with
    the same pairs give the same constraints of Eq. (5), so each distinct pair set is one t (with
    its largest volume)."""

    def __init__(self, workers: int, phases: Sequence[Phase]) -> None:
        self.workers = workers
        distinct: dict[tuple[tuple[int, int], ...], float] = {}
        weight: dict[tuple[int, int], float] = {}
        for ph in phases:
            if ph.pairs:
                distinct[ph.pairs] = max(distinct.get(ph.pairs, 0.0), ph.volume)
            for p in ph.pairs:
                weight[p] = weight.get(p, 0.0) + ph.volume
        self.phase_arrays = [(np.asarray(pr, dtype=np.int64), v) for pr, v in distinct.items()]
        self.partners: list[list[tuple[int, int, float]]] = [[] for _ in range(workers)]
        for t, (pairs, v) in enumerate(distinct.items()):
            for a, b in pairs:
                self.partners[a].append((t, b, v))
                self.partners[b].append((t, a, v))
        self.edges = sorted(weight.items(), key=lambda e: (-e[1], e[0]))
        self.adj: list[list[tuple[int, float]]] = [[] for _ in range(workers)]
        for (a, b), w in self.edges:
            self.adj[a].append((b, w))
            self.adj[b].append((a, w))


def _feasible_bandwidth(col: Collective, m: np.ndarray, capacity: float | np.ndarray, M: int) -> bool:
    """Eq. (5) for every distinct phase and machine pair."""
    for pr, v in col.phase_arrays:
        ma, mb = m[pr[:, 0]], m[pr[:, 1]]
        split = ma != mb
        if not split.any():
            continue
        lo, hi = np.minimum(ma[split], mb[split]), np.maximum(ma[split], mb[split])
        keys, counts = np.unique(lo * M + hi, return_counts=True)
        if np.isscalar(capacity):
            if counts.max() * v > float(capacity) * (1.0 + REL_TOL):
                return False
        else:
            caps = np.asarray(capacity)[keys // M, keys % M]
            if np.any(counts * v > caps * (1.0 + REL_TOL)):
                return False
    return True


def _merged_sets(col: Collective, cmax: int) -> list[list[int]]:
    """Alg. 2's "Iterative Merging Worker Subsets" (Def. 1): every worker starts alone; worker
    pairs in order of their traffic per synchronisation, heaviest first (ties by worker index),
    merge their two sets when the merged set still fits ``cmax`` GPUs (the largest selected
    machine). Each merge saves one machine (H grows by one). The sets, largest first (ties by
    their first worker)."""
    N = col.workers
    parent = list(range(N))
    size = [1] * N
    for (a, b), _w in col.edges:
        while parent[a] != a:
            a = parent[a]
        while parent[b] != b:
            b = parent[b]
        if a != b and size[a] + size[b] <= cmax:
            if b < a:
                a, b = b, a
            parent[b] = a
            size[a] += size[b]
    groups: dict[int, list[int]] = {}
    for n in range(N):
        r = n
        while parent[r] != r:
            r = parent[r]
        groups.setdefault(r, []).append(n)
    return sorted(groups.values(), key=lambda g: (-len(g), g[0]))


def _join(workers: Sequence[int], s: int, m: list[int], load: dict[tuple[int, int, int], float],
          col: Collective) -> None:
    """Place ``workers`` on machine ``s`` and add their bytes to other machines to ``load``
    ((t, s, s') with s < s': the existing overhead C_{f,f'} of Alg. 1 line 5)."""
    partners = col.partners
    for n in workers:
        m[n] = s
        for t, n2, v in partners[n]:
            s2 = m[n2]
            if s2 >= 0 and s2 != s:
                key = (t, s, s2) if s < s2 else (t, s2, s)
                load[key] = load.get(key, 0.0) + v


def _place(col: Collective, selected: Sequence[int], R: Sequence[int],
           capacity: float | np.ndarray | None = None) -> np.ndarray | None:
    """Alg. 2's merged worker sets (:func:`_merged_sets`) deployed on the ``selected`` machines
    (in that order): each set whole on the first machine that takes it, first fit decreasing; the
    workers of a set no machine takes whole go one by one to the machine holding the most traffic
    with them (then the most room).

    ``capacity=None`` (``titan_algorithm="pair-grouping"``): a machine takes a set when it has the
    room; the caller checks Eq. (5) afterwards. Otherwise (``"repaired"``) a machine takes a set
    or a worker only when Alg. 1's check passes as each worker joins
    (:func:`feasible_worker_set` with the bytes already placed between machines as C_{f,f'}), and
    ``None`` is returned when a worker passes on no machine of ``selected`` with room (Alg. 2 line
    18 repaired: the caller's greedy takes the next machine). Every placement returned under a
    ``capacity`` meets Eq. (5) for it: each pair's bytes were checked when its second worker
    joined."""
    N = col.workers
    sets = _merged_sets(col, max(R[s] for s in selected))
    free = {s: R[s] for s in selected}
    m = [-1] * N
    load: dict[tuple[int, int, int], float] = {}
    check = capacity is not None and (isinstance(capacity, np.ndarray) or capacity != math.inf)

    def takes(s: int, g: list[int]) -> bool:
        return not check or len(feasible_worker_set(s, g, m, len(g), capacity, load, col)) == len(g)

    leftovers: list[int] = []
    for g in sets:
        k = len(g)
        for s in selected:
            if free[s] >= k and takes(s, g):
                free[s] -= k
                _join(g, s, m, load, col)
                break
        else:
            leftovers += g
    for n in leftovers:
        gain: dict[int, float] = {}
        for b, wt in col.adj[n]:
            sb = m[b]
            if sb >= 0 and free[sb] > 0:
                gain[sb] = gain.get(sb, 0.0) + wt
        # the best machine by (traffic with n, room), the first of equals in selection order,
        # among those that pass Alg. 1's check: the first that passes in that order
        ranked = sorted((s for s in selected if free[s] > 0), key=lambda s: (-gain.get(s, 0.0), -free[s]))
        best = next((s for s in ranked if takes(s, [n])), None)
        if best is None:
            return None  # the check refuses n on every machine of the selection
        free[best] -= 1
        _join([n], best, m, load, col)
    return np.asarray(m, dtype=np.int64)


def _attempt(col: Collective, selected: Sequence[int], R: Sequence[int], capacity: float | np.ndarray, M: int,
             checked: bool) -> np.ndarray | None:
    """One placement on ``selected`` that meets Eq. (5), or ``None``: under ``checked``
    (``repaired``) Alg. 1's check as each worker joins (:func:`_place` with ``capacity``), else
    (``pair-grouping``) the check of the whole placement afterwards."""
    if checked:
        return _place(col, selected, R, capacity)
    m = _place(col, selected, R)
    assert m is not None  # unchecked, every worker finds room: the selection holds N
    return m if _feasible_bandwidth(col, m, capacity, M) else None


def _feasible_at(col: Collective, selected: Sequence[int], R: Sequence[int], capacity: float | np.ndarray,
                 M: int, checked: bool) -> np.ndarray | None:
    return _attempt(col, sorted(selected, key=lambda s: (-R[s], s)), R, capacity, M, checked)


def _greedy(col: Collective, pool: Sequence[int], R: Sequence[int], capacity: float | np.ndarray,
            M: int, max_attempts: int | None, checked: bool) -> np.ndarray | None:
    """Alg. 2 over ``pool`` (already in greedy order): the shortest prefix that holds the job,
    extended one machine at a time while no placement on it meets Eq. (5) (step 1, and step 2
    under ``titan_step2="pool-prefix"``); :func:`_attempt` places."""
    N = col.workers
    total, k = 0, 0
    while k < len(pool) and total < N:
        total += R[pool[k]]
        k += 1
    if total < N:
        return None
    attempts = 0
    while k <= len(pool):
        m = _attempt(col, pool[:k], R, capacity, M, checked)
        if m is not None:
            return m
        attempts += 1
        if max_attempts is not None and attempts >= max_attempts:
            return None
        k += 1
    return None


def _cross_weight(col: Collective, m: np.ndarray) -> float:
    """Cross-machine bytes per synchronisation of placement ``m`` (sum of split pairs' traffic)."""
    return float(sum(w for (a, b), w in col.edges if m[a] != m[b]))


def _cover_count(sizes: Sequence[int], need: int) -> int | None:
    """Fewest of ``sizes`` (``sizes`` sorted largest first) summing to >= need."""
    if need <= 0:
        return 0
    total = 0
    for k, r in enumerate(sizes, 1):
        total += r
        if total >= need:
            return k
    return None


def choose(machines: Sequence[int], R: Sequence[int], count: int, need: int, tie_break: str, *,
           ordered: bool = False) -> list[int] | None:
    """``count`` of ``machines`` whose idle GPUs sum to >= ``need`` (``None`` if no such choice).

    ``worst-fit``: the ``count`` machines with the most idle GPUs (ties by index), the coverage
    greedy. ``best-fit``: among all choices of ``count`` machines reaching ``need``, one with the
    fewest idle GPUs in total (reading ``titan_tie_break``); among those, as few machines of small
    R_s as possible, then lower indices. Exact: a subset-sum DP over the distinct R_s values with
    the reachable sums of each machine count as the bits of one integer. ``ordered``: the
    machines already come most idle GPUs first, ties by index."""
    need = max(need, 0)
    by_r = list(machines) if ordered else sorted(machines, key=lambda s: (-R[s], s))
    if count > len(by_r) or sum(R[s] for s in by_r[:count]) < need:
        return None
    if tie_break == "worst-fit" or count == 0:
        return by_r[:count]
    groups: dict[int, list[int]] = {}
    for s in by_r:
        groups.setdefault(R[s], []).append(s)
    values = sorted(groups, reverse=True)
    # stages[i][k]: bit t set <=> k machines from values[:i] can hold exactly t idle GPUs
    stages = [[1] + [0] * count]
    for v in values:
        prev, cur = stages[-1], [0] * (count + 1)
        for k in range(count + 1):
            if prev[k]:
                for j in range(min(len(groups[v]), count - k) + 1):
                    cur[k + j] |= prev[k] << (j * v)
        stages.append(cur)
    high = stages[-1][count] >> need
    if not high:  # pragma: no cover - excluded by the sum check above
        return None
    t = need + (high & -high).bit_length() - 1  # the fewest idle GPUs >= need
    out: list[int] = []
    k = count
    for i in range(len(values), 0, -1):  # smallest value first: take as few of it as possible
        v = values[i - 1]
        for j in range(min(len(groups[v]), k) + 1):
            if t >= j * v and stages[i - 1][k - j] >> (t - j * v) & 1:
                break
        out += groups[v][:j]
        k, t = k - j, t - j * v
    return sorted(out, key=lambda s: (-R[s], s))


def _fewest_idle_then_fewest(col: Collective, idle: Sequence[int], frag: Sequence[int], R: Sequence[int],
                             capacity: float | np.ndarray, M: int, max_attempts: int | None,
                             tie_break: str, checked: bool,
                             compared: list[np.ndarray] | None = None) -> np.ndarray | None:
    """Step 2 under ``titan_step2="fix-idle-count"``: for i = the fewest idle machines of ``idle``
    (largest first) that the non-idle machines ``frag`` need, then i + 1, ...: for f = the fewest
    non-idle machines covering what the i idle ones leave, then f + 1, ...: choose them
    (:func:`choose`) and place (:func:`_attempt`: Alg. 1's check as each worker joins under
    ``checked``, else Eq. (5) checked afterwards); the first placement that meets Eq. (5) wins.
    Without bandwidth the first attempt is the lexicographic optimum (i_lb, i_lb + f_lb) of
    :func:`optkit.formulations.nimp.bounds.resource_relaxation` over ``idle`` ∪ ``frag``.
    ``compared``: where given, receives the placements the winning attempt compared."""
    N = col.workers
    frag_sizes = [R[s] for s in frag]  # both pools come most idle GPUs first, ties by index
    frag_total = sum(frag_sizes)
    i0 = _cover_count([R[s] for s in idle], N - frag_total)
    if i0 is None:
        return None
    attempts = 0
    for i in range(i0, len(idle) + 1):
        chosen_idle = idle[:i]
        need = N - sum(R[s] for s in chosen_idle)
        f0 = _cover_count(frag_sizes, need)
        if f0 is None:  # pragma: no cover - i >= i0 covers
            continue
        for f in range(f0, len(frag) + 1):
            # least-traffic without any traffic (one worker) is best fit
            fits = ("best-fit", "worst-fit") if tie_break == "least-traffic" and col.edges else (
                ("best-fit",) if tie_break == "least-traffic" else (tie_break,))
            found, tried = [], []
            for fit in fits:
                sel = choose(frag, R, f, need, fit, ordered=True)
                if sel is None or sel in tried:  # the same selection places the same way
                    continue
                tried.append(sel)
                m = _feasible_at(col, chosen_idle + sel, R, capacity, M, checked)
                if m is not None:
                    found.append(m)
            if found:  # least-traffic: fewer cross bytes, ties to best fit (listed first)
                if compared is not None:
                    compared += found
                return min(found, key=lambda m: _cross_weight(col, m))
            attempts += 1
            if max_attempts is not None and attempts >= max_attempts:
                return None
    return None


# ----------------------------------------------------------------------------- Algorithms 1-3 as written
def _as_capacity(capacity: Any) -> float | np.ndarray:
    """P as a float or a float matrix (a nested list is accepted)."""
    return np.asarray(capacity, dtype=float) if isinstance(capacity, (list, tuple, np.ndarray)) else float(capacity)


def check_readings(titan_algorithm: str, titan_step2: str, titan_tie_break: str) -> None:
    """The three readings of Titan (:mod:`.readings`: ``titan_algorithm``, ``titan_step2``,
    ``titan_tie_break``), each one of its declared values, or an InputError naming it."""
    if titan_algorithm not in ("repaired", "pseudo-code", "pair-grouping"):
        raise InputError("titan_algorithm", f"must be repaired, pseudo-code or pair-grouping, got {titan_algorithm!r}",
                         problem="nimp")
    if titan_step2 not in ("fix-idle-count", "pool-prefix"):
        raise InputError("titan_step2", f"must be fix-idle-count or pool-prefix, got {titan_step2!r}", problem="nimp")
    if titan_tie_break not in ("least-traffic", "best-fit", "worst-fit"):
        raise InputError("titan_tie_break", f"must be least-traffic, best-fit or worst-fit, got {titan_tie_break!r}",
                         problem="nimp")


def check_max_attempts(max_attempts: Any) -> int | None:
    """``max_attempts``: ``None`` (no cap) or an integer >= 1 (0 or a negative cap would stop
    Titan before its first attempt, or never)."""
    if max_attempts is None:
        return None
    try:
        return integer(max_attempts, "max_attempts", low=1)
    except InputError as err:
        raise err.with_problem("nimp") from None


def check_machines(gpus: Sequence[int] | None, idle_gpus: Sequence[int],
                   workers: Any) -> tuple[np.ndarray | None, np.ndarray]:
    """The machines and the job size of a placement function, checked as an instance file's
    fields are (InputError naming the argument): R_s integers >= 0, one per machine, at least
    one machine; K_s (when given) integers >= 1 with R_s <= K_s; N an integer >= 1. Returns
    (K, R) as integer arrays (K ``None`` when not given)."""
    def fail(field: str, message: str) -> InputError:
        return InputError(field, message, problem="nimp")

    arrays: list[np.ndarray | None] = []
    for name, values in (("gpus", gpus), ("idle_gpus", idle_gpus)):
        if values is None:
            arrays.append(None)
            continue
        if isinstance(values, (str, bytes, Mapping)):
            raise fail(name, f"must list a GPU count per machine, got {type(values).__name__}")
        try:
            a = np.asarray(values, dtype=np.float64)
        except (TypeError, ValueError):
            raise fail(name, f"must list a GPU count (an integer) per machine, got {values!r}") from None
        if a.ndim != 1 or a.size == 0:
            raise fail(name, f"must list the GPUs of at least one machine, got {values!r}")
        low = 1 if name == "gpus" else 0
        bad = np.flatnonzero(~np.isfinite(a) | (a != np.round(a)) | (a < low))
        if bad.size:
            raise fail(f"{name}[{int(bad[0])}]", f"must be an integer >= {low}, got {a[bad[0]]:g}")
        arrays.append(a)
    Ka, Ra = arrays
    assert Ra is not None
    if Ka is not None:
        if Ra.shape != Ka.shape:
            raise fail("idle_gpus", f"must list one R_s per machine ({Ka.size}), got {Ra.size}")
        over = np.flatnonzero(Ra > Ka)
        if over.size:
            s = int(over[0])
            raise fail(f"idle_gpus[{s}]", f"must be <= gpus ({int(Ka[s])}), got {int(Ra[s])}")
    if isinstance(workers, bool) or not isinstance(workers, (int, np.integer)) or workers < 1:
        raise fail("workers", f"must be an integer >= 1, got {workers!r}")
    return (None if Ka is None else Ka.astype(np.int64)), Ra.astype(np.int64)


def _checked(gpus: Sequence[int], idle_gpus: Sequence[int], capacity: Any,
             workers: int) -> tuple[np.ndarray, np.ndarray, float | np.ndarray]:
    """:func:`titan`'s typed arguments, checked as an instance file's fields are (InputError
    naming the argument): K_s >= 1, 0 <= R_s <= K_s, one of each per machine, N >= 1, P a number
    >= 0 or a symmetric M x M matrix of them. Unlike an instance file, P may be ``inf`` (no
    bandwidth constraint: the cluster replay passes it where the topology leaves a pair
    unconstrained)."""
    def fail(field: str, message: str) -> InputError:
        return InputError(field, message, problem="nimp")

    if gpus is None:
        raise fail("gpus", "is required (K_s of each machine)")
    Ka, Ra = check_machines(gpus, idle_gpus, workers)
    assert Ka is not None
    try:
        cap = _as_capacity(capacity)
    except (TypeError, ValueError):
        raise fail("capacity", f"must be a number or an M x M matrix of numbers, got {capacity!r}") from None
    M = Ka.size
    if isinstance(cap, np.ndarray):
        if cap.shape != (M, M):
            raise fail("capacity", f"must be a number or an {M} x {M} matrix (one row and column per machine), "
                                   f"got shape {cap.shape}")
        if np.isnan(cap).any() or (cap < 0).any():
            raise fail("capacity", "must hold numbers >= 0 (bytes per phase)")
        if not np.array_equal(cap, cap.T):
            s, u = (int(i) for i in np.argwhere(cap != cap.T)[0])
            raise fail("capacity", f"must be symmetric (the capacity of the unordered pair {{s, s'}}), but "
                                   f"[{s}][{u}] = {cap[s, u]:g} and [{u}][{s}] = {cap[u, s]:g}")
    elif math.isnan(cap) or cap < 0:
        raise fail("capacity", f"must be a number >= 0 (bytes per phase), got {capacity!r}")
    return Ra, Ka, cap


def feasible_worker_set(s: int, available: Sequence[int], machine_of: Sequence[int], room: int,
                        capacity: float | np.ndarray, load: Mapping[tuple[int, int, int], float],
                        col: Collective) -> list[int]:
    """Alg. 1, "Search for Feasible Worker Set", for machine ``s``: A(s).

    Line 2: A(s) = ∅. Line 3: the available workers N_c = N - 𝒩 (``available``: the workers not
    placed yet, ``machine_of[n] == -1``), scanned in worker index order (line 6, ``for n ∈ N_c``).
    Line 5: ``load[(t, s, s')]`` (s < s') is the existing communication overhead C_{f,f'} between
    machines s and s' in phase t, of workers already placed on s (none when s is not used yet, as
    in Alg. 2). Lines 7-9: worker n joins A(s)
    only if every communication pair (n, n') with n' placed on another machine s', in every phase
    t, keeps the bytes between s and s' in t within P_{s,s'} *at that moment*: the existing
    overhead, plus what the workers that joined A(s) before n add, plus n's own pairs. ("If all
    communication pairs of worker n satisfy the bandwidth constraint, we will add it to the
    feasible worker set", Sec. IV-B; the pseudo-code's line 9 tests one pair at a time, which is
    the same test when n has one partner on s' in t, as in halving-doubling of 2^k workers and
    ring, and the sum of n's pairs otherwise, so that Eq. (5) holds after n joins.) A rejected
    worker is skipped and the scan goes on (the loop over n has no exit). Pairs with workers not
    yet placed are not constrained yet; they are checked when those workers join a machine.
    The resource constraint of Eq. (1) bounds A(s) at ``room`` = R_s workers (Alg. 1 is silent on
    it; a set larger than R_s cannot be deployed on s)."""
    if not isinstance(capacity, np.ndarray) and capacity == math.inf:
        return list(available[:room])  # no pair can exceed an infinite P: every test passes
    out: list[int] = []
    added: dict[tuple[int, int], float] = {}  # (t, s') -> bytes the members of A(s) add
    row = capacity[s] if isinstance(capacity, np.ndarray) else None  # P_{s,.}
    limit = 0.0 if row is not None else float(capacity) * (1.0 + REL_TOL)
    partners = col.partners
    for n in available:
        if len(out) >= room:
            break
        mine: dict[tuple[int, int], float] = {}
        for t, n2, v in partners[n]:
            s2 = machine_of[n2]
            if s2 >= 0 and s2 != s:
                mine[(t, s2)] = mine.get((t, s2), 0.0) + v
        ok = True
        for (t, s2), v in mine.items():
            key = (t, s, s2) if s < s2 else (t, s2, s)
            if load.get(key, 0.0) + added.get((t, s2), 0.0) + v > (
                    limit if row is None else float(row[s2]) * (1.0 + REL_TOL)):
                ok = False  # "We stop searching if there exists one communication pair that exceeds"
                break
        if ok:
            out.append(n)
            for k, v in mine.items():
                added[k] = added.get(k, 0.0) + v
    return out


def submodular_greedy(pool: Sequence[int], R: Sequence[int], is_idle: Sequence[bool], capacity: float | np.ndarray,
                      col: Collective, *, keep_idle: bool) -> list[int]:
    """Alg. 2, "Submodular-based Algorithm", over the machine set ``pool``: the machine of every
    worker (not checked against Eq. 1: line 18 places the rest regardless of the constraints).

    * Lines 1-3: Φ = ∅. The random initial distribution of line 2 is not read before Alg. 1's
      feasible worker sets replace it (line 16; the prose: "we initiate feasible worker sets for
      each machine"), so it is not drawn: the algorithm is deterministic.
    * Lines 5-15, one iteration: for every machine s of the pool not used yet, its feasible worker
      set A(s) (:func:`feasible_worker_set`, Alg. 1, line 16), and the s maximising H(Φ ∪ A(s))
      ("argmax_{s ∈ S_n} H(Φ ∪ 𝒩_s)", Sec. IV-B); A(s) joins Φ: its workers are placed on s.
      H is Def. 1's "reduction of deployed machine number achieved by merging": the N workers
      alone use N machines, a set of Φ merged on one machine saves |𝒩_i| - 1 of them, so
      H(Φ ∪ A(s)) - H(Φ) = |A(s)| - 1 and the greedy takes the largest feasible set. Ties go to
      the first machine in index order (line 10: ``tmp > opt``, strictly). With ``keep_idle``
      (Alg. 3 step 2, "we try to replace idle machines deployed with workers with the non-idle
      machine"; Eq. 3 maximises the remaining idle machines O_1 before O_2) a non-idle machine
      with a non-empty A(s) comes before any idle one.
    * Line 5: at most K - 1 iterations, K = |pool| (Sec. IV-B: "The algorithm performs K-1
      iterations so the set Φ will contain K-1 worker sets"); the greedy stops earlier when every
      worker is placed or no machine can take one (an iteration that adds nothing changes nothing).
    * Line 18: "Deploy the remaining workers on one machine" ("on one idle machine", Sec. IV-B),
      without a check: on the unused machine of the pool with the most idle GPUs (an idle one
      first, then the lowest index)."""
    machine_of = [-1] * col.workers
    available = list(range(col.workers))
    # Every set of Phi goes to a machine of its own, so a machine not used yet carries no existing
    # overhead C_{f,f'} (line 5) but that of the workers joining its A(s): Alg. 1 starts from none.
    no_overhead: dict[tuple[int, int, int], float] = {}
    unused = [s for _k, _r, s in sorted([(-(keep_idle and not is_idle[s]), -R[s], s) for s in pool])]
    for _ in range(len(pool) - 1):
        if not available:
            break
        best: tuple[tuple[int, int], int, list[int]] | None = None
        nav = len(available)
        for s in unused:
            r = R[s]
            rank = (int(keep_idle and not is_idle[s]), r if r < nav else nav)  # an upper bound of s's
            if best is not None and rank < best[0]:
                break  # ``unused`` comes by decreasing bound: no later machine can win
            if best is not None and rank == best[0] and s > best[1]:
                continue
            a = feasible_worker_set(s, available, machine_of, R[s], capacity, no_overhead, col)
            if not a:
                continue
            key = (rank[0], len(a))
            if best is None or key > best[0] or (key == best[0] and s < best[1]):
                best = (key, s, a)
        if best is None:
            break  # no machine can take a worker: every further iteration is the same
        _key, s, a = best
        for n in a:
            machine_of[n] = s
        chosen = set(a)
        available = [n for n in available if n not in chosen]
        unused.remove(s)
    if available and unused:
        last = min(unused, key=lambda s: (-R[s], not is_idle[s], s))
        for n in available:
            machine_of[n] = last
    return machine_of


def _meets_eq1(col: Collective, m: np.ndarray, R: Sequence[int], capacity: float | np.ndarray, M: int) -> bool:
    """Eq. (1)'s placement, resource and bandwidth constraints."""
    if np.any(m < 0):
        return False
    load = np.bincount(m, minlength=M)
    return bool(np.all(load <= np.asarray(R))) and _feasible_bandwidth(col, m, capacity, M)


def alg3_deployment(gpus: Sequence[int], idle_gpus: Sequence[int], capacity: float | np.ndarray,
                    phases: Sequence[Phase], *, workers: int) -> list[int]:
    """Alg. 3, "The Overall Algorithm", with Algorithms 1 and 2 as written (reading
    ``titan_algorithm="pseudo-code"``): the deployment of step 3, *unchecked* (-1 for a worker
    left without a machine, which happens only when no machine has an idle GPU).

    Step 1 (lines 1-4): Alg. 2 over the idle machines S_n; Phi_n = the machines it deploys
    workers on. Step 2 (lines 5-8): Alg. 2 over S_f ∪ Phi_n, non-idle machines first. Step 3
    (lines 9-12): x_n^s = 1 for the sets of step 2's Phi. :func:`titan` returns it when it meets
    Eq. (1) (line 18 of Alg. 2 may break a constraint; step 3 has no fallback)."""
    cap = _as_capacity(capacity)
    return _alg3(Collective(workers, phases), np.asarray(idle_gpus, dtype=np.int64),
                 np.asarray(gpus, dtype=np.int64), cap)


def _alg3(col: Collective, Ra: np.ndarray, Ka: np.ndarray, cap: float | np.ndarray) -> list[int]:
    """:func:`alg3_deployment` on preprocessed arguments."""
    M = len(Ra)
    R = Ra.tolist()
    is_idle = (Ra == Ka).tolist()
    idle = [s for s in range(M) if R[s] > 0 and is_idle[s]]
    frag = [s for s in range(M) if R[s] > 0 and not is_idle[s]]
    step1 = submodular_greedy(idle, R, is_idle, cap, col, keep_idle=False) if idle else []
    phi_n = sorted({s for s in step1 if s >= 0})
    return submodular_greedy(sorted(frag + phi_n), R, is_idle, cap, col, keep_idle=True)


def _one_worker_pseudo_code(Ra: np.ndarray, Ka: np.ndarray) -> list[int] | None:
    """:func:`_alg3` for N = 1 in closed form (most of a cluster trace's jobs): no phase, so every
    machine with an idle GPU has the feasible set {W0} (Alg. 1) and Alg. 2's ties go to the lowest
    index. Step 1 takes the first idle machine with an idle GPU; step 2 (non-idle machines first)
    the first non-idle machine with an idle GPU, else step 1's. ``None``: no idle GPU at all.
    Equal to :func:`_alg3` on seeded clusters (tests/test_nimp_titan.py)."""
    frag = np.flatnonzero((Ra > 0) & (Ra < Ka))
    if frag.size:
        return [int(frag[0])]
    idle = np.flatnonzero((Ra > 0) & (Ra == Ka))
    return [int(idle[0])] if idle.size else None


def _one_worker(Ra: np.ndarray, Ka: np.ndarray, step2: str, tie_break: str) -> list[int] | None:
    """Alg. 3 for N = 1 in closed form (no phase, so no bandwidth constraint): step 2 needs no
    idle machine when a non-idle one has an idle GPU, and one machine. Which one: the fewest idle
    GPUs under ``best-fit`` and ``least-traffic`` (no traffic: ties go to best fit), the most under
    ``worst-fit`` and ``pool-prefix`` (the head of its pool); ties by index. Without a non-idle
    machine: step 1's, the idle machine with the most idle GPUs. ``None``: no idle GPU at all."""
    frag = np.flatnonzero((Ra > 0) & (Ra < Ka))
    if len(frag):
        r = Ra[frag]
        best = step2 == "fix-idle-count" and tie_break != "worst-fit"
        return [int(frag[np.argmin(r) if best else np.argmax(r)])]
    idle = np.flatnonzero((Ra > 0) & (Ra == Ka))
    return [int(idle[np.argmax(Ra[idle])])] if len(idle) else None


@checked_arguments("nimp")
def titan(gpus: Sequence[int], idle_gpus: Sequence[int], capacity: float | np.ndarray,
          phases: Sequence[Phase], *, workers: int, max_attempts: int | None = None,
          titan_step2: str = "fix-idle-count", titan_tie_break: str = "least-traffic",
          titan_algorithm: str = "repaired") -> list[int] | None:
    """Titan's placement (Alg. 3) of a ``workers``-worker job, or ``None`` if it finds none that
    meets Eq. (1).

    Parameters
    ----------
    gpus
        K_s per machine (GPU count).
    idle_gpus
        R_s per machine (idle GPU count, at most K_s).
    capacity
        P, one number for every machine pair or an M x M symmetric array (bytes per phase).
    phases
        The collective's phases (:func:`optkit.formulations.nimp.model.phases`).
    workers
        N.
    titan_algorithm
        Reading ``titan_algorithm`` (``formulations/nimp/readings.py``): ``repaired`` (default:
        Algorithms 1-3 with Alg. 1's bandwidth check as each worker joins a machine, the worker
        sets merged by pair traffic, and Alg. 2 line 18 repaired: the remaining workers are
        deployed with the same check, on the next machine the greedy takes), ``pseudo-code``
        (Algorithms 1-3 as written, line 18 deploying the remaining workers on one machine
        without a check) or ``pair-grouping`` (optkit <= 0.2: ``repaired``'s sets placed where
        they have room and the whole placement checked afterwards). The module docstring reads
        each line.
    max_attempts
        ``repaired`` and ``pair-grouping``: placement attempts per greedy pass before giving up
        (default: until the pool is exhausted).
    titan_step2
        Reading ``titan_step2`` (``repaired`` and ``pair-grouping``), step 2's selection:
        ``fix-idle-count`` (default; lexicographically optimal when bandwidth does not bind) or
        ``pool-prefix``.
    titan_tie_break
        Reading ``titan_tie_break`` (``repaired`` and ``pair-grouping``), the choice among
        non-idle machines of equal count: ``least-traffic`` (default: of the best-fit and the
        worst-fit choice, the one whose placement crosses fewer bytes, ties to best fit),
        ``best-fit`` or ``worst-fit`` (:func:`choose`). ``pool-prefix`` always takes the coverage
        order.

    Returns
    -------
    list of int or None
        The machine index of every worker, or ``None`` when Titan finds no placement that meets
        Eq. (1) (``repaired``, ``pair-grouping``: no selection it tries can carry the job under
        P; ``pseudo-code``: the placement Alg. 3 builds breaks Eq. (1), and it has no fallback).
        Not a proof that none exists.

    References
    ----------
    Fang et al., "Titan", Sec. IV: Algorithm 1 (feasible worker sets), Algorithm 2 (greedy
    merging), Algorithm 3 (idle machines first, then the non-idle ones); the readings of the
    ambiguous lines are this module's docstring.

    Notes
    -----
    Guarantee: under ``repaired`` (and ``pair-grouping``) the lexicographic optimum wherever the
    bandwidth constraint cannot bind (module docstring; tested against brute force). Theorems 4-5
    claim (1 - 1/e) of the optimum for each criterion; the proof applies the greedy bound of
    submodular maximisation without the bandwidth constraint, and with a binding P the claim
    fails on seeded instances (:mod:`optkit.formulations.nimp.approximation`,
    ``benchmarks/perf/nimp_approximation.md``).

    Units: GPU counts; ``capacity`` and the phases' volumes in bytes per phase.

    Examples
    --------
    Three 8-GPU machines with 2, 8 and 3 idle GPUs; a 4-worker ring of 100 MB, 200 MB per machine
    pair and phase. Titan keeps the idle machine 1 free:

    >>> from optkit.formulations.nimp.model import ring_phases
    >>> titan([8, 8, 8], [2, 8, 3], 200e6, ring_phases(4, 100e6), workers=4)
    [2, 2, 0, 2]
    """
    check_readings(titan_algorithm, titan_step2, titan_tie_break)
    Ra, Ka, cap = _checked(gpus, idle_gpus, capacity, workers)
    max_attempts = check_max_attempts(max_attempts)
    if isinstance(phases, (str, bytes)) or not all(isinstance(p, Phase) for p in phases):
        raise InputError("phases", "must be the collective's phases (optkit.formulations.nimp.model.phases(job) "
                                   "or ring_phases(workers, param_bytes)), got "
                                   f"{[type(p).__name__ for p in phases][:3]}", problem="nimp")
    return place_unchecked(Ka, Ra, cap, phases, workers=workers, max_attempts=max_attempts, titan_step2=titan_step2,
                           titan_tie_break=titan_tie_break, titan_algorithm=titan_algorithm)


_COLLECTIVES: dict[tuple[int, int], tuple[Sequence[Phase], Collective]] = {}
_COLLECTIVES_BY_PHASES: dict[tuple[int, tuple[Phase, ...]], Collective] = {}


def _collective(workers: int, phases: Sequence[Phase]) -> Collective:
    """``Collective(workers, phases)``, kept while the caller passes the same phase list (the
    replay caches one list per (N, collective, K), so each job of a trace reuses it), and for
    equal phases in a new list (a caller that builds the phases for each call, as
    ``run_titan`` through ``instance.phases()``): a Collective is a function of ``workers`` and
    the phases' values (frozen :class:`.model.Phase`), and nothing changes it once built."""
    key = (workers, id(phases))
    hit = _COLLECTIVES.get(key)
    if hit is not None and hit[0] is phases:
        return hit[1]
    if len(_COLLECTIVES) > 1024:
        _COLLECTIVES.clear()
    if len(_COLLECTIVES_BY_PHASES) > 1024:
        _COLLECTIVES_BY_PHASES.clear()
    by_value = (workers, tuple(phases))
    col = _COLLECTIVES_BY_PHASES.get(by_value)
    if col is None:
        col = _COLLECTIVES_BY_PHASES[by_value] = Collective(workers, phases)
    _COLLECTIVES[key] = (phases, col)
    return col


def place_unchecked(Ka: np.ndarray, Ra: np.ndarray, cap: float | np.ndarray, phases: Sequence[Phase], *,
                    workers: int, max_attempts: int | None = None, titan_step2: str = "fix-idle-count",
                    titan_tie_break: str = "least-traffic", titan_algorithm: str = "repaired") -> list[int] | None:
    """:func:`titan` without its argument checks, for callers whose arrays come from a checked
    instance (``run_titan``) or are built by the cluster replay each job (where the O(M^2) check
    of the pair matrix would cost more than the placement): ``Ka``, ``Ra`` int64 arrays, ``cap`` a
    float or a float matrix."""
    if titan_algorithm == "pseudo-code":
        if workers == 1:
            return _one_worker_pseudo_code(Ra, Ka)
        col = _collective(workers, phases)
        m = np.asarray(_alg3(col, Ra, Ka, cap), dtype=np.int64)
        ok = _meets_eq1(col, m, Ra.tolist(), cap, len(Ra))
        return [int(s) for s in m] if ok else None
    if workers == 1:
        return _one_worker(Ra, Ka, titan_step2, titan_tie_break)
    best = _two_steps(_collective(workers, phases), Ra, Ka, cap, max_attempts=max_attempts, step2=titan_step2,
                      tie_break=titan_tie_break, checked=titan_algorithm == "repaired")
    return None if best is None else [int(s) for s in best]


def _two_steps(col: Collective, Ra: np.ndarray, Ka: np.ndarray, cap: float | np.ndarray, *,
               max_attempts: int | None, step2: str, tie_break: str, checked: bool,
               compared: list[np.ndarray] | None = None) -> np.ndarray | None:
    """Alg. 3 under ``titan_algorithm="repaired"`` (``checked``) or ``"pair-grouping"`` (module
    docstring): step 1 over the idle machines, step 2 over S_f ∪ Phi_n, the lexicographically
    better of the two (step 2 on a tie). ``compared``: where given, receives every placement the
    result depends on (step 1's, and those step 2's winning attempt compared)."""
    R = Ra.tolist()
    M = len(R)
    order = np.lexsort((np.arange(M), -Ra))  # most idle GPUs first, ties by index
    ro, is_idle = Ra[order], (Ra == Ka)[order]
    idle = order[(ro > 0) & is_idle].tolist()
    frag = order[(ro > 0) & ~is_idle].tolist()
    # Alg. 3 step 1: Alg. 2 over the idle machines S_n (idle machines by most idle GPUs: Phi_n is
    # then the largest idle machines, which step 2's idle count relies on).
    m1 = _greedy(col, idle, R, cap, M, max_attempts, checked) if idle else None
    if m1 is not None and compared is not None:
        compared.append(m1)
    phi_n = sorted(set(m1.tolist()), key=lambda s: (-R[s], s)) if m1 is not None else idle
    # Alg. 3 step 2 over S_f ∪ Phi_n.
    if step2 == "pool-prefix":
        m2 = _greedy(col, frag + phi_n, R, cap, M, max_attempts, checked)
        if m2 is not None and compared is not None:
            compared.append(m2)
    else:
        m2 = _fewest_idle_then_fewest(col, phi_n, frag, R, cap, M, max_attempts, tie_break, checked, compared)
    cands = [m for m in (m2, m1) if m is not None]
    if not cands:
        return None

    def lex(m: np.ndarray) -> tuple[int, int]:
        used = set(m.tolist())
        return sum(1 for s in used if Ra[s] == Ka[s]), len(used)

    return min(cands, key=lex)  # min is stable: step 2 wins ties


def place_with_and_without_capacity(Ka: np.ndarray, Ra: np.ndarray, cap: float | np.ndarray,
                                    phases: Sequence[Phase], *, workers: int,
                                    **readings: Any) -> tuple[list[int] | None, list[int] | None]:
    """:func:`place_unchecked` under ``cap`` and under no bandwidth constraint (P = infinity), as
    the replay needs both (to count the jobs whose placement P changed), with one run of Titan
    instead of two where a proof allows it.

    Under ``titan_algorithm="repaired"``: if every placement the run without P depends on (step
    1's and those step 2's first attempt compared: ``_two_steps(compared=...)``) meets Eq. (5)
    under ``cap``, the run under ``cap`` gives the same placement. Proof: without P every attempt's
    first deployment succeeds, so each of those placements is the first attempt of its pass. Under
    ``cap``, :func:`_place` makes the same choices: at each choice the machine the unchecked
    deployment takes passes Alg. 1's check, because the bytes between two machines only grow as
    workers join and the final placement meets ``cap`` (and a worker's best machine among those
    that pass is then the same as among all). So step 1 gives the same placement and Phi_n, step
    2's first attempt the same placements, and the comparisons the same result.

    Under ``titan_algorithm="pseudo-code"``: if the placement found without P meets Eq. (1)
    under ``cap``, it *is* the placement found under ``cap``. Proof: run both in lock step. In
    Alg. 1 (:func:`feasible_worker_set`), a test for the machine the greedy then chooses adds up
    bytes between workers that end on s and s' in the final placement, so it never exceeds that
    placement's bytes on (t, s, s'), which meet P: the chosen machine gets the same set A(s)
    under P. Any other machine's set under P is no larger than without it (at most ``room`` and
    at most the available workers, which it reaches without P). So Alg. 2's argmax (largest key,
    lowest index among ties) picks the same machine in each iteration, both in step 1 and in
    step 2, line 18 deploys the same rest, and the final Eq. (1) check passes.

    Otherwise (or under ``pair-grouping``) Titan runs again under ``cap``. Both shortcuts are
    tested against two runs on seeded clusters (tests/test_nimp_titan.py)."""
    algorithm = readings.get("titan_algorithm", "repaired")
    M = len(Ra)
    if algorithm == "repaired" and workers > 1:
        col = _collective(workers, phases)
        compared: list[np.ndarray] = []
        m = _two_steps(col, Ra, Ka, math.inf, max_attempts=readings.get("max_attempts"),
                       step2=readings.get("titan_step2", "fix-idle-count"),
                       tie_break=readings.get("titan_tie_break", "least-traffic"), checked=True, compared=compared)
        free = None if m is None else [int(s) for s in m]
        if free is not None and all(_feasible_bandwidth(col, c, cap, M) for c in compared):
            return free, free
        return place_unchecked(Ka, Ra, cap, phases, workers=workers, **readings), free
    free = place_unchecked(Ka, Ra, math.inf, phases, workers=workers, **readings)
    if free is not None and algorithm == "pseudo-code":
        if _feasible_bandwidth(_collective(workers, phases), np.asarray(free, dtype=np.int64), cap, M):
            return free, free
    return place_unchecked(Ka, Ra, cap, phases, workers=workers, **readings), free


def run_titan(instance: NimpInstance, *, objective: str = "lex", time_limit: float | None = None,
              seed: int | None = None, max_attempts: int | None = None,
              titan_step2: str = "fix-idle-count", titan_tie_break: str = "least-traffic",
              titan_algorithm: str = "repaired") -> Result:
    """Algorithm-table entry ``titan`` (deterministic); takes the readings ``titan_algorithm``,
    ``titan_step2`` and ``titan_tie_break`` (:func:`titan`). No placement found: ``no_solution``
    (not a proof)."""
    t0 = time.perf_counter()
    if sum(m.idle_gpus for m in instance.machines) < instance.N:
        return Result(Status.INFEASIBLE, message="fewer idle GPUs than workers (resource constraint)")
    check_readings(titan_algorithm, titan_step2, titan_tie_break)
    m = place_unchecked(np.array([mc.gpus for mc in instance.machines], dtype=np.int64),
                        np.array([mc.idle_gpus for mc in instance.machines], dtype=np.int64),
                        capacity_argument(instance), instance.phases(), workers=instance.N, max_attempts=max_attempts,
                        titan_step2=titan_step2, titan_tie_break=titan_tie_break, titan_algorithm=titan_algorithm)
    info: dict[str, Any] = {"algorithm_s": time.perf_counter() - t0}
    if m is None:
        return Result(Status.NO_SOLUTION, message="titan found no feasible placement (no placement it builds "
                      "meets Eq. 1; not a proof that none exists)", info={**info, "found": False})
    info["found"] = True
    return Result(Status.FEASIBLE, solution=solution_dict(m), info=info)


def capacity_argument(instance: NimpInstance) -> float | np.ndarray:
    """P as Titan's placement functions take it: the one number when every pair has the same
    capacity, else the M x M array."""
    scalar = instance.scalar_capacity
    return instance.capacity if scalar is None else scalar
