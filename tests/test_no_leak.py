"""No leaks: what a seat is shown depends only on public information and its own hand.

Method. A seeded deal (hands and pool before anything is laid, ``helpers.dealt``) and a
random ask sequence played from it give a world. An alternative world transposes two cards
among the locations one viewer cannot see (the other hands and the pool), possibly a few
times over, and replays the same asks. It is kept when its public event log is identical
(events compare equal) and the viewer's hand is identical after every step: then nothing the
viewer may know differs, only hidden cards do. Each kept world is replayed through
``raw_env`` (``reset(options={"game": ...})``) and the viewer's observation, mask, reward,
info, render and knowledge bounds must equal the original's at every step; the scripted
CPUs' decisions (every entry of ``baselines.CPU_LEVELS``) must be equal too, and so must the
seat's ``Scene`` (what a picture of the table shows) at every step and its ``rgb_array``
frame at every sixteenth step (a frame is drawn from the scene alone). As a control,
worlds whose public log is identical but whose viewer hand differs must give a different
observation.
"""

from __future__ import annotations

import pickle
import random
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from helpers import dealt

import gofish_env
from gofish_env import Game, IllegalAsk, Rules
from gofish_env.cpus import CPU_LEVELS, make_cpu


@dataclass
class World:
    """A deal (hands as dealt, pool top first, who asks first) under some rules."""

    rules: Rules
    hands: list[list[str]]
    pool: list[str]
    first: int

    def game(self) -> Game:
        return Game.from_hands(self.hands, self.pool, rules=self.rules, first_player=self.first)


@dataclass
class Scenario:
    """A world and the asks played in it, as (target, rank or card index)."""

    world: World
    asks: list[tuple[int, int]]


def make_scenario(rules: Rules, seed: int, max_asks: int) -> Scenario:
    hands, pool, first = dealt(rules, seed)
    world = World(rules, hands, pool, first)
    game = world.game()
    # The exact position given by hand is the same game as the seeded deal.
    assert game.events == Game(rules, seed=seed).events
    chooser = random.Random(seed)
    asks = []
    while not game.is_over and len(asks) < max_asks:
        ask = chooser.choice(game.legal_asks())
        asks.append(ask)
        game.ask(*ask)
    return Scenario(world, asks)


def public_trace(world: World, asks: list[tuple[int, int]], viewer: int, like=None):
    """(event log split by step, the viewer's hand after the deal and after every ask), or
    None when an ask is refused in this world, or (given ``like``, another trace) as soon as
    the public log departs from ``like``'s."""
    game = world.game()
    steps = [game.events]
    hands = [game.hand(viewer)]
    if like is not None and steps[0] != like[0][0]:
        return None
    for step, ask in enumerate(asks, start=1):
        try:
            events = game.ask(*ask)
        except IllegalAsk:
            return None
        if like is not None and events != like[0][step]:
            return None
        steps.append(events)
        hands.append(game.hand(viewer))
    return steps, hands


def hidden_slots(world: World, viewer: int) -> list[tuple[str, int, int]]:
    """Every place a card lies that the viewer cannot see at the deal."""
    slots = [
        ("hand", seat, index)
        for seat, hand in enumerate(world.hands)
        if seat != viewer
        for index in range(len(hand))
    ]
    return slots + [("pool", 0, index) for index in range(len(world.pool))]


def card_at(world: World, slot) -> str:
    place, seat, index = slot
    return world.hands[seat][index] if place == "hand" else world.pool[index]


def swapped(world: World, pairs) -> World:
    hands = [list(hand) for hand in world.hands]
    pool = list(world.pool)

    def put(slot, card):
        place, seat, index = slot
        if place == "hand":
            hands[seat][index] = card
        else:
            pool[index] = card

    new = World(world.rules, hands, pool, world.first)
    for a, b in pairs:
        card_a, card_b = card_at(new, a), card_at(new, b)
        put(a, card_b)
        put(b, card_a)
    return new


