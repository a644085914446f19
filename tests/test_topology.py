"""Topologies from Python and the CLI: spec strings, TOML/YAML files, hand-computed runs, errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import coflowkit
from coflowkit import _core
from conftest import ROOT, Cli, assert_one_line_error

EXAMPLES = ROOT / "examples" / "topologies"
#: One unit of data: what 1 Gbit/s sends in one second.
UNIT = 125_000_000


def flows(pairs: list[tuple[int, int]], n_hosts: int, size: int = UNIT) -> coflowkit.Workload:
    """One coflow (id 1, arriving at 0) of one flow per (src, dst) pair."""
    n = len(pairs)
    return _core.workload_from_columns(
        coflow_id=np.ones(n, dtype=np.uint64),
        arrival_ns=np.zeros(n, dtype=np.uint64),
        src=np.array([s for s, _ in pairs], dtype=np.uint32),
        dst=np.array([d for _, d in pairs], dtype=np.uint32),
        bytes=np.full(n, size, dtype=np.uint64),
        n_hosts=n_hosts,
    )


def cct(res: coflowkit.Results) -> list[float]:
    return [float(x) for x in res.to_pandas()["cct_s"]]


def test_an_oversubscribed_tor_uplink_is_shared() -> None:
    # Two racks of 4 hosts at 1 Gbit/s, ToR uplinks of 4 x 1 / 2 = 2 Gbit/s:
    # four flows from rack 0 to rack 1 get 0.5 Gbit/s each, so 1 unit takes 2 s.
    w = flows([(i, 4 + i) for i in range(4)], n_hosts=8)
    tree = "tree:pods=1,racks=2,hosts=4,tor_oversub=2,rate=1Gbps"
    res = coflowkit.simulate(w, "fair", topology=tree, progress=False)
    assert cct(res) == pytest.approx([2.0], abs=1e-6)
    assert res.topology == "tree, 1 pods x 2 racks x 4 hosts at 1 Gbit/s, ToR 2:1, agg 1:1"
    assert res.capacity_bps == 1e9
    # The same flows on the default big switch: no ToR, 1 Gbit/s each.
    res = coflowkit.simulate(w, "fair", progress=False)
    assert cct(res) == pytest.approx([1.0], abs=1e-6)
    assert res.topology == "big switch, 8 ports of 1 Gbit/s"


def test_ecmp_runs_are_reproducible() -> None:
    w = coflowkit.synthetic(n_hosts=16, n_coflows=30, seed=3)
    a = coflowkit.simulate(w, ["fair", "varys"], topology="fat-tree:k=4,ecmp_seed=11", progress=False)
    b = coflowkit.simulate(w, ["fair", "varys"], topology="fat-tree:k=4,ecmp_seed=11", progress=False)
    assert cct(a) == cct(b)
    for s in ("fair", "varys"):
        assert list(a.coflows(s)["cct_s"]) == list(b.coflows(s)["cct_s"])


def test_example_files_load() -> None:
    infos = {p.name: coflowkit.topology_info(p) for p in sorted(EXAMPLES.iterdir())}
    assert set(infos) == {"baraat-tree.toml", "custom.toml", "fat-tree-k4.toml", "leaf-spine.yaml"}
    baraat = infos["baraat-tree.toml"]
    assert (baraat["n_hosts"], baraat["n_switches"], baraat["max_paths"]) == (36_000, 931, 1)
    assert baraat["spec"] == (
        "tree:pods=30,racks_per_pod=30,hosts_per_rack=40,host_rate=1000000000.0,"
        "tor_oversub=2.0,agg_oversub=1.0,ecmp_seed=0"
    )
    assert baraat["bisection"]["oversubscription"] == 2.0
    links = {g["kind"]: (g["count"], g["min_capacity_bps"]) for g in baraat["links"]}
    assert links["tor -> agg"] == (900, 20e9) and links["agg -> core"] == (30, 600e9)
    fat = infos["fat-tree-k4.toml"]
    assert (fat["n_hosts"], fat["max_paths"], fat["bisection"]["oversubscription"]) == (16, 4, 1.0)
    custom = infos["custom.toml"]
    assert (custom["kind"], custom["n_hosts"], custom["max_paths"], custom["ecmp_seed"]) == ("custom", 4, 2, 7)
    assert custom["spec"] is None and custom["bisection"] is None
    leaf = infos["leaf-spine.yaml"]
    assert leaf["host_rate_bps"] == 10e9
    assert {g["kind"] for g in leaf["links"]} >= {"leaf -> spine", "host CPU"}


def test_a_custom_file_simulates(tmp_path: Path) -> None:
    # custom.toml: h0, h1 under tor0; h2, h3 under tor1; two 1 Gbit/s paths
    # between the ToRs. One flow h0 -> h2 alone runs at 1 Gbit/s.
    w = flows([(0, 2)], n_hosts=4)
    res = coflowkit.simulate(w, "fair", topology=EXAMPLES / "custom.toml", progress=False)
    assert cct(res) == pytest.approx([1.0], abs=1e-6)


def test_bigswitch_spec_is_sized_to_the_workload() -> None:
    w = flows([(0, 5)], n_hosts=6)
    res = coflowkit.simulate(w, "fair", topology="bigswitch:rate=2Gbps", progress=False)
    assert res.topology == "big switch, 6 ports of 2 Gbit/s"
    assert cct(res) == pytest.approx([0.5], abs=1e-6)


def test_topology_errors_name_the_key(tmp_path: Path) -> None:
    w = flows([(0, 1)], n_hosts=2)
    with pytest.raises(ValueError, match=r"^topology 'fat-tree:k=3': fat-tree: k must be even and at least 2, got 3$"):
        coflowkit.simulate(w, "fair", topology="fat-tree:k=3")
    with pytest.raises(ValueError, match=r"^topology 'tree:podz=2': podz: unknown key for a tree"):
        coflowkit.simulate(w, "fair", topology="tree:podz=2")
    with pytest.raises(ValueError, match="capacity_gbps and n_hosts size the default big switch"):
        coflowkit.simulate(w, "fair", topology="fat-tree", capacity_gbps=10)
    with pytest.raises(FileNotFoundError, match="nowhere.toml"):
        coflowkit.topology_info(tmp_path / "nowhere.toml")
    bad = tmp_path / "topo.toml"
    text = (EXAMPLES / "custom.toml").read_text()
    bad.write_text(text.replace('to = "agg1"\ncapacity = 1e9', 'to = "agg9"\ncapacity = 1e9'))
    with pytest.raises(ValueError, match=rf"^{bad}: link 7 \(tor1 -> agg9\): unknown node agg9$"):
        coflowkit.topology_info(bad)
    yaml = tmp_path / "topo.yaml"
    yaml.write_text("kind: tree\npods: -1\n")
    with pytest.raises(ValueError, match=rf"^{yaml}: pods: expected a whole number from 0 to 4294967295, got -1$"):
        coflowkit.topology_info(yaml)
    # The workload must fit the fabric.
    with pytest.raises(ValueError, match="the workload is for 2 hosts but the fabric has"):
        coflowkit.simulate(flows([(0, 1)], n_hosts=2), "fair", topology="leaf-spine:leaves=1,hosts=1")


def test_cli_topology_info(cli: Cli) -> None:
    proc = cli("topology", "info", "fat-tree:k=8")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "topology       fat-tree:k=8"
    assert "hosts          128" in lines
    assert "switches       80 (32 edge, 32 agg, 16 core)" in lines
    assert lines[-1] == "paths          up to 16 equal-cost paths between two hosts (ECMP, seed 0)"
    proc = cli("topology", "info", EXAMPLES / "baraat-tree.toml")
    assert proc.returncode == 0, proc.stderr
    assert "oversubscription 2:1" in proc.stdout
    assert_one_line_error(cli("topology", "info", "mesh"), 2, "'SPEC'", "unknown kind 'mesh'")
    assert_one_line_error(cli("topology", "info", "bigswitch"), 2, "hosts: not given")
    assert cli("topology", "info", "bigswitch", "--n-hosts", "12").returncode == 0


def test_cli_simulate_on_a_topology(cli: Cli, tmp_path: Path) -> None:
    proc = cli("simulate", "-s", "fair", "--topology", "tree:pods=2,racks=5,hosts=5", "--no-progress")
    assert proc.returncode == 0, proc.stderr
    assert "fabric     tree, 2 pods x 5 racks x 5 hosts at 1 Gbit/s, ToR 2:1, agg 1:1" in proc.stdout
    # Without --topology the fabric line is the big switch, as before.
    proc = cli("simulate", "-s", "fair", "--no-progress")
    assert "fabric     big switch, 50 ports of 1 Gbit/s" in proc.stdout
    assert_one_line_error(
        cli("simulate", "-s", "fair", "--topology", "fat-tree:k=5"), 2, "'--topology'", "k must be even"
    )
    assert_one_line_error(
        cli("simulate", "-s", "fair", "--topology", "fat-tree", "--n-hosts", "4"), 2, "--n-hosts"
    )
    assert_one_line_error(cli("simulate", "-s", "fair", "--topology", tmp_path / "no.toml"), 2, "no such file")
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: fat-tree\nk: [4\n")
    assert_one_line_error(cli("simulate", "-s", "fair", "--topology", bad), 1, f"{bad}:2:")
    # A workload larger than the fabric is bad data.
    assert_one_line_error(cli("simulate", "-s", "fair", "--topology", "fat-tree:k=4"), 1, "the fabric has 16")
