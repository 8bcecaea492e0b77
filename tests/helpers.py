"""Plain helpers shared by the test modules (fixtures live in conftest.py).

Exact positions for the engine tests, naming only the cards that matter:

``position([["7H 7C QS"], ...], pool_top=["2H"])`` builds a ``Game.from_hands`` position: the
given hands, then a pool that starts with ``pool_top`` and goes on with every card nobody
named, in deck order (2C 2D 2H 2S 3C ... AS, then jokers). With ``rest=seat`` the unnamed
cards become that seat's catches instead (they must make whole sets), the pool is exactly
``pool_top``, and the position is one in play (nothing is laid or drawn before the first ask).

Also: random legal play in the AEC env (``random_action``), rewards after scripted asks
from an exact position (``rewards_after``), and a command's refusal of its arguments
(``usage_error``).
"""

from __future__ import annotations

import random
import signal
from collections import Counter
from collections.abc import Callable, Sequence

import numpy as np
import pytest

import gofish_env
from gofish_env import Game, Rules
from gofish_env.cards import RANK_NAMES, build_deck, card_str, parse_card, parse_rank

Cards = str | Sequence[str]


def cards(spec: Cards) -> list[str]:
    """``"7H 7C QS"`` or ``["7H", "7C", "QS"]`` -> ``["7H", "7C", "QS"]``."""
    return spec.split() if isinstance(spec, str) else list(spec)


def rank(text: str) -> int:
    """Rank index of ``"7"``, ``"Q"``, ``"JK"``..."""
    return parse_rank(text)


def deck_cards(rules: Rules) -> list[str]:
    """Every card of the game as strings, in deck order (two decks: each card twice)."""
    return sorted(
        (card_str(card) for card in build_deck(rules.decks, rules.jokers)), key=_deck_order
    )


def _deck_order(text: str) -> tuple[int, int]:
    card_rank, suit = parse_card(text)
    return card_rank, suit


