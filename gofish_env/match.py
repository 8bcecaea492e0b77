"""Match play: successive games to a target score, 1 point a catch (``Rules.match_target``).

A ``Match`` has the same surface as a ``Game`` (``current_player``, ``legal_asks()``,
``ask()``, ``hand()``, ``events``, ...), so an environment can drive either; ``new_game``
picks the one the rules call for. Each game is dealt from a seed drawn from the match's own
``random.Random(seed)``, so the same seed replays the same match. The first player moves one
seat to the left each game. After each game every seat's catches are added to its score; the
match is over after the game in which some seat's score reaches the target, and the winners
are the seats with the top score (several share the win on a tie).
"""

from __future__ import annotations

from gofish_env.events import Event
from gofish_env.game import Game, IllegalAsk
from gofish_env.rules import Rules, seeded_random

# Seeds of the games in a match are drawn from this many bits of the match's generator.
_SEED_BITS = 64


class Match:
    """Games of Go Fish until a seat's total catches reach ``rules.match_target``.

    With ``match_target=0`` (one game) the match is that single game and its winners are the
    game's winners, decided by ``rules.winner``. Otherwise the winners are the seats with the
    most points over the match, shared on a tie; ``rules.winner`` only decides each game's own
    ``GameOver`` event (and, with ``"first_empty"``, when a game ends).
    """

    def __init__(self, rules: Rules | None = None, seed: int | None = None):
        rules = Rules() if rules is None else rules
        self.rules = rules
        self._players = rules.players
        self._target = rules.match_target
        self._rng = seeded_random(seed)
        self._first = rules.first_seat(self._rng)
        self._scores = [0] * rules.players
        self._results: list[tuple[int, ...]] = []
        self._games_played = 0
        self._asks_before = 0  # asks in the finished games
        self._over = False
        self._winners: tuple[int, ...] = ()
        self._events: list[Event] = []
        self._games: list[Game] = []
        self._deal()

    # ------------------------------------------------------------------ games

    def _deal(self) -> list[Event]:
        """Deal the next game (and the ones after it, should a game end in its deal); return
        the events of every game dealt."""
        new_events: list[Event] = []
        while True:
            first = (self._first + self._games_played) % self._players
            game = Game(
                self.rules.replace(first_player=first), seed=self._rng.getrandbits(_SEED_BITS)
            )
            self.game = game
            self._games.append(game)
            opening = game.events
            self._events += opening
            new_events += opening
            if not game.is_over or self._finish_game():
                return new_events

    def _finish_game(self) -> bool:
        """Score the game just ended; True when that ends the match."""
        game = self.game
        catches = tuple(len(game.catches(seat)) for seat in range(self._players))
        self._results.append(catches)
        self._games_played += 1
        self._asks_before += game.num_asks
        scores = self._scores
        for seat, count in enumerate(catches):
            scores[seat] += count
        best = max(scores)
        if self._target == 0:
            self._over = True
            self._winners = game.winners
        elif best >= self._target:
            self._over = True
            self._winners = tuple(seat for seat in range(self._players) if scores[seat] == best)
        return self._over

    # ------------------------------------------------------------------ asking

    def ask(self, target: int, wanted: int | str) -> list[Event]:
        """Apply one ask in the current game (see ``Game.ask``). When it ends the game and the
        match goes on, the next game is dealt at once and its opening events are returned too.
        Raises ``IllegalAsk`` (nothing changes) when the rules refuse the ask."""
        if self._over:
            raise IllegalAsk("the match is over: no more asks")
        events = self.game.ask(target, wanted)
        self._events += events
        if self.game.is_over and not self._finish_game():
            events += self._deal()
        return events

    def legal_asks(self) -> tuple[tuple[int, int], ...]:
        """The current game's legal asks; empty when the match is over."""
        return () if self._over else self.game.legal_asks()

    # ------------------------------------------------------------------ match view

    @property
    def players(self) -> int:
        return self._players

    @property
    def current_player(self) -> int | None:
        """The seat to move, or None when the match is over."""
        return None if self._over else self.game.current_player

    @property
    def is_over(self) -> bool:
        return self._over

    @property
    def winners(self) -> tuple[int, ...]:
        """The seats with the top score (several on a tie); empty while in play."""
        return self._winners

    @property
    def scores(self) -> tuple[int, ...]:
        """Each seat's catches summed over the finished games."""
        return tuple(self._scores)

    @property
    def games_played(self) -> int:
        """Games finished so far (the one in play is not counted)."""
        return self._games_played

    @property
    def games(self) -> tuple[Game, ...]:
        """Every game dealt so far, the one in play last (a replay is made of one game:
        ``Replay.from_game(match.games[i])``)."""
        return tuple(self._games)

    @property
    def results(self) -> tuple[tuple[int, ...], ...]:
        """Each finished game's catches per seat, oldest first."""
        return tuple(self._results)

    @property
    def num_asks(self) -> int:
        """Asks over the whole match."""
        return self._asks_before + (0 if self._over else self.game.num_asks)

    @property
    def events(self) -> list[Event]:
        """The public event log of the whole match, oldest first (a copy); each game starts
        with its ``Deal`` event and ends with its ``GameOver`` event."""
        return list(self._events)

    @property
    def num_events(self) -> int:
        return len(self._events)

    def events_since(self, start: int) -> list[Event]:
        return self._events[start:]

    # ------------------------------------------------------------------ current game view

    @property
    def pool_size(self) -> int:
        return self.game.pool_size

    def hand(self, seat: int) -> list[str]:
        return self.game.hand(seat)

    def hand_indices(self, seat: int) -> list[int]:
        return self.game.hand_indices(seat)

    def hand_card_counts(self, seat: int) -> list[int]:
        return self.game.hand_card_counts(seat)

    def hand_counts(self, seat: int) -> list[int]:
        return self.game.hand_counts(seat)

    def hand_size(self, seat: int) -> int:
        return self.game.hand_size(seat)

    def hand_sizes(self) -> tuple[int, ...]:
        return self.game.hand_sizes()

    def catches(self, seat: int) -> list[int]:
        """Ranks the seat has caught in the current game."""
        return self.game.catches(seat)

    def tiebreak_points(self, seat: int) -> int:
        """Points of the seat's catches in the current game."""
        return self.game.tiebreak_points(seat)

    def is_out(self, seat: int) -> bool:
        return self.game.is_out(seat)

    @property
    def laid_cards(self) -> frozenset[int]:
        return self.game.laid_cards

    def pool_cards(self) -> list[str]:
        """The current game's pool, top first. Private information: for tests and debugging."""
        return self.game.pool_cards()

    def pool_indices(self) -> list[int]:
        """The current game's pool as sorted card indices. Private information."""
        return self.game.pool_indices()

    def pool_counts(self) -> list[int]:
        """The current game's pool by rank. Private information."""
        return self.game.pool_counts()


def new_game(rules: Rules | None = None, seed: int | None = None) -> Game | Match:
    """A ``Match`` when ``rules.match_target`` is set, otherwise a single ``Game``."""
    rules = Rules() if rules is None else rules
    if rules.match_target:
        return Match(rules, seed)
    return Game(rules, seed)
