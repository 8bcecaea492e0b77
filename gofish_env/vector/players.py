"""Who plays the seats of a batch: compiled CPUs (one kernel call for every game), and
any other player (``gofish_env.players``) one game at a time through a ``Turn`` made from
the batch's arrays."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

import numpy as np

from gofish_env.actions import ActionCodec
from gofish_env.cards import index_strings
from gofish_env.knowledge import AskRecord, PlayerView, PublicKnowledge
from gofish_env.players import Turn
from gofish_env.vector import cpus
from gofish_env.vector.game import VectorGame, checked_seed
from gofish_env.vector.play import play_out
from gofish_env.vector.structs import BorrowedStruct, NotCopyable

COMPILED_LEVELS = cpus.COMPILED_LEVELS


class CompiledCPUs(NotCopyable):
    """Compiled CPU levels at the seats of every game of a batch.

    ``levels`` is one level for every seat, or an array [N, P] of level names (``None``
    for a seat something else plays). Each seat draws from its own generator, seeded by
    ``(seed, game, seat)`` and by ``reset``; ``seed=None`` draws a seed (as ``VectorGame``).
    They cannot be pickled or copied (``TypeError``).
    """

    _copy_advice = "Seat new ones: CompiledCPUs(batch, levels, seed)."

    def __init__(self, batch: VectorGame, levels, seed: int | None = 0):
        seed = checked_seed(seed)
        self.batch = batch
        K = batch.constants
        self.state = cpus.allocate_cpus(batch.num_games, batch.players, K.ranks, K.actions)
        self.kernel_state = BorrowedStruct(cpus.cpu_state_struct(self.state), self.state)
        self.set_levels(levels)
        self._seed = int(seed)
        self._deals = np.zeros(batch.num_games, np.int64)
        self.reset()
        self._actions = np.zeros(batch.num_games, np.int64)

    def set_levels(self, levels) -> None:
        shape = (self.batch.num_games, self.batch.players)
        names = np.asarray(levels, dtype=object)
        try:
            np.broadcast_shapes(names.shape, shape)
        except ValueError:
            raise ValueError(
                f"levels: got shape {names.shape}; allowed: one level, one per seat "
                f"({shape[1]},) or one per game and seat {shape}"
            ) from None
        # Each name given is read once, then broadcast: one level for a whole batch costs
        # one lookup, not one per game and seat.
        codes = np.full(names.shape, cpus.NOT_COMPILED, np.int64)
        for index, name in np.ndenumerate(names):
            if name is None:
                continue
            if name not in cpus.LEVEL_CODES:
                raise ValueError(
                    f"levels: got {name!r}; allowed: {', '.join(COMPILED_LEVELS)} (or None)"
                )
            if name != "random" and not self.batch.knowledge:
                raise ValueError(
                    f"levels: got {name!r} for a batch made with knowledge=False; allowed: "
                    f"random (the other levels decide from the public knowledge such a "
                    f"batch does not keep)"
                )
            codes[index] = cpus.LEVEL_CODES[name]
        self.state.level[:] = np.broadcast_to(codes, shape)

    def reset(self, games: Sequence[int] | np.ndarray | None = None, seeds=None) -> None:
        """A new game at ``games`` (default all): plans forgotten, generators reseeded from
        ``seeds`` (one integer per game) or from (seed, game, how many games it has reset).
        Indices outside 0 to N-1, or seeds not one per game, are refused (``ValueError``)."""
        batch = self.batch
        indices = np.arange(batch.num_games) if games is None else batch._indices(games)
        if seeds is not None:
            given = np.asarray(seeds)
            if given.shape != indices.shape or (given.size and given.dtype.kind not in "iu"):
                raise ValueError(
                    f"seeds: got {given.size} of dtype {given.dtype} for {indices.size} "
                    f"games; allowed: one integer per game, shape {indices.shape}"
                )
        if seeds is None:
            # The k-th game at each place: a seed made of (seed, k), mixed by seed_state.
            resets = self._deals[indices].astype(np.uint64)
            seeds = np.uint64(self._seed) + resets * np.uint64(0x9E3779B97F4A7C15)
            self._deals[indices] += 1
        seeds = np.asarray(seeds).astype(np.uint64)
        cpus.reseed(self.batch.kernel_constants, self.kernel_state, indices, seeds)

    def actions(self) -> np.ndarray:
        """Each live game's action by its compiled CPU to move (-1: over, or not a compiled
        CPU's turn)."""
        batch = self.batch
        cpus.choose_all(
            batch.kernel_state, batch.kernel_constants, self.kernel_state, self._actions
        )
        return self._actions.copy()

    def seed_seats(self, seeds) -> None:
        """A new game everywhere, seat s of game g seeded from ``seeds[g][s]`` alone (not
        from its place in the batch): plans forgotten, generators reseeded."""
        seeds = np.asarray(seeds, dtype=np.uint64)
        shape = (self.batch.num_games, self.batch.players)
        if seeds.shape != shape:
            raise ValueError(f"seeds: got shape {seeds.shape}; expected {shape} (games, seats)")
        cpus.seed_each(self.kernel_state, seeds)

    def play(self, max_asks: int = 1 << 40, by_seat: bool = False):
        """The compiled CPUs play every live game on, in one call, until it ends, reaches
        ``max_asks`` asks, or a seat no compiled CPU plays is to move. Returns the number
        of asks made, or with ``by_seat`` an [N, P] array of the asks each seat made."""
        batch = self.batch
        decisions = np.zeros((batch.num_games, batch.players), np.int64)
        play_out(
            batch.kernel_state,
            batch.kernel_constants,
            self.kernel_state,
            ~batch.state.over,
            max_asks,
            decisions,
        )
        return decisions if by_seat else int(decisions.sum())


