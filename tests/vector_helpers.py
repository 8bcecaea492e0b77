"""The differential harness of the vector engine: Python ``Game``s beside a ``VectorGame``
holding the same positions, the same random legal asks applied to both, and everything
compared after every ask (hands, catches, pool, seat to move, the end, winners, every
seat's observation and the mask, bit for bit)."""

from __future__ import annotations

import random

import numpy as np

from gofish_env import Game, Rules
from gofish_env.actions import ActionCodec
from gofish_env.knowledge import KnowledgeTracker
from gofish_env.observation import ObservationEncoder, ObservationLayout
from gofish_env.vector import VectorGame

ASK_LIMIT = 20_000


class Reference:
    """Python games with their knowledge and encoders, as the AEC env keeps them."""

    def __init__(self, games: list[Game], history: int):
        self.games = games
        rules = games[0].rules
        self.layout = ObservationLayout(rules, history)
        self.codec = ActionCodec(rules)
        self.trackers = [KnowledgeTracker(game) for game in games]
        self.encoders = [ObservationEncoder(self.layout, t.public) for t in self.trackers]

    def observation(self, g: int, seat: int) -> np.ndarray:
        game, encoder = self.games[g], self.encoders[g]
        self.trackers[g].sync()
        encoder.update(game.events_since(encoder.num_events))
        return encoder.observe(
            seat, game.hand_counts(seat), game.current_player, game.hand_card_counts(seat)
        )

    def mask(self, g: int) -> np.ndarray:
        game = self.games[g]
        if game.is_over:
            return np.zeros(self.codec.size, bool)
        return self.codec.mask(game.current_player, game.legal_asks()).astype(bool)


def compare(batch: VectorGame, reference: Reference, observations: bool = True) -> None:
    """Everything the batch shows equals the reference, game by game."""
    games = reference.games
    players = batch.players
    counts, sizes = batch.hand_counts(), batch.hand_sizes()
    caught, catches, points = batch.caught_ranks(), batch.catch_counts(), batch.tiebreak_points()
    current, over, pool = batch.current_player, batch.is_over, batch.pool_size
    winners, out, masks = batch.winners(), batch.out(), batch.legal_mask()
    seen = [batch.observe(seat) for seat in range(players)] if observations else []
    for g, game in enumerate(games):
        where = f"game {g}, ask {game.num_asks}"
        assert over[g] == game.is_over, where
        assert current[g] == (-1 if game.current_player is None else game.current_player), where
        assert pool[g] == game.pool_size, where
        assert batch.num_asks[g] == game.num_asks, where
        for seat in range(players):
            assert list(counts[g, seat]) == game.hand_counts(seat), (where, seat)
            assert sizes[g, seat] == game.hand_size(seat), (where, seat)
            laid = game.catches(seat)
            assert catches[g, seat] == len(laid), (where, seat)
            assert list(caught[g, seat]) == [laid.count(r) for r in range(game.rules.ranks)]
            assert points[g, seat] == game.tiebreak_points(seat), (where, seat)
            assert out[g, seat] == game.is_out(seat), (where, seat)
            assert winners[g, seat] == (seat in game.winners), (where, seat)
        assert np.array_equal(masks[g], reference.mask(g)), where
        for seat in range(len(seen)):
            expected = reference.observation(g, seat)
            assert seen[seat][g].tobytes() == expected.tobytes(), (where, seat, _diff(batch, g))


def _diff(batch: VectorGame, g: int) -> str:
    return f"pool {batch.pool_size[g]}, current {batch.current_player[g]}"


def play_both(
    batch: VectorGame,
    games: list[Game],
    seed: int,
    history: int = 8,
    observations: bool = True,
) -> int:
    """The same seeded random legal asks in both engines, compared after every ask, to the
    end of every game. Returns the number of asks applied."""
    reference = Reference(games, history)
    chooser = random.Random(seed)
    compare(batch, reference, observations)
    asks = 0
    targets = np.zeros(len(games), np.int64)
    wanted = np.zeros(len(games), np.int64)
    while not all(game.is_over for game in games):
        for g, game in enumerate(games):
            if not game.is_over:
                targets[g], wanted[g] = chooser.choice(game.legal_asks())
                game.ask(int(targets[g]), int(wanted[g]))
                asks += 1
        batch.ask(targets, wanted)
        compare(batch, reference, observations)
        assert asks < ASK_LIMIT * len(games)
    return asks


def dealt_games(rules: Rules, count: int, seed: int) -> list[Game]:
    return [Game(rules, seed=seed * 100_003 + index) for index in range(count)]


def played_into(games: list[Game], seed: int, most: int) -> list[Game]:
    """The games after a random number (0 to ``most``) of random legal asks each: positions
    in play, with a history, for ``VectorGame.from_games``."""
    chooser = random.Random(seed)
    for game in games:
        for _ in range(chooser.randrange(most + 1)):
            if game.is_over:
                break
            game.ask(*chooser.choice(game.legal_asks()))
    return games


# ---------------------------------------------------------------------------- CPUs

_MASK64 = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15


def _mix64(z: int) -> int:
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return z ^ (z >> 31)


class SplitMixRandom(random.Random):
    """A ``random.Random`` giving the compiled CPUs' stream: splitmix64 from ``state``,
    ``random()`` its top 53 bits, ``choice(seq)`` = ``seq[int(random() * len(seq))]``
    (``choices`` already walks ``random()``). A Python CPU given one makes the choices the
    compiled CPU with the same generator state makes."""

    def __init__(self, state: int):
        super().__init__(0)
        self.state = int(state)

    def random(self) -> float:
        self.state = (self.state + _GOLDEN) & _MASK64
        return (_mix64(self.state) >> 11) * (1.0 / 9007199254740992.0)

    def choice(self, seq):
        return seq[int(self.random() * len(seq))]


def seed_state(seed: int, stream: int) -> int:
    """``gofish_env.vector.engine.seed_state``: the generator state of stream ``stream`` of
    ``seed``."""
    return _mix64((seed * _GOLDEN + _mix64((stream + _GOLDEN) & _MASK64)) & _MASK64)
