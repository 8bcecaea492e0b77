"""The observation vector: its layout, declared once, and the encoder that fills it.

Every section is a named block of a flat float32 vector with values in [0, 1]. Seats are
relative to the viewer: index 0 is the viewer, 1 the seat to its left, and so on. The env
docstring and docs/observation.md print ``ObservationLayout.markdown()``, so the docs are
generated from this declaration and cannot drift from it.

    python -m gofish_env.observation > docs/observation.md
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gofish_env.cards import RANK_POINTS
from gofish_env.events import Ask, Catch, Deal, Draw, GoFish, Hit, Out
from gofish_env.knowledge import PlayerView, PublicKnowledge
from gofish_env.rules import Rules

DEFAULT_HISTORY = 8


@dataclass(frozen=True)
class Section:
    name: str
    shape: tuple[int, ...]
    meaning: str
    start: int
    stop: int

    @property
    def size(self) -> int:
        return self.stop - self.start


class ObservationLayout:
    """Named sections of the observation for given rules and history length."""

    def __init__(self, rules: Rules, history: int = DEFAULT_HISTORY):
        if isinstance(history, bool) or not isinstance(history, int) or history < 0:
            raise ValueError(f"history: got {history!r}; allowed: an integer >= 0")
        players, ranks, asks = rules.players, rules.ranks, rules.ask_count
        self.rules = rules
        self.history = history
        self.max_held = rules.set_size - 1
        self.max_hand = sum(min(rules.copies_of(r), self.max_held) for r in range(ranks))
        self.max_points = sum(
            RANK_POINTS[r] * (rules.copies_of(r) // rules.set_size) for r in range(ranks)
        )
        self.max_catches_of_rank = max(rules.copies_of(r) // rules.set_size for r in range(ranks))
        ask_row = 1 + players + players + asks + 3
        what = "card" if rules.ask_for == "card" else "rank"
        declared = [
            ("own_hand", (ranks,), f"cards of each rank in your hand / {self.max_held}"),
            ("hand_sizes", (players,), f"cards in each seat's hand / {self.max_hand}"),
            ("catch_counts", (players,), f"catches each seat has laid / {rules.total_sets}"),
            (
                "tiebreak_points",
                (players,),
                f"tiebreak points of each seat's catches / {self.max_points}",
            ),
            (
                "caught_ranks",
                (players, ranks),
                f"catches of each rank each seat has laid / {self.max_catches_of_rank}",
            ),
            ("out", (players,), "1 if the seat is out (no cards, empty pool)"),
            ("to_move", (players,), "1 for the seat to move"),
            ("pool_size", (1,), f"cards in the pool / {rules.deck_size}"),
            (
                "least_held",
                (players - 1, ranks),
                f"fewest cards of each rank each opponent can hold / {self.max_held}",
            ),
            (
                "most_held",
                (players - 1, ranks),
                f"most cards of each rank each opponent can hold / {self.max_held}",
            ),
            ("known_none", (players - 1, ranks), "1 if the opponent is known to hold none"),
            (
                "recent_asks",
                (history, ask_row),
                f"last {history} asks, newest first: present, asker (one-hot over {players} "
                f"seats), target (one-hot), {what} (one-hot over {asks}), cards handed over "
                f"/ {self.max_held}, went fishing, fished card shown",
            ),
        ]
        self.sections: dict[str, Section] = {}
        start = 0
        for name, shape, meaning in declared:
            stop = start + int(np.prod(shape))
            self.sections[name] = Section(name, shape, meaning, start, stop)
            start = stop
        self.size = start

    def __getitem__(self, name: str) -> Section:
        return self.sections[name]

    def markdown(self) -> str:
        """The layout as a markdown table (index ranges are half-open)."""
        lines = [
            "| section | indices | shape | meaning |",
            "|---|---|---|---|",
        ]
        for section in self.sections.values():
            shape = " x ".join(map(str, section.shape))
            lines.append(
                f"| `{section.name}` | {section.start}..{section.stop - 1} | {shape} "
                f"| {section.meaning} |"
            )
        lines.append(f"| total | {self.size} | | |")
        return "\n".join(lines)

    def split(self, observation: np.ndarray) -> dict[str, np.ndarray]:
        """The observation cut into its named sections, each in its declared shape."""
        return {
            name: observation[s.start : s.stop].reshape(s.shape)
            for name, s in self.sections.items()
        }


def encode(view: PlayerView, layout: ObservationLayout) -> np.ndarray:
    """Encode what ``view.seat`` may know as the layout's float32 vector."""
    rules = layout.rules
    players = rules.players
    seat = view.seat
    order = [(seat + k) % players for k in range(players)]
    out = np.zeros(layout.size, dtype=np.float32)
    sec = layout.sections

    def put(name: str, values) -> None:
        section = sec[name]
        out[section.start : section.stop] = np.asarray(values, dtype=np.float32).ravel()

    put("own_hand", np.asarray(view.own_counts) / layout.max_held)
    put("hand_sizes", [view.hand_sizes[s] / layout.max_hand for s in order])
    put("catch_counts", [len(view.catches[s]) / rules.total_sets for s in order])
    put("tiebreak_points", [view.points[s] / layout.max_points for s in order])
    caught = np.zeros((players, rules.ranks), dtype=np.float32)
    for row, s in enumerate(order):
        for rank in view.catches[s]:
            caught[row, rank] += 1
    put("caught_ranks", caught / layout.max_catches_of_rank)
    put("out", [view.out[s] for s in order])
    put("to_move", [s == view.current_player for s in order])
    put("pool_size", [view.pool_size / rules.deck_size])
    opponents = order[1:]
    least, most = view.least[opponents], view.most[opponents]
    put("least_held", least / layout.max_held)
    put("most_held", most / layout.max_held)
    put("known_none", most == 0)
    if layout.history:
        section = sec["recent_asks"]
        width = section.shape[1]
        relative = {s: k for k, s in enumerate(order)}
        asks_base = 1 + 2 * players
        for row, record in enumerate(reversed(view.asks[-layout.history :])):
            base = section.start + row * width
            what = record.card if record.card is not None else record.rank
            out[base] = 1.0
            out[base + 1 + relative[record.asker]] = 1.0
            out[base + 1 + players + relative[record.target]] = 1.0
            out[base + asks_base + what] = 1.0
            tail = base + asks_base + rules.ask_count
            out[tail] = record.hit / layout.max_held
            out[tail + 1] = float(record.fished)
            out[tail + 2] = float(record.shown)
    return out


