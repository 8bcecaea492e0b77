"""Text pictures of a game: one seat's view (other hands hidden) or the whole table."""

from __future__ import annotations

from collections.abc import Sequence

from gofish_env.cards import RANK_NAMES, parse_card
from gofish_env.events import Event
from gofish_env.knowledge import PlayerView


def group_hand(cards: Sequence[str]) -> str:
    """``["7H", "7C", "QS"]`` -> ``"7 x2 (7C 7H)  Q x1 (QS)"``, ranks in order."""
    groups: dict[int, list[str]] = {}
    for card in cards:
        groups.setdefault(parse_card(card)[0], []).append(card)
    return "  ".join(
        f"{RANK_NAMES[rank]} x{len(group)} ({' '.join(group)})"
        for rank, group in sorted(groups.items())
    )


def _seat_line(view: PlayerView, seat: int, label: str) -> str:
    caught = " ".join(RANK_NAMES[rank] for rank in view.catches[seat]) or "-"
    flags = []
    if view.current_player == seat:
        flags.append("to move")
    if view.out[seat]:
        flags.append("out")
    status = f" [{', '.join(flags)}]" if flags else ""
    size = view.hand_sizes[seat]
    return (
        f"  {label:<12} {size:>2} {'card ' if size == 1 else 'cards'}  catches: {caught} "
        f"({view.points[seat]} pts){status}"
    )


def render_view(view: PlayerView, recent: Sequence[Event] = (), title: str = "") -> str:
    """What ``view.seat`` sees: its own hand, every seat's public state, the recent log."""
    lines = [title] if title else []
    lines.append(f"Pool: {view.pool_size} {'card' if view.pool_size == 1 else 'cards'}")
    for k in range(view.players):
        seat = (view.seat + k) % view.players
        label = f"seat {seat} (you)" if seat == view.seat else f"seat {seat}"
        lines.append(_seat_line(view, seat, label))
    lines.append(f"Your hand: {group_hand(view.own_cards) or '(empty)'}")
    if recent:
        lines.append("Recent:")
        lines.extend(f"  {event}" for event in recent)
    return "\n".join(lines)


def render_table(game, recent: int = 6) -> str:
    """The whole table with every hand face up (for debugging and spectators)."""
    lines = [f"Pool: {game.pool_size} cards (top first: {' '.join(game.pool_cards()[:5])} ...)"]
    for seat in range(game.players):
        caught = " ".join(RANK_NAMES[rank] for rank in game.catches(seat)) or "-"
        flags = " [to move]" if game.current_player == seat else ""
        flags += " [out]" if game.is_out(seat) else ""
        lines.append(
            f"  seat {seat}: {group_hand(game.hand(seat)) or '(empty)'}  catches: {caught} "
            f"({game.tiebreak_points(seat)} pts){flags}"
        )
    if recent:
        lines.append("Recent:")
        lines.extend(f"  {event}" for event in game.events[-recent:])
    return "\n".join(lines)
