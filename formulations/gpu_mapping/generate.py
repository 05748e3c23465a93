"""Instance generator and named suites of gpu-mapping.

An instance is one pipeline job of a Table I model (Luo et al., Sec. V) in one of its pipeline
configurations (:mod:`.profiles`: synthetic per-stage profiles, every number derived there),
plus a vector of per-server free GPUs that adds up to the job's replica count, on the cluster
of Sec. V-B: ``g = 8`` GPUs per server, NIC ``B_inter = 10 Gbps = 1.25e9`` B/s, intra-server
``B_intra = 300 GB/s = 3e11`` B/s (NVLink of V100 servers).

Free-GPU patterns (``pattern``), for n replicas and g GPUs per server, all drawn from
``numpy.random.default_rng(seed)``:

* ``packed``: the fewest servers, all full but the last (``[g, ..., g, n mod g]``); no randomness.
* ``random``: i.i.d. uniform counts in ``1..g`` until they reach n (the last one cut to fit).
* ``fragmented``: i.i.d. uniform counts in ``1..max(1, g // 4)``: many nearly full servers.
* ``mixed``: about half of the replicas on servers with ``g//2 + 1 .. g`` free GPUs, the rest
  fragmented, the order shuffled.
* ``servers=M`` (an integer) instead of a pattern: a random composition of n into exactly M
  parts in ``1..g`` (each part starts at 1; the other n - M GPUs go one at a time to a uniformly
  drawn part that is not full). ``servers=[...]`` gives the vector explicitly.

Same arguments, same dict (byte-identical JSON); the seed matters only for the random parts.

Suites (all deterministic; sizes are replica counts):

* ``small``: 36 instances, 2-12 replicas on 2-4 servers, ring and tree, all nine models; small
  enough for brute force (the exact solvers are checked against it on every instance).
* ``table2``: Table II's experiment: VGG19 (config ``table2``: 6 stages, replicas 4/4/4/2/1/1 =
  16) and GPT-175B (16 stages x 2 replicas = 32), 20 free-GPU cases each, ring AllReduce
  (the paper does not say which; RAR is its first-named). The cases cycle through the patterns
  random/mixed/random/fragmented with seeds 0..19; a seed whose server vector (as a multiset)
  repeats an earlier case is bumped by 1000 until it is new, so the 20 cases are distinct.
  The 6-stage VGG19 split keeps the paper's "heterogeneity in computation time and data
  communication" (Sec. V-B 2-e): heavy activations early, heavy parameters (fc6: 411 MB) late.
* ``medium``: 17 instances of 16-48 replicas; ``large``: 13 instances of 64-256 replicas.
* ``llm-small``: 12 jobs with tensor-parallel and MoE stages (Sec. VI), :mod:`.llm_generate`.

``small`` and ``table2`` are shipped as JSON under ``instances/gpu-mapping/<suite>/`` by
:func:`write_suite` (a test regenerates them and compares bytes).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from optkit.errors import InputError
from optkit.formulation import Suite

from .heavy_edge import fewest_servers
from .llm_generate import SUITES as LLM_SUITES, size_class_cases as llm_size_class_cases
from .model import ALLREDUCE_KINDS, PROBLEM, TWO_REPLICA_RINGS, GpuMappingInstance
from .profiles import GPU_THROUGHPUTS, ITERATION_BATCHES, MODELS, ModelProfile, stage_bounds, stage_dicts

__all__ = ["PATTERNS", "SUITES", "generate", "table2_cases", "TABLE2_FREE_GPUS", "random_small", "free_gpus", "write_suite", "suite_folder", "SIZE_CLASSES"]

PATTERNS = ("packed", "random", "fragmented", "mixed")
B_INTER = 1.25e9   # 10 Gbps NIC (Sec. V-B)
B_INTRA = 3e11     # 300 GB/s NVLink (Sec. V-B)


# ----------------------------------------------------------------------------- free-GPU vectors
def _draw_until(rng: np.random.Generator, total: int, low: int, high: int) -> list[int]:
    out: list[int] = []
    left = total
    while left > 0:
        c = int(rng.integers(low, high + 1))
        c = min(c, left)
        out.append(c)
        left -= c
    return out


def composition(n: int, parts: int, g: int, rng: np.random.Generator) -> list[int]:
    """A random composition of ``n`` into exactly ``parts`` counts in ``1..g``."""
    if not math.ceil(n / g) <= parts <= n:
        raise InputError("servers", f"{parts} servers cannot hold exactly {n} replicas with 1..{g} free GPUs each")
    counts = [1] * parts
    for _ in range(n - parts):
        open_ = [m for m in range(parts) if counts[m] < g]
        counts[open_[int(rng.integers(len(open_)))]] += 1
    return counts


def free_gpus(n: int, g: int, pattern: str, rng: np.random.Generator) -> list[int]:
    """Per-server free GPUs for ``n`` replicas, ``g`` GPUs per server (see the module docstring)."""
    if n < 1:
        raise InputError("replicas", f"must be >= 1, got {n}")
    if pattern == "packed":
        return fewest_servers(n, g)
    if pattern == "random":
        return _draw_until(rng, n, 1, g)
    frag_high = max(1, g // 4)
    if pattern == "fragmented":
        return _draw_until(rng, n, 1, frag_high)
    if pattern == "mixed":
        big_total = n // 2
        big = _draw_until(rng, big_total, g // 2 + 1, g) if big_total else []
        small = _draw_until(rng, n - sum(big), 1, frag_high)
        out = big + small
        order = rng.permutation(len(out))
        return [out[int(i)] for i in order]
    raise InputError("pattern", f"must be one of {', '.join(PATTERNS)}, got {pattern!r}")


# ----------------------------------------------------------------------------- one instance
def _instance(name: str, stages: list[dict[str, Any]], servers: list[int], *, allreduce: str,
              gpus_per_server: int, inter_bandwidth: float, intra_bandwidth: float,
              meta: dict[str, Any], two_replica_ring: str = "two-edges") -> dict[str, Any]:
    # key order = GpuMappingInstance.to_dict's, so files and to_dict agree
    job: dict[str, Any] = {"allreduce": allreduce}
    if two_replica_ring != "two-edges":
        job["two_replica_ring"] = two_replica_ring
    job["stages"] = stages
    return {
        "problem": PROBLEM,
        "cluster": {"gpus_per_server": int(gpus_per_server), "inter_bandwidth": float(inter_bandwidth),
                    "intra_bandwidth": float(intra_bandwidth)},
        "job": job,
        "servers": [int(c) for c in servers],
        "name": name,
        "meta": meta,
    }


def generate(*, model: str, config: str | None = None, servers: int | Sequence[int] | None = None,
             pattern: str = "random", seed: int = 0, gpus_per_server: int = 8,
             inter_bandwidth: float = B_INTER, intra_bandwidth: float = B_INTRA,
             allreduce: str = "ring", two_replica_ring: str = "two-edges",
             gpu_throughput: str = "sustained", iteration_batch: str = "mini-batch") -> dict[str, Any]:
    """One gpu-mapping instance dict: ``model``'s job in ``config`` (default: the model's default
    configuration) on free GPUs drawn by ``pattern`` (or ``servers``: an exact server count, or
    the explicit vector). Defaults are the paper's simulation cluster (Sec. V-B).

    Readings (``readings.py``): ``two_replica_ring`` (written to the job), ``gpu_throughput``
    and ``iteration_batch`` (how the profile becomes stage times, :func:`.profiles.stage_dicts`).
    At their defaults the dict is the one earlier versions wrote; otherwise ``meta.readings``
    lists the non-default ones and the name ends in their values.

    The dict has ``name`` (``model_config_allreduce_pattern_sSEED``) and ``meta`` (model,
    config, pattern, seed, the units each stage holds, mini-batch size, profile provenance).
    """
    for key, value, options in (("two_replica_ring", two_replica_ring, TWO_REPLICA_RINGS),
                                ("gpu_throughput", gpu_throughput, GPU_THROUGHPUTS),
                                ("iteration_batch", iteration_batch, ITERATION_BATCHES)):
        if value not in options:
            raise InputError(key, f"must be one of {', '.join(options)}, got {value!r}")
    if model not in MODELS:
        raise InputError("model", f"must be one of {', '.join(MODELS)}, got {model!r}")
    prof: ModelProfile = MODELS[model]
    if config is not None and config not in prof.config_index:
        raise InputError("config", f"must be one of {', '.join(prof.config_index)} for {model}, got {config!r}")
    if allreduce not in ALLREDUCE_KINDS:
        raise InputError("allreduce", f"must be 'ring' or 'tree', got {allreduce!r}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise InputError("seed", f"must be an integer, got {seed!r}")
    if isinstance(gpus_per_server, bool) or not isinstance(gpus_per_server, int) or gpus_per_server < 1:
        raise InputError("gpus_per_server", f"must be an integer >= 1, got {gpus_per_server!r}")
    cfg = prof.config(config)
    n = cfg.n_replicas
    rng = np.random.default_rng(seed)
    if servers is None:
        vec = free_gpus(n, gpus_per_server, pattern, rng)
        tag = pattern
    elif isinstance(servers, int) and not isinstance(servers, bool):
        vec = composition(n, servers, gpus_per_server, rng)
        tag, pattern = f"m{servers}", f"servers={servers}"
    elif isinstance(servers, (list, tuple)):
        vec = [int(c) for c in servers]
        tag, pattern = "explicit", "explicit"
    else:
        raise InputError("servers", f"must be a server count or a list of free GPUs, got {servers!r}")
    bounds = stage_bounds(prof, cfg)
    meta = {
        "model": prof.key,
        "config": cfg.name,
        "pattern": pattern,
        "seed": seed,
        "replicas": list(cfg.replicas),
        "stage_units": [f"{prof.units[a].name}..{prof.units[b - 1].name}" if b - a > 1 else prof.units[a].name
                        for a, b in bounds],
        "batch_size": prof.batch_size,
        "profile": "synthetic, derived from architecture facts and an assumed V100 throughput: "
                   "formulations/gpu_mapping/profiles.py",
    }
    name = f"{prof.key}_{cfg.name}_{allreduce}_{tag}_s{seed}"
    readings = {k: v for k, v, default in (("two_replica_ring", two_replica_ring, "two-edges"),
                                           ("gpu_throughput", gpu_throughput, "sustained"),
                                           ("iteration_batch", iteration_batch, "mini-batch")) if v != default}
    if readings:
        meta["readings"] = readings
        name += "_" + "_".join(readings.values())
    stages = stage_dicts(prof, cfg, gpu_throughput=gpu_throughput, iteration_batch=iteration_batch)
    d = _instance(name, stages, vec, allreduce=allreduce, gpus_per_server=gpus_per_server,
                  inter_bandwidth=inter_bandwidth, intra_bandwidth=intra_bandwidth, meta=meta,
                  two_replica_ring=two_replica_ring)
    GpuMappingInstance.from_dict(d)  # explicit servers or bandwidths may be invalid: InputError
    return d


def random_small(seed: int, *, max_replicas: int = 8, max_stages: int = 4, max_servers: int = 4) -> dict[str, Any]:
    """A random synthetic instance for tests (not from a profile): 1..``max_stages`` stages of
    1..3 replicas (at most ``max_replicas`` in all), g in {2, 4, 8}, 1..``max_servers`` servers,
    times log-uniform in [1 ms, 100 ms] (bwd = 2 fwd), whole-batch boundary tensors log-uniform
    in [1e5, 1e8] B, parameters log-uniform in [1e5, 1e9] B, NIC log-uniform in [1e8, 1e10] B/s,
    and B_intra either 3e11 or (one case in four) below g*B_inter, so eq. (5)'s intra-server term
    can be the *slower* one. ``meta.model`` is ``"synthetic"``."""
    rng = np.random.default_rng(seed)
    g = int(rng.choice([2, 4, 8]))
    reps: list[int] = []
    for _ in range(int(rng.integers(1, max_stages + 1))):
        k = int(rng.integers(1, 4))
        if sum(reps) + k > max_replicas:
            break
        reps.append(k)
    if not reps:
        reps = [1]
    n = sum(reps)
    lo = math.ceil(n / g)
    m_count = int(rng.integers(lo, max(lo, min(n, max_servers)) + 1))
    servers = composition(n, m_count, g, rng)

    def logu(a: float, b: float) -> float:
        return float(math.exp(rng.uniform(math.log(a), math.log(b))))

    boundary = [logu(1e5, 1e8) for _ in range(len(reps) - 1)]
    stages = []
    for s, k in enumerate(reps):
        fwd = logu(1e-3, 1e-1)
        stages.append({
            "replicas": k, "fwd_time": fwd, "bwd_time": 2.0 * fwd,
            "in_bytes": 0.0 if s == 0 else boundary[s - 1] / k,
            "out_bytes": 0.0 if s == len(reps) - 1 else boundary[s] / k,
            "param_bytes": logu(1e5, 1e9),
        })
    b_inter = logu(1e8, 1e10)
    b_intra = 3e11 if rng.random() >= 0.25 else b_inter * g * float(rng.uniform(0.1, 0.9))
    allreduce = ALLREDUCE_KINDS[int(rng.integers(2))]
    meta = {"model": "synthetic", "config": "random", "pattern": f"servers={m_count}", "seed": seed,
            "replicas": reps}
    return _instance(f"synthetic_{allreduce}_s{seed}", stages, servers, allreduce=allreduce, gpus_per_server=g,
                     inter_bandwidth=b_inter, intra_bandwidth=b_intra, meta=meta)


# ----------------------------------------------------------------------------- suites
# (model, config, allreduce, servers or pattern, seed)
_SMALL = [
    ("vgg19", "dp4", "ring", 2, 0), ("vgg19", "pipe4", "tree", 3, 1), ("vgg19", "conv3-fc1", "ring", 2, 2),
    ("vgg19", "conv3-fc1", "tree", 3, 3), ("vgg19", "conv2-fc1x2", "ring", 4, 4),
    ("vgg19", "blocks-2-2-1-1", "tree", 3, 5), ("vgg19", "conv7-fc1", "ring", 3, 6),
    ("vgg19", "conv7-fc1", "tree", 4, 7),
    ("resnet152", "dp2", "ring", 2, 8), ("resnet152", "pipe2x2", "tree", 2, 9),
    ("resnet152", "pipe3-2-1", "ring", 3, 10), ("resnet152", "pipe3-2-1", "tree", 4, 11),
    ("resnet152", "dp8", "tree", 3, 12), ("resnet152", "pipe4x3", "ring", 2, 13),
    ("inception-v3", "dp4", "tree", 2, 14), ("inception-v3", "pipe2-1-1", "ring", 3, 15),
    ("inception-v3", "pipe2x3", "tree", 2, 16), ("inception-v3", "pipe2x3", "ring", 4, 17),
    ("bert-large", "pipe2x1", "tree", 2, 18), ("bert-large", "pipe3x1", "ring", 2, 19),
    ("bert-large", "pipe4x2", "ring", 3, 20), ("bert-large", "pipe4x2", "tree", 4, 21),
    ("bert-large", "pipe3x3", "tree", 3, 22),
    ("xlnet-large", "pipe2x2", "ring", 3, 23), ("xlnet-large", "pipe3x1", "tree", 3, 24),
    ("xlnet-large", "pipe5x2", "tree", 2, 25),
    ("t5-11b", "pipe4x1", "ring", 2, 26), ("t5-11b", "pipe6x1", "tree", 4, 27), ("t5-11b", "pipe8x1", "ring", 3, 28),
    ("t5-11b", "pipe5x2", "ring", 3, 29),
    ("gpt-6.7b", "pipe4x2", "tree", 3, 30), ("gpt-6.7b", "pipe2x5", "ring", 2, 31),
    ("gpt-13b", "pipe4x1", "tree", 4, 32), ("gpt-13b", "pipe6x2", "ring", 2, 33),
    ("gpt-175b", "pipe4x2", "ring", 4, 34), ("gpt-175b", "pipe8x1", "tree", 2, 35),
]

_MEDIUM = [
    ("vgg19", "table2", "ring", "mixed", 100), ("vgg19", "conv15-fc1", "tree", "random", 101),
    ("vgg19", "conv31-fc1", "ring", "fragmented", 102), ("vgg19", "blocks-8-8-8-4-2-2", "tree", "mixed", 103),
    ("resnet152", "dp32", "tree", "random", 104), ("resnet152", "pipe4x8", "ring", "mixed", 105),
    ("inception-v3", "dp16", "tree", "fragmented", 106), ("inception-v3", "pipe4x6", "ring", "random", 107),
    ("bert-large", "pipe4x4", "tree", "random", 108), ("bert-large", "pipe8x4", "ring", "mixed", 109),
    ("xlnet-large", "pipe4x8", "tree", "fragmented", 110), ("t5-11b", "pipe8x2", "ring", "random", 111),
    ("gpt-6.7b", "pipe8x4", "tree", "mixed", 112), ("gpt-13b", "pipe8x2", "ring", "random", 113),
    ("gpt-13b", "pipe12x4", "ring", "fragmented", 114), ("gpt-175b", "pipe16x2", "ring", "packed", 115),
    ("gpt-175b", "pipe16x1", "tree", "random", 116),
]

_LARGE = [
    ("vgg19", "conv63-fc1", "ring", "random", 200), ("vgg19", "blocks-32-32-32-16-8-8", "tree", "mixed", 201),
    ("resnet152", "pipe4x16", "ring", "random", 202), ("resnet152", "dp128", "tree", "fragmented", 203),
    ("inception-v3", "pipe8x8", "ring", "mixed", 204), ("bert-large", "pipe8x8", "tree", "random", 205),
    ("xlnet-large", "pipe8x16", "ring", "mixed", 206), ("t5-11b", "pipe16x4", "ring", "fragmented", 207),
    ("gpt-6.7b", "pipe8x16", "tree", "random", 208), ("gpt-13b", "pipe16x4", "ring", "mixed", 209),
    ("gpt-175b", "pipe16x4", "ring", "random", 210), ("gpt-175b", "pipe16x8", "tree", "mixed", 211),
    ("gpt-175b", "pipe32x8", "ring", "random", 212),
]

TABLE2_JOBS = (("vgg19", "table2"), ("gpt-175b", "pipe16x2"))
TABLE2_CASES = 20
_TABLE2_PATTERNS = ("random", "mixed", "random", "fragmented")


def _from_rows(rows: list[tuple[str, str, str, Any, int]]) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for model, config, allreduce, where, seed in rows:
        kw: dict[str, Any] = {"servers": where} if isinstance(where, int) else {"pattern": where}
        d = generate(model=model, config=config, allreduce=allreduce, seed=seed, **kw)
        out.append((d["name"], d))
    return out


def _build_small() -> list[tuple[str, dict[str, Any]]]:
    return _from_rows(_SMALL)


def _build_medium() -> list[tuple[str, dict[str, Any]]]:
    return _from_rows(_MEDIUM)


def _build_large() -> list[tuple[str, dict[str, Any]]]:
    return _from_rows(_LARGE)


TABLE2_FREE_GPUS = ("cycle", "random", "mixed")
"""Reading ``table2_free_gpus``: the patterns in turn (``cycle``), or one pattern for all cases
(not ``fragmented``: with 1..g/4 free GPUs per server there are fewer than 20 distinct cases)."""


def table2_cases(model: str, config: str, *, seed: int = 0, cases: int = TABLE2_CASES,
                 free_gpu_cases: str = "cycle", **readings: str) -> list[dict[str, Any]]:
    """Table II's free-GPU cases of one job: ``cases`` instances of ``model``/``config`` whose
    free-GPU patterns cycle through random/mixed/random/fragmented (``free_gpu_cases = "cycle"``,
    reading ``table2_free_gpus``; or all cases of the one pattern named), case c drawn with seed
    ``seed * 100_000 + c`` (bumped by 1000 while its server vector, as a multiset, repeats an
    earlier case or is a single server), so the cases are distinct and split the job. Seed 0
    gives the ``table2`` suite. ``readings`` go to :func:`generate` (``two_replica_ring``,
    ``gpu_throughput``, ``iteration_batch``)."""
    if free_gpu_cases not in TABLE2_FREE_GPUS:
        raise InputError("table2_free_gpus", f"must be one of {', '.join(TABLE2_FREE_GPUS)}, got {free_gpu_cases!r}")
    patterns = _TABLE2_PATTERNS if free_gpu_cases == "cycle" else (free_gpu_cases,)
    out = []
    seen: set[tuple[int, ...]] = set()
    for case in range(cases):
        pattern = patterns[case % len(patterns)]
        case_seed = seed * 100_000 + case
        while True:
            d = generate(model=model, config=config, pattern=pattern, seed=case_seed, allreduce="ring", **readings)
            key = tuple(sorted(d["servers"]))
            if key not in seen and len(d["servers"]) > 1:
                break
            case_seed += 1000
        seen.add(key)
        d["meta"]["table2_case"] = case
        out.append(d)
    return out


def _build_table2() -> list[tuple[str, dict[str, Any]]]:
    return [(d["name"], d) for model, config in TABLE2_JOBS for d in table2_cases(model, config)]


SIZE_CLASSES: dict[str, Suite] = {
    "4-6 replicas": Suite("4-6 replicas", "the first 6 of the small suite (VGG19, 4-6 replicas in 1-4 stages on 2-4 "
                          "servers, ring and tree)", lambda: _from_rows(_SMALL[:6])),
    "8-12 replicas": Suite("8-12 replicas", "3 of the small suite: ResNet-152 pipe4x3 (12), BERT-large pipe3x3 (9), "
                           "GPT-13B pipe6x2 (12)", lambda: _from_rows([_SMALL[13], _SMALL[22], _SMALL[33]])),
    "16-24 replicas": Suite("16-24 replicas", "BERT-large pipe4x4 (16) and Inception-v3 pipe4x6 (24) of the medium "
                            "suite, VGG19's Table II job (16 replicas, 6 stages) on the mixed free GPUs of Table II's "
                            "case 1; CP-SAT and HiGHS prove each in about a second and brute force proves or refuses "
                            "it at once (measured: HiGHS needs over 5 s for the cut of several 32-replica jobs of the "
                            "medium suite, brute force over 5 s on some 16-replica Table II cases)",
                            lambda: _from_rows([_MEDIUM[8], _MEDIUM[7], ("vgg19", "table2", "ring", "mixed", 1)])),
    "llm-small": Suite("llm-small", "5 jobs of 5-8 GPUs of the llm-small suite, two with tensor-parallel stages (t = 2) "
                       "and three with MoE stages (e = 2-3 expert groups, uniform and zipf routing) on servers of 4 GPUs (A-SRPT paper "
                       "Sec. VI, issue 37): llm_generate.SIZE_CLASS; CP-SAT and brute force prove each, the MILP "
                       "proves the tensor-parallel ones and refuses the MoE ones", llm_size_class_cases),
}
"""The size classes :func:`optkit.testing.check_algorithm` covers by default (``size_classes``
of the formulation), each no larger than every exact solver of gpu-mapping proves (or, for brute
force, refuses) in seconds. ``llm-small`` puts jobs with tensor-parallel and MoE stages among
the defaults, so a plug-in that ignores a stage's ``tensor_parallel`` or ``experts`` fails
``solution_passes_evaluate`` on them."""


SUITES: dict[str, Suite] = {
    "small": Suite("small", "36 jobs of 2-12 replicas on 2-4 servers, all nine Table I models, ring and tree "
                            "(brute-force checkable)", _build_small),
    "table2": Suite("table2", "Table II: VGG19 (16 replicas, 6 stages) and GPT-175B (16x2) over 20 free-GPU cases "
                              "each, ring AllReduce", _build_table2),
    "medium": Suite("medium", "17 jobs of 16-48 replicas, mixed patterns", _build_medium),
    "large": Suite("large", "13 jobs of 64-256 replicas, mixed patterns", _build_large),
    **LLM_SUITES,
}


def suite_folder(name: str) -> Path:
    """``instances/gpu-mapping/<name>`` in the repository this package sits in: the folder that
    holds the imported ``optkit`` package. Anchored on ``optkit``, not on this file, whose depth
    depends on the layout: ``formulations/gpu_mapping/`` in the repository, but
    ``optkit/formulations/gpu_mapping/`` when installed and in ``tools/mutate.py``'s scratch copy."""
    import optkit

    return Path(optkit.__file__).resolve().parents[1] / "instances" / PROBLEM / name


def dumps(data: dict[str, Any]) -> str:
    """The shipped file format: ``json.dumps(indent=1)`` plus a newline (as ``optkit generate``)."""
    return json.dumps(data, indent=1, sort_keys=False, allow_nan=False) + "\n"


def write_suite(name: str, folder: str | Path | None = None) -> list[Path]:
    """Write suite ``name`` to ``folder`` (default :func:`suite_folder`), one ``<instance
    name>.json`` per instance; returns the paths written."""
    if name not in SUITES:
        raise InputError("suite", f"must be one of {', '.join(SUITES)}, got {name!r}")
    out = Path(folder) if folder is not None else suite_folder(name)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for inst_name, data in SUITES[name].build():
        p = out / f"{inst_name}.json"
        p.write_text(dumps(data))
        paths.append(p)
    return paths


if __name__ == "__main__":  # python -m optkit.formulations.gpu_mapping.generate [suite ...]
    import sys

    for suite in sys.argv[1:] or ["small", "table2"]:
        print(f"{suite}: wrote {len(write_suite(suite))} files to {suite_folder(suite)}")
