"""Play Go Fish in the terminal: one person against CPUs, or several sharing the keyboard.

    gofish-play --players 4 --cpus hard --rules table --seed 7
    gofish-play --players 4 --humans 2 --cpus easy,model:runs/ppo.zip

At your turn type a seat and a rank: ``2 q`` (or ``ask 2 q``, ``ask seat 2 for queens``,
``2 10``); with exact-card asks a card: ``2 QH``. ``help`` lists the commands and what you may
ask now, ``quit`` (or the end of the input) leaves, and so does Ctrl-C, at any
moment (exit status 130). With ``--humans N`` (pass-and-play) the screen is cleared after
each person's turn and the next hand is shown only once its player presses Enter.

Everything a seat is shown comes from its ``PlayerView`` (``render_view``): its own hand and
public information. Every CPU seat is a ``SeatPlayer`` (``gofish_env.players``) given its
seat's ``Turn``: the CPUs decide from the seat's view, ``model:PATH.zip`` seats from its
observation and action mask.
Input and output are injectable: ``main(argv, input_fn=input, output=print)``.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from gofish_env.actions import ActionCodec
from gofish_env.cards import RANK_NAMES, card_from_index, card_str, parse_card, parse_rank
from gofish_env.cli import HelpFormatter, check_seed, rules_or_error
from gofish_env.cpus import CPU_LEVELS, make_cpu
from gofish_env.events import Draw, Event, GameOver
from gofish_env.game import Game, IllegalAsk
from gofish_env.knowledge import KnowledgeTracker
from gofish_env.observation import ObservationLayout
from gofish_env.players import (
    MODEL_PREFIX,
    SeatPlayer,
    Turn,
    make_player,
    player_label,
    tracked_turn,
)
from gofish_env.render import render_view
from gofish_env.replay import drawn_cards
from gofish_env.rules import Rules, rules_name

HUMAN = "human"
DEFAULT_CPU = "hard"
CLEAR_SCREEN = "\033[2J\033[H"
SCROLL_LINES = 40
RECENT_SINGLE = 8  # log lines shown with the hand when one person plays (CPU moves print live)
RECENT_SHARED = 40  # pass-and-play: everything since that person's last turn, up to this many
INTERRUPTED = "Interrupted. The game is abandoned."  # Ctrl-C: exit status 130
# Printed before a game with a master CPU: its search's kernels (numba) compile on their
# first use after an install, for up to a minute, with nothing on screen meanwhile.
MASTER_NOTE = (
    "The master CPU compiles its search on first use (after an install or an update); "
    "its first move can then take up to a minute."
)
MAX_DELAY = 60.0  # seconds: --delay (time.sleep overflows on a huge one)
_FILLER = {"ask", "seat", "player", "for", "the", "a", "an", "any", "your", "some", "please"}

HELP = """Commands:
  2 q          ask seat 2 for queens (also: ask 2 q, ask seat 2 for queens, 2 10, 2 jacks)
  q            with one other player left to ask, just the rank
  hand         show your hand and the table again
  log          the whole public log of the game
  help         this help
  quit         leave the game
Ranks: 2 3 4 5 6 7 8 9 10 J Q K A. You may only ask for a rank you hold,
and only a player who holds cards."""

# With exact-card asks (the authors rules) a card is asked for, never a rank or a rank word.
HELP_CARDS = """Commands:
  2 QH         ask seat 2 for the queen of hearts (also: ask 2 QH, ask seat 2 for 10S, 2 qh)
  QH           with one other player left to ask, just the card
  hand         show your hand and the table again
  log          the whole public log of the game
  help         this help
  quit         leave the game
