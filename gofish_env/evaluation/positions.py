"""The decisions of a game played by CPUs, one at a time: positions for benchmarks."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from gofish_env.cpus import CPU, LegalAsk
from gofish_env.game import Game
from gofish_env.knowledge import KnowledgeTracker, PlayerView
from gofish_env.rules import Rules


def played_decisions(
    rules: Rules, seed: int, cpus: Sequence[CPU]
) -> Iterator[tuple[Game, PlayerView, LegalAsk]]:
    """(game, view, ask) at every decision of the game dealt by ``seed`` and played by
    ``cpus`` (one a seat): the view of the seat to move and the ask its CPU chose, made
    when the caller asks for the next decision (a view reads the live public log, so each
    is used before the game goes on)."""
    game = Game(rules, seed=seed)
    tracker = KnowledgeTracker(game)
    while not game.is_over:
        view = tracker.view(game.current_player)
        ask = cpus[view.seat].choose(view)
        yield game, view, ask
        game.ask(*ask)
