"""Reward schemes: named bundles of weighted components, paid to every seat when earned.

Components (per seat, per step):
- ``catch``: +1 for each catch the seat lays (on any seat's turn, and at the deal);
- ``catch_points``: the catch's tiebreak points / 14 (an ace catch is worth 1.0);
- ``tiebreak``: the catch's points / (all points in the deck + 1), so that over a game
  ``catch + tiebreak`` ranks seats exactly as the table's winner rule does (catches first,
  then points: the tiebreak part of a return never reaches 1);
- ``win``: at the end only: 1/k to each of k winners (1 for a sole win), 0 to the others;
  in match play (``Rules.match_target``) the end is the match's, not each game's.

``zero_sum=True`` pays each seat its own reward minus the mean of the other seats'
rewards, so every step's rewards sum to zero. Named schemes: ``"zero_sum"`` is the zero-sum
form of ``win``; ``"catch_margin"`` that of ``catch`` (a seat's return is its catches minus
the mean of the other seats' catches, so a catch an opponent lays costs it too).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from gofish_env.cards import MAX_RANK_POINTS, RANK_POINTS
from gofish_env.events import Catch, Event
from gofish_env.rules import Rules

COMPONENTS = ("catch", "catch_points", "tiebreak", "win")

NAMED_SCHEMES: dict[str, dict] = {
    "catches": {"catch": 1.0},
    "catch_points": {"catch_points": 1.0},
    "catches+tiebreak": {"catch": 1.0, "tiebreak": 1.0},
    "win": {"win": 1.0},
    "zero_sum": {"win": 1.0, "zero_sum": True},
    "catch_margin": {"catch": 1.0, "zero_sum": True},
}


ILLEGAL_ACTION_CHOICES = ("terminate", "raise")


def finite_number(value: object, what: str) -> float:
    """``value`` as a float if it is a finite real number (NumPy scalars too, not a bool),
    else a ValueError that starts with ``what``."""
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not math.isfinite(float(value))
    ):
        raise ValueError(f"{what}: got {value!r}; allowed: a finite number")
    return float(value)


def check_illegal_action(illegal_action: str, illegal_reward: object) -> float:
    """The envs' ``illegal_action`` / ``illegal_reward`` arguments checked; the penalty as a
    float."""
    if illegal_action not in ILLEGAL_ACTION_CHOICES:
        raise ValueError(f"illegal_action: got {illegal_action!r}; allowed: 'terminate', 'raise'")
    return finite_number(illegal_reward, "illegal_reward")


@dataclass(frozen=True)
class RewardScheme:
    weights: Mapping[str, float]
    zero_sum: bool = False
    name: str = "custom"

    @classmethod
    def make(cls, spec: str | Mapping[str, float] | RewardScheme) -> RewardScheme:
        """A scheme from its name, or from a mapping of component -> weight (plus an
        optional ``"zero_sum": True``)."""
        if isinstance(spec, RewardScheme):
            return spec
        if isinstance(spec, str):
            if spec not in NAMED_SCHEMES:
                raise ValueError(
                    f"reward: unknown scheme {spec!r}; allowed: {', '.join(NAMED_SCHEMES)}, "
                    f"or a dict of weights over {', '.join(COMPONENTS)}"
                )
            named = dict(NAMED_SCHEMES[spec])
            zero_sum = bool(named.pop("zero_sum", False))
            return cls(named, zero_sum, spec)
        if isinstance(spec, Mapping):
            weights = dict(spec)
            zero_sum = weights.pop("zero_sum", False)
            for key, value in weights.items():
                if key not in COMPONENTS:
                    raise ValueError(
                        f"reward: unknown component {key!r}; allowed: {', '.join(COMPONENTS)}, "
                        f"zero_sum"
                    )
                weights[key] = finite_number(value, f"reward: weight of {key!r}")
            if not isinstance(zero_sum, bool):
                raise ValueError(f"reward: zero_sum must be True or False, got {zero_sum!r}")
            return cls(weights, zero_sum, "custom")
        raise ValueError(
            f"reward: got {spec!r}; allowed: a name ({', '.join(NAMED_SCHEMES)}) or a dict"
        )


class RewardCalculator:
    """Turns the events of a step into per-seat rewards and their components."""

    def __init__(self, rules: Rules, scheme: RewardScheme):
        self.players = rules.players
        self.scheme = scheme
        self.tiebreak_scale = 1.0 / (rules.total_points + 1)
        self.weights = [scheme.weights.get(name, 0.0) for name in COMPONENTS]
        self._seats = range(self.players)

    def components(
        self, events: Sequence[Event], winners: Sequence[int] | None = None
    ) -> list[dict[str, float]]:
        """Each seat's unweighted components earned in these events; ``winners`` when the
        episode ends with them (in match play that is the match's result, not a game's)."""
        parts = [self.zero_components() for _ in range(self.players)]
        for event in events:
            kind = type(event)
            if kind is Catch:
                seat_parts = parts[event.seat]
                points = RANK_POINTS[event.rank]
                seat_parts["catch"] += 1.0
                seat_parts["catch_points"] += points / MAX_RANK_POINTS
                seat_parts["tiebreak"] += points * self.tiebreak_scale
        for seat in winners or ():
            parts[seat]["win"] += 1.0 / len(winners)
        return parts

    @staticmethod
    def zero_components() -> dict[str, float]:
        return dict.fromkeys(COMPONENTS, 0.0)

    @staticmethod
    def earns(events: Sequence[Event]) -> bool:
        """Whether these events lay a catch (the end of an episode is told apart)."""
        return any(type(event) is Catch for event in events)

    def rewards(
        self, events: Sequence[Event], winners: Sequence[int] | None = None
    ) -> tuple[list[float], list[dict[str, float]]]:
        """(reward per seat, components per seat) for these events, and for the end of the
        episode when ``winners`` is given."""
        # Most asks lay no catch and end nothing: nothing earned, nothing to add up.
        if winners is None and not self.earns(events):
            return [0.0] * self.players, [self.zero_components() for _ in self._seats]
        parts = self.components(events, winners)
        weights = self.weights
        rewards = [
            sum(w * seat_parts[name] for w, name in zip(weights, COMPONENTS, strict=True))
            for seat_parts in parts
        ]
        if self.scheme.zero_sum and self.players > 1:
            total = sum(rewards)
            others = self.players - 1
            rewards = [r - (total - r) / others for r in rewards]
        return rewards, parts