A card is a rank and a suit. Ranks: 2 3 4 5 6 7 8 9 10 J Q K A. Suits: C D H S.
You may only ask for a card of a rank you hold, and only a player who holds cards."""


class QuitGame(Exception):
    """The person at the keyboard left (``quit`` or the end of the input). A Ctrl-C is not
    a ``QuitGame``: it comes out of ``TerminalGame.run`` as ``KeyboardInterrupt``."""


def seat_player(spec: Any, seed: int | None, rules: Rules | None = None) -> tuple[str, SeatPlayer]:
    """(label, player) for a CPU seat: a CPU level name, or anything else ``make_player``
    accepts (``model:PATH.zip``, a loaded model, a callable, a CPU object). With the
    table's ``rules``, a saved model trained for another table raises ``AgentFileError``."""
    is_level = isinstance(spec, str) and spec in CPU_LEVELS
    player = make_player(make_cpu(spec, seed) if is_level else spec, rules)
    player.reset(seed)
    return player_label(spec), player


class TerminalGame:
    """One game at the terminal. ``players[seat]`` is ``HUMAN`` or a CPU spec."""

    def __init__(
        self,
        game: Game,
        players: Sequence[Any],
        input_fn: Callable[[str], str] = input,
        output: Callable[[str], None] = print,
        clear: Callable[[], None] | None = None,
        seed: int | None = None,
        delay: float = 0.0,
    ):
        if len(players) != game.players:
            raise ValueError(f"players: {len(players)} given for {game.players} seats")
        self.game = game
        self.rules = game.rules
        self.tracker = KnowledgeTracker(game)
        self.codec = ActionCodec(game.rules)
        self.layout = ObservationLayout(game.rules)
        self.input_fn = input_fn
        self.out = output
        self.clear = clear or self._default_clear
        self.delay = delay
        self.humans = [seat for seat, spec in enumerate(players) if spec == HUMAN]
        self.shared = len(self.humans) > 1
        self.labels: dict[int, str] = {}
        self.players: dict[int, SeatPlayer] = {}
        for seat, spec in enumerate(players):
            if spec == HUMAN:
                self.labels[seat] = (
                    f"player {self.humans.index(seat) + 1}" if self.shared else "you"
                )
            else:
                cpu_seed = None if seed is None else random.Random(f"{seed}:{seat}").getrandbits(63)
                self.labels[seat], self.players[seat] = seat_player(spec, cpu_seed, self.rules)
        # The seat whose hand may be shown now (the one person, or whoever has the keyboard).
        self.at_keyboard: int | None = None if self.shared else (self.humans or [None])[0]
        self.seen = dict.fromkeys(self.humans, 0)  # each person's place in the log

    # ------------------------------------------------------------------ the game

    def run(self) -> tuple[int, ...] | None:
        """Play to the end; the winners, or None when someone quits. A Ctrl-C, at a prompt
        or during the CPUs' moves, is raised to the caller (``KeyboardInterrupt``)."""
        game = self.game
        self.out(self._intro())
        self._print_events(game.events)
        try:
            while not game.is_over:
                seat = game.current_player
                if seat in self.players:
                    self._cpu_turn(seat)
                else:
                    self._human_turn(seat)
        except QuitGame as reason:
            self.out(f"{reason} The game is abandoned.")
            return None
        self.out(self._result())
        return game.winners

    def _intro(self) -> str:
        seats = ", ".join(f"seat {seat}: {self.labels[seat]}" for seat in range(self.game.players))
        rules = rules_name(self.rules)  # "bicycle rules", or the fields that differ
        lines = [
            f"Go Fish: {self.game.players} players, {rules}.",
            f"Seats: {seats}.",
            "Type help for the commands.",
        ]
        if self.shared:
            lines.append("Pass-and-play: each hand is shown only to its player; look away!")
        return "\n".join(lines)

    def _cpu_turn(self, seat: int) -> None:
        if self.delay > 0:
            time.sleep(self.delay)
        action = self.players[seat].act(self.turn(seat))
        self._ask(*self.codec.to_ask(seat, action))

    def turn(self, seat: int) -> Turn:
        """The seat's ``Turn``, made from its ``PlayerView`` (and, for a player that reads
        them, the observation and mask the environments would give it)."""
        return tracked_turn(self.tracker, self.codec, self.layout, seat)

    def _human_turn(self, seat: int) -> None:
        game = self.game
        if self.shared:
            self._hand_over(seat)
        self._show(seat, fresh=True)
        while not game.is_over and game.current_player == seat:
            line = self._read(f"seat {seat} ({self.labels[seat]})> ")
            if self._command(seat, line) and not game.is_over and game.current_player == seat:
                self._show(seat, fresh=False)
        self.seen[seat] = game.num_events
        if self.shared and not game.is_over:
            self._read("Your turn is over. Press Enter to hide your hand and pass the keyboard.")
            self.clear()
            self.at_keyboard = None

    def _hand_over(self, seat: int) -> None:
        """Pass-and-play: nothing private is on screen until the right person says so."""
        label = self.labels[seat]
        self._read(f"Seat {seat} ({label}): your turn. Everyone else look away, then press Enter.")
        self.at_keyboard = seat

    def _show(self, seat: int, fresh: bool) -> None:
        game = self.game
        if fresh and self.shared:
            since = self.seen[seat]
            recent = game.events_since(max(since, game.num_events - RECENT_SHARED))
        else:
            recent = game.events_since(max(0, game.num_events - RECENT_SINGLE)) if fresh else []
        title = f"--- seat {seat} ({self.labels[seat]}) to ask ---"
        self.out(render_view(self.tracker.view(seat), recent, title=title))

    def _read(self, prompt: str) -> str:
        try:
            line = self.input_fn(prompt)
        except EOFError:  # Ctrl-D, or the piped input ran out (a Ctrl-C is passed on)
            # The prompt's line is not ended (no Enter was typed): the message starts a new one.
            raise QuitGame("\nInput ended.") from None
        if line.strip().lower() in ("quit", "exit"):
            raise QuitGame("Quit.")
        return line

    def _command(self, seat: int, line: str) -> bool:
        """Handle one line; True when an ask was made."""
        words = line.replace(",", " ").replace("?", " ").split()
        if not words:
            return False
        word = words[0].lower()
        if word in ("help", "h"):
            self.out(HELP_CARDS if self.rules.ask_for == "card" else HELP)
            self.out(self._legal_summary())
            return False
        if word in ("hand", "look", "show", "table"):
            self._show(seat, fresh=True)
            return False
        if word in ("log", "history"):
            self.out("\n".join(f"  {event}" for event in self.game.events))
            return False
        try:
            target, wanted = self._parse_ask(words)
            self._ask(target, wanted)
        except IllegalAsk as error:
            self.out(f"Not allowed: {error}. Ask again (help for the commands).")
            return False
        return True

    def _parse_ask(self, words: list[str]) -> tuple[int, str]:
        # The last word is what is asked for, even when it looks like filler ("2 a": aces).
        words = [word for word in words[:-1] if word.lower() not in _FILLER] + words[-1:]
        game = self.game
        if len(words) == 1:
            targets = sorted({target for target, _ in game.legal_asks()})
            if len(targets) != 1:
                example = self._example(targets[0], words[0])
                raise IllegalAsk(f"say whom to ask, e.g. `{targets[0]} {example}`")
            words = [str(targets[0]), words[0]]
        if len(words) != 2:
            what = "a card, e.g. `2 QH`" if self.rules.ask_for == "card" else "a rank, e.g. `2 q`"
            raise IllegalAsk(f"type a seat and {what}")
        seat_text, wanted = words
        if not seat_text.isdigit():
            raise IllegalAsk(f"not a seat: {seat_text!r} (seats are 0 to {game.players - 1})")
        if self.rules.ask_for == "rank" and wanted.lower().endswith("s"):
            # Plurals: "queens", "10s". (With exact-card asks "10S" is a card.)
            try:
                parse_rank(wanted)
            except ValueError:
                wanted = wanted[:-1]
        return int(seat_text), wanted

    def _example(self, target: int, word: str) -> str:
        """``word`` if the seat may ask ``target`` for what it names (a rank, or a card under
        exact-card asks), else the first thing it may ask ``target`` for: the example of a
        hint must be an ask that works."""
        legal = sorted(w for seat, w in self.game.legal_asks() if seat == target)
        if self.rules.ask_for == "card":
            try:
                rank, suit = parse_card(word, jokers=self.rules.jokers)
            except ValueError:
                pass
            else:
                if 4 * rank + suit in legal:
                    return word
            return card_str(card_from_index(legal[0]))
        for candidate in (word, word[:-1] if word.lower().endswith("s") else ""):  # "queens"
            try:
                rank = parse_rank(candidate)
            except ValueError:
                continue
            if rank in legal:
                return word
        return RANK_NAMES[legal[0]]

    def _ask(self, target: int, wanted: Any) -> None:
        """Apply an ask by the seat to move and print what happened (IllegalAsk: nothing)."""
        game = self.game
        pool = game.pool_cards()  # to tell the person at the keyboard what they draw
        events = game.ask(target, wanted)
        drawn = {index: (seat, cards) for index, seat, cards in drawn_cards(pool, events)}
        for index, event in enumerate(events):
            self.out(f"  {event}")
            if index not in drawn or (isinstance(event, Draw) and event.shown):
                continue
            seat, cards = drawn[index]
            if seat == self.at_keyboard:
                self.out(f"    (you drew {' '.join(cards)})")

    def _print_events(self, events: Sequence[Event]) -> None:
        for event in events:
            self.out(f"  {event}")

    def _legal_summary(self) -> str:
        legal = self.game.legal_asks()
        targets = sorted({target for target, _ in legal})
        if self.rules.ask_for == "card":
            names = [card_str(card_from_index(index)) for index in sorted({w for _, w in legal})]
        else:
            names = [RANK_NAMES[rank] for rank in sorted({w for _, w in legal})]
        seats = ("seat " if len(targets) == 1 else "seats ") + ", ".join(map(str, targets))
        return f"Now you may ask {seats} for: {' '.join(names)}."

    def _result(self) -> str:
        game = self.game
        over = next(event for event in reversed(game.events) if isinstance(event, GameOver))
        width = max(len(f"seat {s} ({self.labels[s]})") for s in range(game.players))
        lines = ["", f"Game over: {over.reason}.", "Final score:"]
        for seat in range(game.players):
            caught = " ".join(RANK_NAMES[rank] for rank in game.catches(seat)) or "-"
            catches = len(game.catches(seat))
            mark = "  WINNER" if seat in game.winners else ""
            name = f"seat {seat} ({self.labels[seat]})"
            lines.append(
                f"  {name:<{width}}  {catches:>2} {'catch' if catches == 1 else 'catches'} "
                f"({caught}), {game.tiebreak_points(seat)} tiebreak points{mark}"
            )
        winners = [f"seat {seat} ({self.labels[seat]})" for seat in game.winners]
        if len(winners) == 1:
            lines.append(f"Winner: {winners[0]}.")
        elif winners:
            lines.append(f"Shared win: {', '.join(winners)}.")
        else:
            lines.append("Nobody wins.")
        return "\n".join(lines)

    def _default_clear(self) -> None:
        if self.out is print and sys.stdout.isatty():
            self.out(CLEAR_SCREEN)
        else:
            self.out("\n" * SCROLL_LINES + "=" * 20 + " (screen cleared) " + "=" * 20)