class ObservationEncoder:
    """The fast path used by the environments; gives exactly what ``encode`` gives.

    The public part of every seat's observation is kept current event by event in one
    buffer laid out by absolute seat, so a seat's observation is a single gather from it
    after writing the viewer's own hand and knowledge bounds (nothing is re-encoded that has
    not changed). It reads only public events and, per call, the viewer's own hand.
    """

    def __init__(self, layout: ObservationLayout, public: PublicKnowledge):
        rules = layout.rules
        players, ranks, asks, history = rules.players, rules.ranks, rules.ask_count, layout.history
        self.layout = layout
        self.public = public
        self.players = players
        self.asks = asks
        self.set_size = rules.set_size
        # Divisions as in ``encode``, so both give the same float32 values bit for bit.
        self.max_held = layout.max_held
        self.max_hand = layout.max_hand
        self.total_sets = rules.total_sets
        self.max_points = layout.max_points
        self.max_rank_catches = layout.max_catches_of_rank
        self.deck_size = rules.deck_size
        self.row = 1 + 2 * players + asks + 3
        size = 0

        def slots(*shape: int) -> np.ndarray:
            nonlocal size
            count = int(np.prod(shape))
            block = np.arange(size, size + count).reshape(shape)
            size += count
            return block

        self.own = slots(ranks)
        self.hand = slots(players)
        self.catch = slots(players)
        self.points = slots(players)
        self.caught = slots(players, ranks)
        self.out = slots(players)
        self.to_move = slots(players)
        self.pool = slots(1)
        self.least = slots(players, ranks)
        self.most = slots(players, ranks)
        self.none = slots(players, ranks)
        history_slots = slots(history, self.row)
        self.history_start = int(history_slots.flat[0]) if history else size
        self.buffer = np.zeros(size, np.float32)
        self.history_rows = self.buffer[self.history_start : size].reshape(history, self.row)
        self.gather = [self._gather(seat, history_slots) for seat in range(players)]
        # Contiguous blocks are written through slices, cheaper than index arrays.
        self.hand_slice = _as_slice(self.hand)
        sections = layout.sections
        self.own_slice = slice(sections["own_hand"].start, sections["own_hand"].stop)
        self.to_move_start = sections["to_move"].start
        assert sections["least_held"].stop == sections["most_held"].start
        self.bounds_slice = slice(sections["least_held"].start, sections["most_held"].stop)
        self.none_slice = slice(sections["known_none"].start, sections["known_none"].stop)
        self.num_events = 0

    def _gather(self, seat: int, history_slots: np.ndarray) -> np.ndarray:
        """For each position of ``seat``'s observation, its slot in the buffer."""
        players = self.players
        order = [(seat + k) % players for k in range(players)]
        opponents = order[1:]
        # History rows hold absolute seats; the viewer sees them relative to itself.
        columns = [0, *(1 + s for s in order), *(1 + players + s for s in order)]
        columns += list(range(1 + 2 * players, self.row))
        parts = [
            self.own,
            self.hand[order],
            self.catch[order],
            self.points[order],
            self.caught[order],
            self.out[order],
            self.to_move[order],
            self.pool,
            self.least[opponents],
            self.most[opponents],
            self.none[opponents],
            history_slots[:, columns],
        ]
        gather = np.concatenate([part.ravel() for part in parts])
        assert gather.size == self.layout.size
        return gather

    def attach(self, public: PublicKnowledge) -> None:
        """Start over for a new game whose knowledge is ``public`` (the index tables are
        kept: they depend only on the layout)."""
        self.public = public
        self.buffer[:] = 0.0
        self.num_events = 0

    def __getstate__(self) -> dict:
        # ``history_rows`` is a view into ``buffer``; a copy (pickle, deepcopy) would carry a
        # detached array and stop updating the history. Rebuilt over the copied buffer.
        state = self.__dict__.copy()
        del state["history_rows"]
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self.history_rows = self.buffer[self.history_start :].reshape(self.layout.history, self.row)

    def update(self, events) -> None:
        """Fold in new public events (after ``public`` has taken them)."""
        buffer = self.buffer
        rows = self.history_rows
        for event in events:
            kind = type(event)
            if kind is Ask:
                if len(rows):
                    rows[1:] = rows[:-1]
                    row = rows[0]
                    row[:] = 0.0
                    row[0] = 1.0
                    row[1 + event.asker] = 1.0
                    row[1 + self.players + event.target] = 1.0
                    what = event.rank if event.card is None else event.card
                    row[1 + 2 * self.players + what] = 1.0
            elif kind is Hit:
                if len(rows):
                    rows[0, -3] = event.count / self.max_held
            elif kind is GoFish:
                if len(rows):
                    rows[0, -2] = 1.0
            elif kind is Draw:
                if event.rank is not None and len(rows):
                    rows[0, -1] = 1.0
            elif kind is Catch:
                self._write_catches(event.seat)
            elif kind is Out:
                buffer[self.out[event.seat]] = 1.0
            elif kind is Deal:
                buffer[:] = 0.0
                for seat in range(self.players):
                    self._write_catches(seat)
                for seat in range(self.players):
                    if not event.hand_sizes[seat] and not event.pool_size:
                        buffer[self.out[seat]] = 1.0
        public = self.public
        buffer[self.hand_slice] = np.array(public.hand_sizes) / self.max_hand
        buffer[self.pool[0]] = public.pool_size / self.deck_size
        self.num_events += len(events)

    def _write_catches(self, seat: int) -> None:
        public, buffer = self.public, self.buffer
        laid = public.catches[seat]
        buffer[self.catch[seat]] = len(laid) / self.total_sets
        buffer[self.points[seat]] = public.points[seat] / self.max_points
        counts = np.bincount(laid, minlength=public.ranks) if laid else 0
        buffer[self.caught[seat]] = np.asarray(counts, np.float32) / self.max_rank_catches

    def observe(self, seat: int, own_counts, current_player: int | None) -> np.ndarray:
        """``seat``'s observation vector (a new array)."""
        # The viewer's own parts are written straight into its (relative) observation; their
        # slots in the shared buffer stay zero.
        obs = self.buffer[self.gather[seat]]
        own = np.array(own_counts)
        obs[self.own_slice] = own / self.max_held
        if current_player is not None:
            obs[self.to_move_start + (current_player - seat) % self.players] = 1.0
        low, high = self.public.opponent_bounds(seat, own)
        # least_held and most_held are adjacent sections: one division fills both.
        obs[self.bounds_slice] = np.concatenate((low, high), axis=None) / self.max_held
        obs[self.none_slice] = (high == 0).ravel()
        return obs


