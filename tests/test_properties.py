"""Properties over thousands of seeded random games (uniform random legal asks).

After every ask: every card is in exactly one place, no hand holds a complete set, the public
event log accounts for every hand size, pool size, catch and out seat, and the seat to move
can ask. At the end: a full game lays every set and the winners follow the rule in force.
Every game also replays identically from its seed, from its dealt hands and pool
(``Game.from_hands``), and from a deepcopy and a pickle taken mid-game; refused asks of
several kinds raise ``IllegalAsk`` and change nothing.
"""

from __future__ import annotations

import copy
import pickle
import random
from collections import Counter

import pytest
from helpers import dealt, deck_cards, snapshot

from gofish_env import Game, IllegalAsk, Rules
from gofish_env.cards import RANK_POINTS, parse_card
from gofish_env.events import (
    Ask,
    Catch,
    Deal,
    Draw,
    EmptyHandDraw,
    GameOver,
    GoFish,
    Hit,
    Out,
    Pass,
)

ASK_LIMIT = 20_000  # far beyond any game seen; reaching it fails the test


def preset_configs() -> list[tuple[str, Rules]]:
    configs = []
    for name in Rules.PRESETS:
        top = Rules.PRESET_MAX_PLAYERS.get(name, 6)
        for players in range(2, top + 1):
            configs.append((f"{name}-{players}", Rules.preset(name, players=players)))
    return configs


# House rules the presets do not cover, each on top of the table rules.
HOUSE_RULES = {
    "after_miss_asked": {"after_miss": "asked"},
    "fish_ends_turn": {"fished_rank_asks_again": False},
    "off_rank_catch_asks_again": {"off_rank_catch_asks_again": True},
    "refill_5": {"empty_hand_draw_count": 5},
    "refill_5_own_turn": {"empty_hand_draw": "own_turn", "empty_hand_draw_count": 5},
    "first_out": {"game_end": "first_out"},
    "first_empty": {"winner": "first_empty"},
    "jokers": {"set_size": 2, "jokers": True},
    "jokers_bicycle": {
        "set_size": 2,
        "jokers": True,
        "empty_hand_draw": "own_turn",
        "empty_hand_askable": True,
    },
    "card_asks": {"ask_for": "card"},
    "ask_for_held_card": {"ask_for": "card", "ask_for_held_card": True},
    "card_asks_pairs_jokers": {"ask_for": "card", "set_size": 2, "jokers": True},
    "hand_or_pool_empty_drawing": {"game_end": "hand_or_pool_empty"},
    "first_player_random": {"first_player": "random"},
    "two_decks_pairs_seven": {"decks": 2, "set_size": 2, "deal": "seven"},
    "own_turn_after_miss_asked_first_empty": {
        "empty_hand_draw": "own_turn",
        "after_miss": "asked",
        "winner": "first_empty",
    },
}


def house_rule_configs() -> list[tuple[str, Rules]]:
    return [
        (f"{name}-{players}", Rules(players=players, **fields))
        for name, fields in HOUSE_RULES.items()
        for players in (2, 3, 4, 6)
    ]


ALL_CONFIGS = preset_configs() + house_rule_configs()


# ------------------------------------------------------------------------------ the checker


class PublicReplay:
    """Hand sizes, pool size, catches and out seats rebuilt from the public events alone."""

    def __init__(self, rules: Rules):
        self.rules = rules
        self.seen = 0
        self.sizes: list[int] = []
        self.pool = 0
        self.catches: list[list[int]] = [[] for _ in range(rules.players)]
        self.out: set[int] = set()
        self.asked_rank: int | None = None
        self.asked_card: int | None = None
        self.first_emptied_by_laying: int | None = None
        self.over: GameOver | None = None

    def update(self, game: Game) -> None:
        for event in game.events_since(self.seen):
            self.apply(event)
        self.seen = game.num_events

    def apply(self, event) -> None:
        assert self.over is None, f"{event!r} after the game ended"
        if isinstance(event, Deal):
            self.sizes = list(event.hand_sizes)
            self.pool = event.pool_size
            for seat, laid in enumerate(event.catches):
                self.catches[seat] = list(laid)
        elif isinstance(event, Ask):
            self.asked_rank, self.asked_card = event.rank, event.card
            assert event.target != event.asker
            assert event.target not in self.out
        elif isinstance(event, Hit):
            assert event.rank == self.asked_rank and event.count > 0
            if self.asked_card is not None:
                assert event.count == 1
            self.sizes[event.target] -= event.count
            self.sizes[event.asker] += event.count
        elif isinstance(event, Draw):
            # A fished card's rank is public only when it is what was asked for.
            assert event.rank is None or event.rank == self.asked_rank
            self.sizes[event.seat] += 1
            self.pool -= 1
        elif isinstance(event, EmptyHandDraw):
            assert self.sizes[event.seat] == 0 and event.count > 0
            self.sizes[event.seat] += event.count
            self.pool -= event.count
        elif isinstance(event, Catch):
            self.sizes[event.seat] -= self.rules.set_size
            self.catches[event.seat].append(event.rank)
            if self.sizes[event.seat] == 0 and self.first_emptied_by_laying is None:
                self.first_emptied_by_laying = event.seat
        elif isinstance(event, Out):
            assert self.sizes[event.seat] == 0 and self.pool == 0
            self.out.add(event.seat)
        elif isinstance(event, GameOver):
            self.over = event
        else:
            assert isinstance(event, GoFish | Pass), event
        assert min(self.sizes) >= 0 and self.pool >= 0, event


