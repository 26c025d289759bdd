"""scripts/load_test.py's memory summary: the median of each minute, the level a sample-at-a-moment
hides."""

from __future__ import annotations

from scripts.load_test import RssSampler


def _sampler(samples: list[tuple[float, float]]) -> RssSampler:
    sampler = RssSampler(pid=[])  # never started: the samples are given
    sampler.samples = samples
    return sampler


def test_each_whole_minute_gives_its_median_and_a_spike_does_not_move_it():
    # Minute 1 sits at 100 MiB with one 900 MiB spike; minute 2 at 200; 30 s of a third minute is left out.
    samples = [(t, 900.0 if t == 30 else 100.0) for t in range(0, 60)]
    samples += [(t, 200.0) for t in range(60, 120)] + [(t, 300.0) for t in range(120, 150)]
    assert _sampler(samples).medians(0.0, 150.0) == [100.0, 200.0]


def test_a_load_shorter_than_a_minute_has_no_minutes():
    assert _sampler([(t, 50.0) for t in range(0, 30)]).medians(0.0, 30.0) == []