# ---------------------------------------------------------------------- command line


def parse_players(players: int, humans: int, first_seat: int, cpus: str | None) -> list[Any]:
    """The spec of every seat: ``HUMAN`` for the ``humans`` seats from ``first_seat`` going
    left, CPU specs for the others (one for all, or one per CPU seat in seat order)."""
    if not 0 <= humans <= players:
        raise ValueError(f"--humans: got {humans}; allowed: 0 to {players}")
    if not 0 <= first_seat < players:
        raise ValueError(f"--seat: got {first_seat}; allowed: 0 to {players - 1}")
    human_seats = {(first_seat + k) % players for k in range(humans)}
    cpu_seats = [seat for seat in range(players) if seat not in human_seats]
    text = DEFAULT_CPU if cpus is None else cpus
    specs = [item.strip() for item in text.split(",")]
    if not all(specs) and cpu_seats:
        raise ValueError(
            f"--cpus: got {text!r}; allowed: a comma-separated list with no empty entries"
        )
    if len(specs) == 1:
        specs = specs * len(cpu_seats)
    elif len(specs) != len(cpu_seats):
        raise ValueError(
            f"--cpus: {len(specs)} given for {len(cpu_seats)} CPU seats; give one for all, "
            f"or one per CPU seat"
        )
    for spec in specs:
        if not spec.startswith(MODEL_PREFIX) and spec not in CPU_LEVELS:
            raise ValueError(
                f"--cpus: unknown CPU level {spec!r}; allowed: {', '.join(CPU_LEVELS)}, "
                f"or model:PATH.zip"
            )
    seats: list[Any] = [HUMAN] * players
    for seat, spec in zip(cpu_seats, specs, strict=True):
        seats[seat] = spec
    return seats


