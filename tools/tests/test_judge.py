"""The benchmarks' judge (aitune_judge) on cases worked by hand. That it equals the tuner's own
judge is tests/support/check_judges_agree.py's to show (ctest)."""
import json
import math
import pathlib

import numpy
import pytest

import aitune_judge as judge

FIXTURES = pathlib.Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "judge"


def fixture_verdict(name):
    """The verdict on tests/fixtures/judge/NAME.json (the fixtures the ctest check shares)."""
    fixture = json.loads((FIXTURES / f"{name}.json").read_text())
    check = judge.Check(fixture["budget"])
    for sample in fixture["samples"]:
        check.add(judge.fixture_outputs(sample["reference"]),
                  judge.fixture_outputs(sample["candidate"]))
    return check, check.verdict()


def test_sign_test_rank_matches_the_binomial_table():
    # P(Binomial(16, 1/2) <= 3) = 0.0106 <= 0.025 < P(<= 4) = 0.0384: the 4th from each end.
    assert judge.sign_test_rank(16, 0.025) == 4
    # Five values cannot bound a median at 95 %: P(<= 0) = 1/32 > 0.025.
    assert judge.sign_test_rank(5, 0.025) == 0
    with pytest.raises(ValueError):
        judge.sign_test_rank(10, 0.5)


def test_median_interval_ignores_nan_and_widens_to_infinity_with_too_few_values():
    interval = judge.median_interval([3.0, math.nan, 1.0, 2.0])
    assert (interval.n, interval.median) == (3, 2.0)
    assert (interval.low, interval.high) == (-math.inf, math.inf)
    values = list(range(1, 17))
    interval = judge.median_interval(values)
    assert (interval.median, interval.low, interval.high) == (8.5, 4, 13)
    assert judge.p90(values) == pytest.approx(14.5)


def test_budget_text_is_read_as_aitune_tune_reads_it():
    budget = judge.parse_budget("cosine=0.999,top5=90%,scores=logits,samples=20")
    assert budget.cosine == 0.999 and budget.samples == 20 and budget.relative is None
    assert budget.top_k == judge.TopK("logits", 5, 0.9)
    assert judge.parse_budget("relative=0.05,").relative == 0.05  # a trailing comma ends it
    for text in ["", "cosine=2", "top0=1", "cosine=0.9,cosine=0.8", "top1=98%,top5=99%",
                 "scores=logits", "samples=0", "cosine=+0.5", "cosine=1e400", "cosine= 0.5",
                 ",cosine=0.9", "unknown=1", "top1=0%"]:
        with pytest.raises(ValueError, match="bad accuracy budget"):
            judge.parse_budget(text)


def test_top_k_ties_go_to_the_lower_class_as_argmax_breaks_them():
    # Rows: an exact copy with a tie for first; all equal; the top class tied with a lower one in
    # the candidate (top-2 only); the top class tied with a higher one (top-1 holds).
    check, verdict = fixture_verdict("top_k_ties")
    (scores,) = verdict.outputs
    assert (scores.top_k_agreed, scores.top_k_rows) == (3, 4)
    assert not verdict.within  # 75 % < 80 %
    _, verdict = fixture_verdict("top_k_ties_top2")
    assert verdict.outputs[0].top_k_agreed == 4 and verdict.within


def test_non_finite_values_where_the_baseline_has_them_are_left_out_of_every_measure():
    _, verdict = fixture_verdict("non_finite_matched")
    (output,) = verdict.outputs
    # Finite values only: the first sample's worst error is 0.1 of its scale 3.0, the second's
    # 0.2 of 2.0: the worst ratio is 0.1 (in float32).
    assert output.relative_error == pytest.approx(0.1, rel=1e-6)
    assert 0.99 < output.cosine < 1.0
    assert (output.top_k_agreed, output.top_k_rows) == (4, 4)


def test_nan_or_inf_where_the_baseline_has_none_cannot_be_judged():
    check, verdict = fixture_verdict("nan_where_baseline_has_numbers")
    assert not verdict.within and "NaN" in check.problem
    check, verdict = fixture_verdict("inf_differs")
    assert not verdict.within and "infinite" in check.problem


def test_a_baseline_of_zeros_gives_an_infinite_relative_error_and_no_cosine():
    _, verdict = fixture_verdict("zero_scale")
    assert verdict.figure("relative_error") == math.inf and verdict.figure("cosine") == 0.0
    assert len(verdict.failed) == 2


def test_class_scores_are_the_named_output_or_the_only_one_with_classes():
    _, verdict = fixture_verdict("dict_outputs_scores_named")
    paths = [o.output for o in verdict.outputs]
    assert paths == ["output['logits']", "output['hidden']"]
    assert verdict.outputs[0].top_k_rows == 4 and verdict.outputs[1].top_k_rows == 0
    _, verdict = fixture_verdict("two_outputs_with_classes")
    assert not verdict.within and "2 outputs have class scores" in verdict.failed[0]


def test_torch_tensors_and_nested_outputs_are_named_as_the_tuner_names_them():
    torch = pytest.importorskip("torch")
    outputs = {"logits": torch.zeros(1, 3), "past": (torch.ones(2), torch.ones(2))}
    assert list(judge.outputs_by_path(outputs)) == [
        "output['logits']", "output['past'][0]", "output['past'][1]"]
    assert list(judge.outputs_by_path(torch.zeros(2))) == ["output"]


def test_a_runtimes_flat_outputs_take_eager_pytorchs_names_so_scores_name_the_same_output():
    eager = {"hidden": numpy.ones((1, 2), "float32"),
             "logits": numpy.array([[0.1, 0.9, 0.3]], "float32")}
    flat = [numpy.ones((1, 2), "float32"), numpy.array([[0.2, 0.8, 0.1]], "float32")]
    named = judge.named_like(eager, flat)
    assert list(named) == ["output['hidden']", "output['logits']"]
    check = judge.Check("top1=100%,scores=logits")
    check.add_named(judge.named_like(eager, list(eager.values())), named)
    verdict = check.verdict()
    assert verdict.within and verdict.figure("top_k_share") == 1.0
    # A list that does not match eager's leaves is named by position, on both sides alike.
    assert list(judge.named_like(eager, flat[:1])) == ["output[0]"]