def cards_of(counts: np.ndarray) -> list[str]:
    """A hand's cards as strings from its count of each card index, sorted."""
    return index_strings(np.repeat(np.arange(len(counts)), counts).tolist())


def suits_not_kept() -> list[str]:
    raise ValueError(
        "own_cards: under rank asks the vector engine keeps how many cards of each rank a hand "
        "holds, not their suits; read own_counts"
    )


class ArrayView:
    """A ``PlayerView`` of one seat of one game, built from the batch's arrays, for
    players that are not compiled (``master``, saved agents, callables)."""

    def __init__(self, batch: VectorGame):
        if not batch.knowledge:
            raise ValueError(
                "batch: made with knowledge=False; players that decide from a PlayerView "
                "need the public knowledge (make the batch with knowledge=True)"
            )
        self.batch = batch
        self.codec = ActionCodec(batch.rules)

    def view(self, game: int, seat: int) -> PlayerView:
        batch, S = self.batch, self.batch.state
        rules = batch.rules
        known = PublicKnowledge(rules)
        known.least, known.most = S.least[game].copy(), S.most[game].copy()
        known.sure_hit_most = S.sure[game].copy()
        known.skips_sure_hits = S.skips[game].copy()
        known.unlaid = S.unlaid[game].copy()
        if known.card_asks:
            known.known_holds = S.known_holds[game].copy()
            known.known_lacks = S.known_lacks[game].copy()
            known.card_laid = S.laid_cards[game].copy()
        known.laid = known.copies - known.unlaid
        known.hand_sizes = S.sizes[game].tolist()
        known.pool_size = int(S.pool_len[game])
        known.out = S.out[game].tolist()
        known.points = S.points[game].tolist()
        known.catches = [
            [rank for rank in range(rules.ranks) for _ in range(S.caught[game, s, rank])]
            for s in range(rules.players)
        ]
        known.asks = self._asks(game)
        current = int(S.current[game])
        legal: tuple = ()
        if current == seat:
            mask = batch.legal_mask_of(game)
            legal = tuple(self.codec.to_ask(seat, int(a)) for a in np.flatnonzero(mask))
        return PlayerView(
            seat=seat,
            rules=rules,
            own_counts=S.counts[game, seat].tolist(),
            hand_sizes=list(known.hand_sizes),
            pool_size=known.pool_size,
            catches=[list(laid) for laid in known.catches],
            points=list(known.points),
            out=list(known.out),
            current_player=None if current < 0 else current,
            legal_asks=legal,
            knowledge=known,
            _own_cards=(
                partial(cards_of, S.cards[game, seat].copy())
                if batch.constants.card_asks
                else suits_not_kept
            ),
            own_card_counts=(
                S.cards[game, seat].astype(np.int64) if batch.constants.card_asks else None
            ),
        )

    def _asks(self, game: int) -> list[AskRecord]:
        S = self.batch.state
        count = int(S.num_asks[game])
        if count > S.log.shape[1]:
            raise RuntimeError(
                f"game {game}: {count} asks, more than the batch's ask log holds "
                f"({S.log.shape[1]}); make the batch with a larger log_size"
            )
        card_asks = self.batch.constants.card_asks
        records = []
        for asker, target, wanted, hit, fished, shown in S.log[game, :count].tolist():
            records.append(
                AskRecord(
                    asker,
                    target,
                    wanted // 4 if card_asks else wanted,
                    wanted if card_asks else None,
                    hit,
                    bool(fished),
                    bool(shown),
                )
            )
        return records

    def turn(self, game: int, seat: int) -> Turn:
        """The ``Turn`` a ``SeatPlayer`` decides with: the view, and the observation and
        mask the envs give that seat."""
        return Turn(
            seat, self.codec, partial(self.view, game, seat), partial(self._obs, game, seat)
        )

    def _obs(self, game: int, seat: int) -> dict[str, np.ndarray]:
        batch = self.batch
        mask = np.zeros(self.codec.size, np.int8)
        if batch.state.current[game] == seat:
            mask = batch.legal_mask_of(game).astype(np.int8)
        return {"observation": batch.observe_game(game, seat), "action_mask": mask}