RANK_OF = {text: parse_card(text)[0] for text in set(deck_cards(Rules(set_size=2, jokers=True)))}
INDEX_OF = {text: 4 * rank + parse_card(text)[1] for text, rank in RANK_OF.items()}


def check_cards(game: Game, rules: Rules, hands: list[list[str]], deck: Counter) -> None:
    """Every card is in exactly one place: hands + pool + catches = the deck."""
    loose = Counter(game.pool_cards())
    for hand in hands:
        loose.update(hand)
    assert loose <= deck, loose - deck  # no card twice (beyond its copies), none invented
    per_rank = [0] * rules.ranks
    for card, count in loose.items():
        per_rank[RANK_OF[card]] += count
    for seat in range(rules.players):
        for caught in game.catches(seat):
            per_rank[caught] += rules.set_size
    assert per_rank == [rules.copies_of(r) for r in range(rules.ranks)], per_rank
    if rules.ask_for == "card":  # exact-card asks track which cards lie in catches
        laid = game.laid_cards
        assert not any(INDEX_OF[card] in laid for card in loose if card != "JK"), laid


def check_state(game: Game, rules: Rules, replay: PublicReplay, deck: Counter) -> None:
    players = rules.players
    replay.update(game)
    hands = [game.hand(seat) for seat in range(players)]
    check_cards(game, rules, hands, deck)
    assert list(game.hand_sizes()) == replay.sizes
    assert game.pool_size == replay.pool
    for seat in range(players):
        counts = game.hand_counts(seat)
        assert sum(counts) == len(hands[seat]) == replay.sizes[seat]
        assert max(counts, default=0) < rules.set_size, (seat, hands[seat])
        assert game.catches(seat) == replay.catches[seat]
        assert game.tiebreak_points(seat) == sum(RANK_POINTS[r] for r in replay.catches[seat])
        assert game.is_out(seat) == (seat in replay.out)
        if game.is_out(seat):
            assert replay.sizes[seat] == 0 and game.pool_size == 0
        elif not game.is_over and rules.game_end != "hand_or_pool_empty":
            assert replay.sizes[seat] or game.pool_size, f"seat {seat} empty but not out"
    if game.is_over:
        assert game.current_player is None and game.legal_asks() == ()
        assert replay.over is not None and replay.over.winners == game.winners
        return
    asker = game.current_player
    legal = game.legal_asks()
    assert legal, "the seat to move has no legal ask"
    assert replay.sizes[asker] > 0 and not game.is_out(asker)
    held = {RANK_OF[card] for card in hands[asker]}
    card_asks = rules.ask_for == "card"
    for target, what in legal:
        assert target != asker and not game.is_out(target)
        assert (what // 4 if card_asks else what) in held


def check_end(game: Game, rules: Rules, replay: PublicReplay) -> None:
    players = rules.players
    over = game.events[-1]
    assert isinstance(over, GameOver) and over is not None
    assert sum(isinstance(event, GameOver) for event in game.events) == 1
    counts = tuple(len(game.catches(seat)) for seat in range(players))
    points = tuple(game.tiebreak_points(seat) for seat in range(players))
    assert over.catches == counts and over.points == points
    if rules.game_end == "last_catch" and rules.winner != "first_empty":
        assert sum(counts) == rules.total_sets
        assert game.pool_size == 0
        assert all(not game.hand(seat) for seat in range(players))
    if rules.winner == "first_empty" and replay.first_emptied_by_laying is not None:
        expected = (replay.first_emptied_by_laying,)
    elif rules.winner == "catches_then_points":
        best = max(zip(counts, points, strict=True))
        expected = tuple(s for s in range(players) if (counts[s], points[s]) == best)
    else:
        expected = tuple(s for s in range(players) if counts[s] == max(counts))
    assert game.winners == expected


def try_illegal_asks(game: Game, rules: Rules, chooser: random.Random) -> None:
    """Refused asks raise IllegalAsk and leave the game exactly as it was."""
    asker = game.current_player
    counts = game.hand_counts(asker)
    held = [r for r, n in enumerate(counts) if n]
    missing = [r for r, n in enumerate(counts) if not n]
    others = [seat for seat in range(rules.players) if seat != asker]
    attempts = [(asker, held[0]), (rules.players, held[0]), (others[0], rules.ask_count)]
    attempts += [(seat, held[0]) for seat in others if game.is_out(seat)]
    if rules.ask_for == "rank" and missing:
        attempts.append((chooser.choice(others), chooser.choice(missing)))
    if rules.ask_for == "card":
        attempts.append((others[0], "ZZ"))
        for r in missing[:1]:
            attempts.append((others[0], 4 * r))
    else:
        attempts.append((others[0], "no such rank"))
    before = snapshot(game, events_tail=3)
    for target, what in attempts:
        with pytest.raises(IllegalAsk):
            game.ask(target, what)
    assert snapshot(game, events_tail=3) == before


def play_checked(rules: Rules, seed: int, illegal_every: int = 9) -> tuple[Game, list]:
    """Play a seeded game with random legal asks, checking everything after every ask."""
    deck = Counter(deck_cards(rules))
    chooser = random.Random(seed * 7919 + 17)
    game = Game(rules, seed=seed)
    replay = PublicReplay(rules)
    check_state(game, rules, replay, deck)
    asks = []
    while not game.is_over:
        assert len(asks) < ASK_LIMIT, "game did not end"
        if len(asks) % illegal_every == 3:
            try_illegal_asks(game, rules, chooser)
        ask = chooser.choice(game.legal_asks())
        asks.append(ask)
        asker, (target, what) = game.current_player, ask
        events = game.ask(*ask)
        if rules.ask_for == "card":
            assert events[0] == Ask(asker, target, what // 4, what)
        else:
            assert events[0] == Ask(asker, target, what)
        assert isinstance(events[1], Hit | GoFish)
        check_state(game, rules, replay, deck)
    check_end(game, rules, replay)
    return game, asks


def replay_asks(game: Game, asks: list) -> Game:
    for ask in asks:
        game.ask(*ask)
    return game


def check_replays(rules: Rules, seed: int, game: Game, asks: list) -> None:
    events = game.events
    # The same seed and the same asks give the same game.
    assert replay_asks(Game(rules, seed=seed), asks).events == events
    # The dealt hands and pool, given as an exact position, give the same game.
    hands, pool, first = dealt(rules, seed)
    from_hands = Game.from_hands(hands, pool, rules=rules, first_player=first)
    assert replay_asks(from_hands, asks).events == events
    # A deepcopy and a pickle taken mid-game carry on identically.
    half = len(asks) // 2
    middle = replay_asks(Game(rules, seed=seed), asks[:half])
    for clone in (copy.deepcopy(middle), pickle.loads(pickle.dumps(middle))):
        assert snapshot(clone) == snapshot(middle)
        assert replay_asks(clone, asks[half:]).events == events
    assert replay_asks(middle, asks[half:]).events == events


def games_for(rules: Rules, games: int) -> int:
    """Exact-card asks make long games (hundreds of asks): fewer of them."""
    return 8 if rules.ask_for == "card" else games


def run_config(rules: Rules, seeds: range) -> None:
    for seed in seeds:
        game, asks = play_checked(rules, seed)
        check_replays(rules, seed, game, asks)


# ------------------------------------------------------------------------------ the tests


@pytest.mark.parametrize(("name", "rules"), ALL_CONFIGS[::7], ids=[n for n, _ in ALL_CONFIGS[::7]])
def test_random_games_keep_every_invariant_quick_sample(name, rules):
    run_config(rules, range(3))


@pytest.mark.slow
@pytest.mark.parametrize(("name", "rules"), preset_configs(), ids=[n for n, _ in preset_configs()])
def test_random_games_under_every_preset_keep_every_invariant(name, rules):
    run_config(rules, range(1000, 1000 + games_for(rules, 40)))


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "rules"), house_rule_configs(), ids=[n for n, _ in house_rule_configs()]
)
def test_random_games_under_house_rules_keep_every_invariant(name, rules):
    run_config(rules, range(2000, 2000 + games_for(rules, 25)))


def test_configs_cover_every_preset_player_count_and_listed_house_rule():
    names = {name for name, _ in ALL_CONFIGS}
    for preset in Rules.PRESETS:
        assert f"{preset}-2" in names and f"{preset}-4" in names
    assert "table-6" in names and "quick-5" not in names and "ocean-4" in names
    fields = {field for house in HOUSE_RULES.values() for field in house}
    assert {
        "after_miss",
        "fished_rank_asks_again",
        "off_rank_catch_asks_again",
        "empty_hand_draw_count",
        "game_end",
        "winner",
        "jokers",
        "ask_for_held_card",
    } <= fields


def test_checker_catches_a_corrupted_game():
    """The invariant checks are not vacuous: a card moved behind the log's back is caught."""
    rules = Rules(players=3)
    game = Game(rules, seed=5)
    replay = PublicReplay(rules)
    deck = Counter(deck_cards(rules))
    check_state(game, rules, replay, deck)
    game._pool.pop()  # a card vanishes from the pool
    with pytest.raises(AssertionError):
        check_state(game, rules, replay, deck)