def alternative_worlds(
    scenario: Scenario, viewer: int, rng: random.Random, tries: int, keep: int
) -> tuple[list[World], list[World]]:
    """(worlds the viewer cannot tell apart from the original, worlds with the same public
    log where the viewer's own hand differs at some step)."""
    world = scenario.world
    original = public_trace(world, scenario.asks, viewer)
    hands = original[1]
    slots = hidden_slots(world, viewer)
    ranks_only = world.rules.ask_for == "rank"
    same, differ = [], []
    seen = set()
    for attempt in range(tries):
        if len(same) >= keep and (len(differ) >= 2 or attempt >= tries // 3):
            break
        pairs = []
        for _ in range(rng.choice((1, 1, 2, 3))):
            a, b = rng.sample(slots, 2)
            pairs.append((a, b))
        alternative = swapped(world, pairs)
        key = (tuple(map(tuple, alternative.hands)), tuple(alternative.pool))
        if key in seen or (alternative.hands == world.hands and alternative.pool == world.pool):
            continue
        seen.add(key)
        if ranks_only and _same_ranks(alternative, world):
            continue  # only suits moved: the same game under rank asks
        trace = public_trace(alternative, scenario.asks, viewer, like=original)
        if trace is None:
            continue
        if trace[1] == hands:
            if len(same) < keep:
                same.append(alternative)
        elif len(differ) < 2 and _rank_counts(trace[1], world.rules) != _rank_counts(
            hands, world.rules
        ):
            differ.append(alternative)
    return same, differ


def _rank_counts(hands: list[list[str]], rules: Rules) -> list[list[int]]:
    """The viewer's hand after every step as counts by rank (or by card, for card asks)."""
    if rules.ask_for == "card":
        return [sorted(hand) for hand in hands]
    return [sorted(card[:-1] if card != "JK" else card for card in hand) for hand in hands]


def _same_ranks(a: World, b: World) -> bool:
    def ranks(cards):
        return [card[:-1] if card != "JK" else card for card in cards]

    return [ranks(hand) for hand in a.hands] == [ranks(hand) for hand in b.hands] and ranks(
        a.pool
    ) == ranks(b.pool)


def viewer_trace(world: World, asks: list[tuple[int, int]], viewer: int) -> list[tuple]:
    """What the viewer is shown after the reset and after every step of ``raw_env``."""
    env = gofish_env.raw_env(rules=world.rules, render_mode="ansi", render_view=viewer)
    env.reset(options={"game": world.game()})
    agent = env.possible_agents[viewer]

    def shown() -> tuple:
        obs = env.observe(agent)
        view = env.view(viewer)
        # Frames cost milliseconds: every sixteenth step (the scene they draw: every step).
        frame = env.render_rgb(viewer).tobytes() if len(trace) % 16 == 0 else None
        return (
            obs["observation"].tobytes(),
            obs["action_mask"].tobytes(),
            env.rewards[agent],
            env._cumulative_rewards[agent],
            repr(env.infos[agent]),
            env.terminations[agent],
            env.truncations[agent],
            env.render(),
            view.least.tobytes(),
            view.most.tobytes(),
            view.legal_asks,
            env.agent_selection,
            env.render_scene(viewer),
            frame,
            pickle.dumps(view),  # all a view holds (not the game it was made from)
        )

    trace: list[tuple] = []
    trace.append(shown())
    for target, what in asks:
        seat = env.game.current_player
        env.step(env.codec.to_action(seat, target, what))
        trace.append(shown())
    return trace


def cpu_decisions(
    cpu_factory: Callable[[int], object], world: World, asks: list[tuple[int, int]], viewer: int
) -> list[tuple[int, int]]:
    """The CPU's choice at every step where the viewer is to move (the game itself follows
    ``asks``)."""
    env = gofish_env.raw_env(rules=world.rules)
    env.reset(options={"game": world.game()})
    cpu = cpu_factory(1234)
    cpu.reset(1234)
    decisions = []

    def decide() -> None:
        if env.game.current_player == viewer:
            view = env.view(viewer)
            choice = tuple(cpu.choose(view))
            assert choice in view.legal_asks, f"{cpu!r} chose an illegal ask {choice}"
            decisions.append(choice)

    decide()
    for target, what in asks:
        env.step(env.codec.to_action(env.game.current_player, target, what))
        decide()
    return decisions


def assert_cpu_ignores_hidden_cards(
    cpu_factory: Callable[[int], object],
    scenario: Scenario,
    viewer: int,
    worlds: list[World],
) -> int:
    """Reusable check: a CPU built by ``cpu_factory(seed)`` makes the same decisions in every
    world the viewer cannot tell apart. Returns how many decisions were compared."""
    expected = cpu_decisions(cpu_factory, scenario.world, scenario.asks, viewer)
    for world in worlds:
        got = cpu_decisions(cpu_factory, world, scenario.asks, viewer)
        assert got == expected, (
            f"{cpu_factory!r} decided differently for seat {viewer} when only hidden cards "
            f"moved: {world.hands} / pool {world.pool[:6]}..."
        )
    return len(expected) * len(worlds)


# ----------------------------------------------------------------------------- the checks

# (case id, rules, seeds, most asks played: 400 plays the whole game)
CASES = [
    ("table-4", Rules(), (0, 1, 2), 40),
    ("table-2", Rules(players=2), (3, 4), 60),
    ("table-6", Rules(players=6), (5,), 40),
    ("bicycle-3", Rules.preset("bicycle", players=3), (6, 7), 400),
    ("family-4", Rules.preset("family"), (8,), 40),
    ("quick-3", Rules.preset("quick", players=3), (9, 10), 400),
    ("ocean-3", Rules.preset("ocean", players=3), (11,), 40),
    ("pairs-4", Rules.preset("pairs"), (12,), 40),
    ("pairs-jokers-3", Rules.preset("pairs", jokers=True, players=3), (13,), 40),
    ("two-decks-3", Rules.preset("two_decks", players=3), (14,), 40),
    ("authors-3", Rules.preset("authors", players=3), (15, 16), 400),
    ("refill-3", Rules(players=3, empty_hand_draw_count=4), (17,), 400),
    # Exact-card asks with pairs: which cards a catch laid decides the legal asks.
    ("card-pairs-3", Rules(players=3, ask_for="card", set_size=2), (18, 19), 400),
]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("rules", "seeds", "max_asks"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_hidden_cards_do_not_change_what_a_seat_is_shown(rules, seeds, max_asks, request):
    stats = {"worlds": 0, "steps": 0, "controls": 0, "cpu_decisions": 0}
    for seed in seeds:
        scenario = make_scenario(rules, seed, max_asks)
        assert len(scenario.asks) >= min(max_asks, 10)
        for viewer in range(rules.players):
            rng = random.Random(seed * 31 + viewer)
            worlds, controls = alternative_worlds(scenario, viewer, rng, tries=1200, keep=10)
            expected = viewer_trace(scenario.world, scenario.asks, viewer)
            for world in worlds:
                got = viewer_trace(world, scenario.asks, viewer)
                for step, (a, b) in enumerate(zip(expected, got, strict=True)):
                    assert a == b, (
                        f"seat {viewer} is shown something different at step {step} although "
                        f"only hidden cards moved: {_first_difference(a, b)}"
                    )
                stats["worlds"] += 1
                stats["steps"] += len(got)
            # Control: the comparison does see a change in the viewer's own hand, in the
            # observation or its mask (with exact-card asks, which cards of a rank it holds
            # shows in the mask: the observation counts ranks).
            for world in controls:
                got = viewer_trace(world, scenario.asks, viewer)
                assert any(a[:2] != b[:2] for a, b in zip(expected, got, strict=True))
                stats["controls"] += 1
            for name in CPU_LEVELS:
                stats["cpu_decisions"] += assert_cpu_ignores_hidden_cards(
                    lambda seed, name=name: make_cpu(name, seed), scenario, viewer, worlds[:3]
                )
    print(f"no-leak {request.node.callspec.id}: {stats}")
    # Enough alternatives were exercised for the check to mean something.
    assert stats["worlds"] >= 3 * rules.players * len(seeds)
    assert stats["cpu_decisions"] > 0


FIELDS = (
    "observation",
    "action_mask",
    "reward",
    "cumulative reward",
    "info",
    "terminated",
    "truncated",
    "render",
    "least",
    "most",
    "legal asks",
    "agent to move",
    "scene",
    "picture",
)


def _first_difference(a: tuple, b: tuple) -> str:
    for name, x, y in zip(FIELDS, a, b, strict=True):
        if x != y:
            if name in ("observation", "least", "most", "picture"):
                return f"{name} differs"
            return f"{name}: {x!r} != {y!r}"
    return "nothing"


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("players", [2, 4])
def test_the_viewers_own_hand_does_change_what_it_is_shown(seed, players):
    rules = Rules(players=players)
    hands, pool, first = dealt(rules, seed)
    world = World(rules, hands, pool, first)
    for viewer in range(players):
        own = hands[viewer][0]
        other = next(card for card in pool if card[:-1] not in {c[:-1] for c in hands[viewer]})
        changed = swapped(world, [(("hand", viewer, 0), ("pool", 0, pool.index(other)))])
        assert changed.hands[viewer][0] == other and own in changed.pool
        a = viewer_trace(world, [], viewer)[0]
        b = viewer_trace(changed, [], viewer)[0]
        assert a[0] != b[0], "the observation ignores the viewer's own hand"
        assert a[7] != b[7], "the render ignores the viewer's own hand"
        assert a[12] != b[12], "the scene ignores the viewer's own hand"
        assert a[13] != b[13], "the picture ignores the viewer's own hand"
        if world.game().current_player == viewer:
            assert a[1] != b[1], "the mask ignores the viewer's own hand"


def test_every_cpu_level_is_checked():
    # The CPU check runs over CPU_LEVELS, so a new level is covered without editing this file.
    assert "random" in CPU_LEVELS
    scenario = make_scenario(Rules(players=3), seed=40, max_asks=30)
    worlds, _ = alternative_worlds(scenario, 1, random.Random(40), tries=800, keep=3)
    assert worlds
    for name in CPU_LEVELS:
        compared = assert_cpu_ignores_hidden_cards(
            lambda seed, name=name: make_cpu(name, seed), scenario, 1, worlds
        )
        assert compared > 0, name


def test_a_cpu_that_peeks_at_hidden_cards_is_caught():
    """The helper can fail: a CPU that reads the true game (not its view) is caught."""
    peeking_env: dict = {}

    class PeekingCPU:
        def __init__(self, seed):
            self.seed = seed

        def reset(self, seed=None):
            pass

        def choose(self, view):
            game = peeking_env["env"].game
            # Ask whoever truly holds most of the rank: private information.
            return max(view.legal_asks, key=lambda ask: game.hand_counts(ask[0])[ask[1]])

    scenario = make_scenario(Rules(players=3), seed=41, max_asks=40)
    worlds, _ = alternative_worlds(scenario, 0, random.Random(41), tries=1500, keep=6)
    assert worlds
    original_raw_env = gofish_env.raw_env

    def spying_raw_env(*args, **kwargs):
        env = original_raw_env(*args, **kwargs)
        peeking_env["env"] = env
        return env

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(gofish_env, "raw_env", spying_raw_env)
        with pytest.raises(AssertionError, match="decided differently"):
            for world in worlds:
                assert_cpu_ignores_hidden_cards(PeekingCPU, scenario, 0, [world])
