"""A study's contract (pate_study.core.contract): overrides are checked against the class's annotations, one line per
problem naming the source and the field; the defaults are the paper profile; nested contracts merge key by key."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Annotated, Literal

import pytest

from pate_study.core.contract import COUNT, PROBABILITY, ContractError, Range, StudyContract, contract_problems
from pate_study.experiments.pate2018_lab import Lab2Config


@dataclass(frozen=True)
class Replicates(StudyContract):
    n_boot: Annotated[int, COUNT] = 200
    level: Annotated[float, PROBABILITY] = 0.95


@dataclass(frozen=True)
class Toy(StudyContract):
    dataset: Literal["mnist", "svhn"] = "mnist"
    n_queries: Annotated[int, Range(1, 1000)] = 640
    delta: Annotated[float, Range(0, 1, low_inclusive=False, high_inclusive=False)] = 1e-5
    sizes: tuple[int, ...] = (1, 10)
    head: tuple[int, ...] | None = None
    replicates: Replicates = Replicates()


def _problems(overrides: dict) -> list[str]:
    with pytest.raises(ContractError) as err:
        Toy.from_overrides(overrides, source="configs/x/smoke.yaml")
    assert all("\n" not in line and line.startswith("configs/x/smoke.yaml: ") for line in err.value.problems)
    return err.value.problems


def test_no_overrides_give_the_paper_profile():
    assert Toy.from_overrides({}) == Toy() and Toy.from_overrides(None) == Toy()
    assert Toy().overrides() == {}


def test_overrides_are_applied_lists_become_tuples_and_nested_keys_merge():
    toy = Toy.from_overrides({"n_queries": 10, "sizes": [3, 4], "replicates": {"n_boot": 5}, "delta": 1e-3})
    assert toy.sizes == (3, 4) and toy.n_queries == 10 and toy.delta == 1e-3
    assert toy.replicates == Replicates(n_boot=5, level=0.95)  # the other nested key keeps its paper value
    assert toy.overrides() == {
        "n_queries": 10,
        "delta": 1e-3,
        "sizes": [3, 4],
        "replicates": {"n_boot": 5, "level": 0.95},
    }
    assert toy.as_record()["head"] is None and toy.as_record()["sizes"] == [3, 4]
    assert Toy.from_overrides({"head": [64, 64]}).head == (64, 64)


@pytest.mark.parametrize(
    "overrides, expected",
    [
        ({"n_queries": 0}, "n_queries: expected an integer in [1, 1000], found 0"),
        ({"n_queries": 10**12}, "n_queries: expected an integer in [1, 1000], found 1000000000000"),
        ({"n_queries": 10.5}, "n_queries: expected an integer in [1, 1000], found 10.5"),
        ({"n_queries": True}, "n_queries: expected an integer in [1, 1000], found True"),
        ({"delta": 0.0}, "delta: expected a number in (0, 1), found 0.0"),
        ({"delta": float("nan")}, "delta: expected a number in (0, 1), found nan"),
        ({"delta": None}, "delta: expected a number in (0, 1), found None"),
        ({"dataset": "cifar"}, "dataset: expected one of 'mnist', 'svhn', found 'cifar'"),
        ({"sizes": [1, "ten"]}, "sizes[1]: expected an integer, found 'ten'"),
        ({"sizes": "ten"}, "sizes: expected a list of integers, found 'ten'"),
        ({"replicates": {"n_bot": 5}}, "replicates.n_bot: not a field of Replicates; did you mean replicates.n_boot?"),
        ({"replicates": {"level": float("nan")}}, "replicates.level: expected a number in [0, 1], found nan"),
        ({"replicates": 3}, "replicates: expected a mapping of Replicates's fields, found 3"),
        ({"n_querie": 5}, "n_querie: not a field of Toy; did you mean n_queries?"),
    ],
)
def test_a_bad_override_is_one_line_naming_source_field_expected_and_found(overrides, expected):
    [line] = _problems(overrides)
    assert line == f"configs/x/smoke.yaml: {expected}"


def test_none_is_allowed_only_where_the_annotation_says_so_and_every_problem_is_listed():
    assert Toy.from_overrides({"head": None}).head is None
    problems = _problems({"n_queries": 0, "dataset": None, "zzz": 1})
    assert len(problems) == 3 and "known: dataset, n_queries" in problems[2]


def test_the_checks_are_the_annotations_of_any_frozen_dataclass():
    assert contract_problems(Replicates, {"n_boot": 3}, "s") == []
    assert contract_problems(Replicates, [1], "s") == ["s: expected a mapping of Replicates's fields, found [1]"]


def test_the_labs_contract_defaults_are_table_2s_mnist_setting_and_refuse_a_bad_delta():
    lab = Lab2Config()
    assert (lab.votes_dataset, lab.n_queries, lab.threshold, lab.sigma1, lab.sigma2, lab.delta) == (
        "mnist",
        640,
        200.0,
        150.0,
        40.0,
        1e-5,
    )
    assert dataclasses.is_dataclass(lab) and Lab2Config.__dataclass_params__.frozen
    svhn = Lab2Config.from_overrides({"votes_dataset": "svhn", "n_queries": 8500, "threshold": 300})
    assert svhn.threshold == 300.0 and isinstance(svhn.threshold, float)
    with pytest.raises(ContractError, match="delta: expected a number in \\(0, 1\\), found 2"):
        Lab2Config.from_overrides({"delta": 2})


@dataclass(frozen=True)
class SeededToy(StudyContract):
    n_queries: Annotated[int, Range(1, 1000)] = 640
    seed: Annotated[int, Range(0)] = 0


def test_from_cell_puts_the_overrides_in_place_and_takes_the_seed_it_shares_with_the_cell():
    """One rule for every notebook's set-up cell: the overrides in place, and a field shared with the cell's own names
    (the seed) taking the cell's value; a contract without a seed ignores the cell's."""
    cell = {"profile": "smoke", "output_dir": "x", "seed": 7, "data": "auto", "overrides": {"n_queries": 10}, "np": 1}
    assert SeededToy.from_cell(cell) == SeededToy(n_queries=10, seed=7)
    assert Toy.from_cell({**cell, "overrides": {"dataset": "svhn"}}) == Toy(dataset="svhn")


def test_from_cell_refuses_in_one_line_naming_the_profile_or_what_the_cell_has_not_bound():
    with pytest.raises(ContractError, match=r"overrides of profile 'smoke'.*n_queries"):
        SeededToy.from_cell({"profile": "smoke", "seed": 1, "overrides": {"n_queries": 0}})
    with pytest.raises(ValueError, match=r"^SeededToy: the parameters cell binds no overrides, seed; run it first$"):
        SeededToy.from_cell({"profile": "paper"})