def _echoing_input(prompt: str) -> str:
    line = input(prompt)
    print(line)
    return line


def main(
    argv: Sequence[str] | None = None,
    input_fn: Callable[[str], str] = input,
    output: Callable[[str], None] = print,
    clear: Callable[[], None] | None = None,
) -> int:
    parser = argparse.ArgumentParser(
        prog="gofish-play",
        description="Play Go Fish in the terminal against CPUs, or pass-and-play.",
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--players", type=int, default=4, help="seats at the table, 2..6")
    parser.add_argument(
        "--cpus",
        default=DEFAULT_CPU,
        help="CPU level for every CPU seat, or a comma list, one per CPU seat; model:PATH "
        "for a saved agent (an SB3 .zip, or an RLlib module folder from gofish-rllib-train; "
        "it must have been trained for this table)",
    )
    parser.add_argument("--rules", default="table", help=f"preset: {', '.join(Rules.PRESETS)}")
    parser.add_argument(
        "--seed",
        type=int,
        default=None,
        help="seed of the deal and the CPUs (default: a new deal each time)",
    )
    parser.add_argument("--humans", type=int, default=1, help="people at the table (0 to watch)")
    parser.add_argument("--seat", type=int, default=0, help="the first person's seat")
    parser.add_argument(
        "--delay",
        type=float,
        default=0.0,
        help=f"seconds to pause before each CPU ask, 0 to {MAX_DELAY:g}",
    )
    args = parser.parse_args(argv)
    if input_fn is input and not sys.stdin.isatty():
        input_fn = _echoing_input  # piped input: show each line after its prompt

    # Every argument, and every model file, is checked before the game starts.
    rules = rules_or_error(parser, args.rules, args.players)
    check_seed(parser, args.seed)
    if not 0 <= args.delay <= MAX_DELAY:  # nan too
        parser.error(f"--delay: got {args.delay:g}; allowed: 0 to {MAX_DELAY:g} seconds")
    try:
        try:
            players = parse_players(args.players, args.humans, args.seat, args.cpus)
            if "master" in players:
                output(MASTER_NOTE)
            game = Game(rules, seed=args.seed)
            terminal = TerminalGame(
                game, players, input_fn, output, clear=clear, seed=args.seed, delay=args.delay
            )
        except ValueError as error:  # AgentFileError (a model file) is a ValueError too
            parser.error(str(error))
        terminal.run()
    except KeyboardInterrupt:  # Ctrl-C at a prompt, during a CPU's move or while loading
        output("\n" + INTERRUPTED)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
