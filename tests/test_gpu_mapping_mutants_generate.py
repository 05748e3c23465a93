"""The generator's name and provenance (formulations/gpu_mapping/generate.py, ``generate``): the
name ``model_config_allreduce_pattern_sSEED`` for each way of giving the servers, the meta's
provenance fields, and each bad argument named."""

from __future__ import annotations

import pytest

from optkit.errors import InputError
from optkit.formulations.gpu_mapping.generate import generate


def test_names_and_meta_follow_the_way_the_servers_are_given() -> None:
    d = generate(model="vgg19", config="dp4", servers=[2, 2], seed=3)
    assert d["name"] == "vgg19_dp4_ring_explicit_s3" and d["servers"] == [2, 2]
    m = d["meta"]
    assert (m["model"], m["config"], m["pattern"], m["seed"], m["replicas"]) == ("vgg19", "dp4", "explicit", 3, [4])
    assert m["stage_units"] == ["conv1_1..fc8"] and m["batch_size"] == 32 and "readings" not in m
    assert m["profile"] == ("synthetic, derived from architecture facts and an assumed V100 throughput: "
                            "formulations/gpu_mapping/profiles.py")
    d = generate(model="vgg19", config="dp4", servers=2, seed=0, allreduce="tree")
    assert d["name"] == "vgg19_dp4_tree_m2_s0" and d["meta"]["pattern"] == "servers=2" and len(d["servers"]) == 2
    d = generate(model="vgg19", config="dp4", seed=0, gpu_throughput="peak")
    assert d["name"].endswith("_s0_peak") and d["meta"]["readings"] == {"gpu_throughput": "peak"}
    assert d["job"]["stages"][0]["fwd_time"] * 125e12 == pytest.approx(
        generate(model="vgg19", config="dp4", seed=0)["job"]["stages"][0]["fwd_time"] * 25e12)


@pytest.mark.parametrize("kw, field", [({"config": "pipe99"}, "config"), ({"servers": "two"}, "servers"),
                                       ({"gpu_throughput": "SUSTAINED"}, "gpu_throughput"),
                                       ({"allreduce": "star"}, "allreduce"), ({"gpus_per_server": 0}, "gpus_per_server")])
def test_bad_arguments_are_named(kw: dict, field: str) -> None:
    with pytest.raises(InputError) as err:
        generate(**{"model": "vgg19", **kw})
    assert err.value.field == field