def position(
    hands: Sequence[Cards],
    pool_top: Cards = (),
    rules: Rules | None = None,
    rest: str | int = "pool",
    first_player: int = 0,
    catches: Sequence[Sequence[str]] | None = None,
) -> Game:
    """A game from an exact position (see the module docstring).

    ``catches`` (rank strings per seat) makes it a position in play; the cards of those ranks
    are taken from the unnamed cards.
    """
    rules = Rules(players=len(hands)) if rules is None else rules
    hand_lists = [cards(hand) for hand in hands]
    top = cards(pool_top)
    unnamed = Counter(deck_cards(rules))
    unnamed.subtract(card for hand in hand_lists for card in hand)
    unnamed.subtract(top)
    bad = sorted(card for card, left in unnamed.items() if left < 0)
    assert not bad, f"named more often than the deck holds them: {bad}"
    laid = [list(seat) for seat in catches] if catches is not None else None
    if laid is not None:
        for seat_catches in laid:
            for name in seat_catches:
                _take_set(unnamed, rank(name), rules.set_size)
    leftover = sorted(unnamed.elements(), key=_deck_order)
    if rest == "pool":
        pool = top + leftover
    else:
        assert isinstance(rest, int) and 0 <= rest < rules.players, f"rest: {rest!r}"
        per_rank = Counter(parse_card(card)[0] for card in leftover)
        odd = [RANK_NAMES[r] for r, count in per_rank.items() if count % rules.set_size]
        assert not odd, f"unnamed cards do not make whole sets of {odd}"
        if laid is None:
            laid = [[] for _ in range(rules.players)]
        for r, count in sorted(per_rank.items()):
            laid[rest] += [RANK_NAMES[r]] * (count // rules.set_size)
        pool = top
    return Game.from_hands(hand_lists, pool, rules=rules, first_player=first_player, catches=laid)


def _take_set(unnamed: Counter, rank_index: int, set_size: int) -> None:
    for _ in range(set_size):
        card = next(
            (c for c in sorted(unnamed, key=_deck_order) if unnamed[c] > 0 and _r(c) == rank_index),
            None,
        )
        assert card is not None, f"no cards left for a catch of {RANK_NAMES[rank_index]}"
        unnamed[card] -= 1


def _r(card: str) -> int:
    return parse_card(card)[0]


def dealt(rules: Rules, seed: int) -> tuple[list[list[str]], list[str], int]:
    """The hands (in the order dealt), pool (top first) and first player of
    ``Game(rules, seed)`` before anything is laid: the engine shuffles ``build_deck`` with
    ``random.Random(seed)``, picks a random first player after the shuffle, and deals from the
    top (the end of the shuffled list) one card at a time from the first player."""
    rng = random.Random(seed)
    deck = build_deck(rules.decks, rules.jokers)
    rng.shuffle(deck)
    if rules.first_player == "random":
        first = rng.randrange(rules.players)
    elif rules.first_player == "dealer_left":
        first = 0
    else:
        first = rules.first_player
    top_first = [card_str(card) for card in reversed(deck)]
    count = len(deck) if rules.deal == "whole_deck" else rules.hand_size * rules.players
    hands: list[list[str]] = [[] for _ in range(rules.players)]
    for i, card in enumerate(top_first[:count]):
        hands[(first + i) % rules.players].append(card)
    return hands, top_first[count:], first


def plain_infos(infos: dict) -> dict:
    """Infos with their arrays as lists, to compare with ``==``."""
    return {
        agent: {key: getattr(value, "tolist", lambda v=value: v)() for key, value in info.items()}
        for agent, info in infos.items()
    }


def snapshot(game: Game, events_tail: int | None = None) -> tuple:
    """Everything observable about a game, to check that a refused ask changed nothing.
    With ``events_tail`` the log is its length and last few events, not a full copy."""
    seats = range(game.players)
    if events_tail is None:
        log = game.events
    else:
        log = (game.num_events, game.events_since(max(0, game.num_events - events_tail)))
    return (
        [game.hand(seat) for seat in seats],
        game.pool_cards(),
        [game.catches(seat) for seat in seats],
        [game.is_out(seat) for seat in seats],
        game.current_player,
        game.is_over,
        game.winners,
        game.num_asks,
        log,
        game.legal_asks(),
    )


# ----------------------------------------------------------------------------- the AEC env

TABLE_POINTS = 104  # 2 + 3 + ... + 14: every catch of one deck


def preset(name: str, players: int = 4) -> Rules:
    """A preset by name; ``pairs_jokers`` is the pairs game with its two jokers."""
    if name == "pairs_jokers":
        return Rules.preset("pairs", jokers=True, players=players)
    return Rules.preset(name, players=players)


def mask_of(env, agent: str | None = None) -> np.ndarray:
    return env.observe(agent or env.agent_selection)["action_mask"]


def random_action(env, rng: random.Random) -> int:
    return int(rng.choice(np.flatnonzero(mask_of(env))))


def first_legal(observation, action_mask):
    """A policy of (observation, action_mask): the lowest legal action."""
    return int(np.flatnonzero(action_mask)[0])


def rewards_after(game: Game, reward, actions: list[tuple[int, int]]):
    """(env.rewards, infos) after playing ``actions`` as (target, rank) asks of the seat to
    move, from the exact position ``game``."""
    env = gofish_env.raw_env(rules=game.rules, reward=reward)
    env.reset(options={"game": game})
    for target, what in actions:
        seat = env.game.current_player
        env.step(env.codec.to_action(seat, target, what))
    return env


# ----------------------------------------------------------------------------- commands

# How a saved 4-player agent (the ``agents`` fixture) is refused at a 3-player table.
MISMATCH_4_TO_3 = "was trained for 4 players under table rules; this table is 3 players"


def usage_error(capsys, main: Callable, argv: list[str]) -> str:
    """Run a command's ``main(argv)``, expect exit code 2; the one error line it printed."""
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if ": error: " in line]
    assert len(lines) == 1, err
    assert err.startswith("usage: ")
    return lines[0].split(": error: ", 1)[1]


def ctrl_c_reaches_it() -> None:
    """``preexec_fn`` for a child process that a test stops with SIGINT (Ctrl-C). A child
    started from a background shell (as CI runs the tests) inherits SIGINT ignored, and
    Python then sets no KeyboardInterrupt handler; a terminal gives it the default."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def recorded_progress_bars(monkeypatch, module) -> list:
    """The ``progress`` argument of each ``progress_bar`` that ``module`` opens from now on."""
    bars = []
    real = module.progress_bar

    def recorded(progress, *args, **kwargs):
        bars.append(progress)
        return real(progress, *args, **kwargs)

    monkeypatch.setattr(module, "progress_bar", recorded)
    return bars