def _as_slice(slots: np.ndarray) -> slice:
    return slice(int(slots.flat[0]), int(slots.flat[-1]) + 1)


def observation_doc() -> str:
    """docs/observation.md, generated from the layout declaration."""
    default = ObservationLayout(Rules(), DEFAULT_HISTORY)
    parts = [
        "# Observation layout",
        "",
        "Generated by `python -m gofish_env.observation > docs/observation.md` from the",
        "declaration in `gofish_env/observation.py`; a test checks this file matches it.",
        "",
        '`obs["observation"]` is a float32 vector with values in [0, 1]. Seats are relative to',
        "the viewer: row 0 is the viewer, row 1 the seat to its left, and so on; opponent rows",
        'start at the viewer\'s left. `obs["action_mask"]` is an int8 vector with a 1 for each',
        "legal action of the seat to move (all zeros for every other seat).",
        "",
        "The least / most / known-none bounds come from `gofish_env.knowledge`: public events",
        "plus the viewer's own hand, nothing else.",
        "",
        f"## Default: table rules, 4 players, history={DEFAULT_HISTORY}",
        "",
        default.markdown(),
        "",
        "The sizes scale with the rules: P players, R ranks (13, or 14 with jokers), A asks",
        "(R, or 52/53 cards with exact-card asks) and history K give",
        "R + 3P + P*R + 2P + 1 + 3(P-1)R + K(1 + 2P + A + 3) values.",
        "",
    ]
    for players in (2, 3, 5, 6):
        layout = ObservationLayout(Rules(players=players), DEFAULT_HISTORY)
        parts.append(f"- table rules, {players} players: {layout.size} values")
    for preset in ("pairs", "two_decks", "authors"):
        layout = ObservationLayout(Rules.preset(preset), DEFAULT_HISTORY)
        parts.append(f"- `{preset}` preset, 4 players: {layout.size} values")
    jokers = ObservationLayout(Rules.preset("pairs", jokers=True), DEFAULT_HISTORY)
    parts.append(f"- `pairs` with jokers, 4 players: {jokers.size} values")
    parts.append("")
    return "\n".join(parts)


if __name__ == "__main__":
    print(observation_doc(), end="")
