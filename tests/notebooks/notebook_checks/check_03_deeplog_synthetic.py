"""The smoke check of notebooks/03_deeplog_synthetic.ipynb: what it must have recorded (not only that it ran)."""

import math

import pytest


def check(scalars: dict, params: dict) -> None:
    """03_deeplog_synthetic: subset sizes, listings located, metrics in range, mechanism invariants (k-RR's expected
    Hamming distance, exact composition), verdicts recorded."""
    data = scalars["data"]
    assert data["train_size"] + data["val_size"] + data["test_size"] == params["n_sequences"]
    assert data["test_length_max"] <= params["max_len"] and 0.0 <= data["length_only_accuracy"] <= 1.0
    if data["source"].startswith("real"):
        assert (data["normal_sessions"], data["abnormal_sessions"]) == (4855, 16838)
        # the thesis's listings are hdfs_train rows 0-10 and hdfs_test_abnormal rows 598-608
        assert (
            scalars["visca2021-fig4.1"]["first_file_row"] == 0 and scalars["visca2021-fig4.2"]["first_file_row"] == 598
        )
        assert (
            scalars["visca2021-fig4.1"]["max_edit_distance"] <= 1
            and scalars["visca2021-fig4.2"]["max_edit_distance"] <= 1
        )
    control = scalars["control"]
    assert 0.0 <= control["accuracy"] <= 1.0 and 0.0 < control["measured_delta_u"] <= 2.0 + 1e-9
    assert len(control["accuracy_by_model_seed"]) == params["n_model_seeds"]  # every model trained once per seed
    eps = [f"{float(e)}" for e in params["epsilons"]]
    for n in range(1, 8):
        item = scalars[f"visca2021-fig4.{n}"]
        assert item["verdict"] in ("agrees", "differs", "inconclusive", "not comparable")
        if n >= 3:
            assert sorted(item["accuracy_by_epsilon"]) == sorted(eps)
            assert all(
                0.0 <= v <= 1.0 for v in [*item["accuracy_by_epsilon"].values(), *item["hamming_by_epsilon"].values()]
            )
    # Idea 1 returns the original symbols at the largest epsilon and nearly random ones at the smallest
    ham1 = scalars["visca2021-fig4.3"]["hamming_by_epsilon"]
    assert ham1[eps[-1]] < ham1[eps[0]]
    fig44 = scalars["visca2021-fig4.4"]
    if "100.0" in eps:
        assert fig44["composed_budget_max"] == pytest.approx(100.0 * fig44["max_sequence_length"])
    beyond = scalars["beyond_thesis"]
    k, n_test = data["vocabulary_size"], data["test_size"]
    for e in eps:
        # k-RR changes a symbol with probability (k-1)/(e^eps + k - 1); the mean over sequences of the changed
        # fraction has that expectation and a standard error of at most sqrt(p(1-p)/n_test): allow five
        p_change = (k - 1) / (math.exp(min(float(e), 700.0)) + k - 1)
        se = math.sqrt(p_change * (1 - p_change) / n_test)
        assert beyond["krr_hamming_by_epsilon"][e] == pytest.approx(p_change, abs=5 * se + 1e-6)
        assert beyond["krr_released_epsilon_by_epsilon"][e] == pytest.approx(float(e) * data["test_length_max"])
    assert len(beyond["reach"]) == 7
    # Fig 4.3's summary shows each claim per range; Fig 4.7 names its statistic; the findings read the data
    fig43 = scalars["visca2021-fig4.3"]["verdict_reason"]
    assert "each claim on ε ≤" in fig43 and "all three agree on" in fig43
    assert "Spearman's rho" in scalars["visca2021-fig4.7"]["verdict_reason"]
    text = scalars["findings"]["text"]
    assert "model seed 0's autoencoder has reconstruction error" in text and "floor for every" not in text
    assert f"at ε = {float(params['epsilons'][-1]):g}" in text.split("**Idea 4.**")[1].split("\n")[0]
