"""Playing in the terminal (``gofish_env.play``), driven end to end by scripted input; a
saved agent at the table is checked against it."""

from __future__ import annotations

import itertools
import re
import signal
import subprocess
import sys

import pytest
from helpers import MISMATCH_4_TO_3, ctrl_c_reaches_it, position, usage_error

from gofish_env import Game, Rules
from gofish_env.cards import RANK_NAMES, card_from_index, card_str
from gofish_env.cpus import CPU_LEVELS
from gofish_env.play import HUMAN, TerminalGame, main, parse_players

LEVEL = next(iter(CPU_LEVELS))  # a CPU level that exists ("random" at least)
PLURALS = ("2s", "3s", "4s", "5s", "6s", "7s", "8s", "9s", "10s", "jacks", "queens", "kings")
PLURALS += ("aces",)


def scripted(lines, transcript=None):
    """An input function answering prompts from ``lines`` (EOF when they run out)."""
    answers = iter(lines)

    def read(prompt):
        if transcript is not None:
            transcript.append(("in", prompt))
        try:
            return next(answers)
        except StopIteration:
            raise EOFError from None

    return read


def typed_asks(game, wrong_first=False):
    """Input that answers every ask prompt with a legal ask of the seat to move, typed in
    turn as ``2 q``, ``ask 2 q``, ``ask seat 2 for queens`` and ``2 10``-style forms; other
    prompts (pass-and-play confirmations) get Enter. With exact-card asks: ``2 QH``."""
    forms = itertools.cycle(range(3))
    refused = [wrong_first]

    def read(prompt):
        if "Enter" in prompt:
            return ""
        target, what = game.legal_asks()[0]
        if refused[0]:
            refused[0] = False
            return f"{game.current_player} {RANK_NAMES[what]}"  # asking yourself
        if game.rules.ask_for == "card":
            return f"{target} {card_str(card_from_index(what)).lower()}"
        form = next(forms)
        if form == 0:
            return f"{target} {RANK_NAMES[what].lower()}"
        if form == 1:
            return f"ask {target} {RANK_NAMES[what]}"
        return f"ask seat {target} for {PLURALS[what]}"

    return read


def test_an_illegal_ask_is_refused_with_the_rules_reason_and_asked_again():
    hand = Game(Rules(players=4), seed=3).hand(0)
    held = {card[:-1] for card in hand}
    missing = next(rank for rank in RANK_NAMES[:13] if rank not in held)
    out: list[str] = []
    transcript: list = []
    lines = ["0 7", f"1 {missing}", "ask one for 7", "help", "quit"]
    code = main(
        ["--seed", "3", "--cpus", LEVEL],
        input_fn=scripted(lines, transcript),
        output=out.append,
    )
    text = "\n".join(out)
    assert code == 0
    assert "Not allowed: you cannot ask yourself (seat 0)." in text
    plural = {"J": "jacks", "Q": "queens", "K": "kings", "A": "aces"}.get(missing, f"{missing}s")
    assert f"Not allowed: you hold no {plural}: you may only ask for a rank you hold." in text
    assert "Not allowed: not a seat: 'one'" in text
    assert "Commands:" in text
    ranks = " ".join(sorted({card[:-1] for card in hand}, key=RANK_NAMES.index))
    assert f"Now you may ask seats 1, 2, 3 for: {ranks}." in text
    assert "Quit. The game is abandoned." in text
    # Every line was a fresh prompt to the same seat: nothing was played.
    assert [prompt for _, prompt in transcript] == ["seat 0 (you)> "] * 5
    assert "Your hand: " in text and "Seat 0 asks" not in text


def test_a_full_game_is_played_to_the_end_through_typed_asks():
    game = Game(Rules(players=3), seed=8)
    out: list[str] = []
    terminal = TerminalGame(
        game, [HUMAN, LEVEL, LEVEL], typed_asks(game, wrong_first=True), out.append, seed=8
    )
    winners = terminal.run()
    text = "\n".join(out)
    assert game.is_over and winners == game.winners
    assert sum(len(game.catches(seat)) for seat in range(3)) == 13
    assert "Not allowed: you cannot ask yourself (seat 0)." in text
    # The CPUs' asks and the answers are shown as they happen.
    assert re.search(r"Seat [12] asks seat \d for", text)
    assert re.search(r"Seat 0 asks seat [12] for", text)
    # The end: winners, catches and tiebreak points of every seat.
    assert "Final score:" in text
    for seat in range(3):
        assert f"{len(game.catches(seat)):>2} catches" in text
        assert f"{game.tiebreak_points(seat)} tiebreak points" in text
    names = [f"seat {seat} (" for seat in game.winners]
    result_line = next(
        line for line in out[-1].splitlines() if "Winner" in line or "Shared" in line
    )
    assert all(name in result_line for name in names)
    # Only seat 0's hand was ever shown.
    assert all("seat 0 (you) to ask" in block for block in out if "Your hand:" in block)


def test_private_draws_are_told_only_to_the_drawer():
    game = Game(Rules(players=2), seed=1)
    out: list[str] = []
    TerminalGame(game, [HUMAN, LEVEL], typed_asks(game), out.append, seed=1).run()
    drawn = [line for line in out if "(you drew" in line]
    assert drawn  # the person fished at least once in a whole game
    for index, line in enumerate(out):
        if "(you drew" in line:
            # Right after a draw (or an empty-hand draw) by seat 0.
            assert re.match(r"  Seat 0 (draws a card|has an empty hand)", out[index - 1])


def test_exact_card_asks_take_a_card_and_refuse_a_bare_rank():
    rules = Rules.preset("authors", players=3)
    game = Game(rules, seed=2)
    out: list[str] = []
    first = typed_asks(game)
    lines = iter(["1 q"])

    def read(prompt):
        return next(lines, None) or first(prompt)

    TerminalGame(game, [HUMAN, LEVEL, LEVEL], read, out.append, seed=2).run()
    text = "\n".join(out)
    assert "Not allowed: not a card: 'q'" in text and "one exact card" in text
    assert game.is_over and "Final score:" in text


def test_pass_and_play_hides_each_hand_until_its_player_presses_enter():
    game = Game(Rules(players=4), seed=4)
    transcript: list = []
    answer = typed_asks(game)

    def read(prompt):
        transcript.append(("in", prompt))
        return answer(prompt)

    players = [HUMAN, LEVEL, HUMAN, LEVEL]
    terminal = TerminalGame(game, players, read, lambda text: transcript.append(("out", text)))
    terminal.run()
    assert game.is_over
    revealed = None  # the seat whose player has confirmed and not yet hidden the screen
    shown: list[int] = []
    hides = 0
    for kind, text in transcript:
        if kind == "in":
            match = re.match(r"Seat (\d) \(player \d\): your turn\. Everyone else look away", text)
            if match:
                assert revealed is None  # the last hand was hidden before the next person
                revealed = int(match.group(1))
        elif "(screen cleared)" in text:
            assert text.startswith("\n" * 40)
            revealed = None
            hides += 1
        elif "Your hand:" in text:
            seat = int(re.search(r"--- seat (\d) \(player \d\) to ask", text).group(1))
            assert seat == revealed
            shown.append(seat)
        elif "(you drew" in text:
            assert revealed is not None
    assert set(shown) == {0, 2}
    assert hides >= 2
    # Each turn ended with a prompt to hide the hand, then the clear.
    prompts = [text for kind, text in transcript if kind == "in"]
    assert any(prompt.startswith("Your turn is over. Press Enter to hide") for prompt in prompts)


def test_pass_and_play_from_the_command_line_asks_before_showing_a_hand():
    transcript: list = []
    code = main(
        ["--players", "2", "--humans", "2", "--seed", "1", "--rules", "family"],
        input_fn=scripted(["", "quit"], transcript),
        output=lambda text: transcript.append(("out", text)),
    )
    assert code == 0
    confirm = ("in", "Seat 0 (player 1): your turn. Everyone else look away, then press Enter.")
    first_hand = next(i for i, (_, text) in enumerate(transcript) if "Your hand:" in text)
    assert transcript.index(confirm) < first_hand
    assert "Pass-and-play" in transcript[0][1]
    assert "seat 0 (player 1) to ask" in transcript[first_hand][1]


@pytest.mark.torch
def test_watching_cpus_and_a_saved_model_play_a_whole_game(tmp_path):
    from sb3_contrib import MaskablePPO

    from gofish_env import GoFishEnv

    model = MaskablePPO(
        "MlpPolicy",
        GoFishEnv(players=3),
        n_steps=64,
        batch_size=32,
        policy_kwargs={"net_arch": [16]},
        seed=0,
        device="cpu",
    )
    path = tmp_path / "tiny.zip"
    model.save(path)
    out: list[str] = []
    argv = ["--players", "3", "--humans", "0", "--cpus", f"model:{path},{LEVEL},{LEVEL}"]
    code = main([*argv, "--seed", "5"], input_fn=scripted([]), output=out.append)
    text = "\n".join(out)
    assert code == 0
    assert "seat 0: model tiny" in text and f"seat 1: {LEVEL} CPU" in text
    assert "Seat 0 asks seat" in text and "Final score:" in text
    assert "Your hand:" not in text


def test_the_end_of_the_input_leaves_the_game():
    out: list[str] = []
    assert main(["--seed", "2", "--cpus", LEVEL], input_fn=scripted([]), output=out.append) == 0
    # The prompt's line was not ended (no Enter): the message starts a line of its own.
    assert out[-1] == "\nInput ended. The game is abandoned."


def test_ctrl_c_at_a_prompt_stops_the_game_with_status_130():
    def interrupted(prompt):
        raise KeyboardInterrupt

    out: list[str] = []
    assert main(["--seed", "2", "--cpus", LEVEL], input_fn=interrupted, output=out.append) == 130
    assert out[-1].strip() == "Interrupted. The game is abandoned."
    assert not any("Input ended" in text for text in out)  # that is the end of the input


def test_ctrl_c_during_a_cpus_move_stops_the_game_without_a_traceback():
    command = [sys.executable, "-u", "-m", "gofish_env.play", "--players", "4", "--humans"]
    command += ["0", "--cpus", LEVEL, "--delay", "0.3", "--seed", "1"]
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    with subprocess.Popen(command, text=True, preexec_fn=ctrl_c_reaches_it, **pipes) as process:
        try:
            lines = [process.stdout.readline() for _ in range(6)]
            assert any(" asks seat " in line for line in lines), lines  # the CPUs are playing
            process.send_signal(signal.SIGINT)  # Ctrl-C, most likely in the --delay pause
            out, err = process.communicate(timeout=60)
        finally:
            process.kill()
    assert process.returncode == 130, err
    assert err == ""  # no traceback
    assert out.splitlines()[-1] == "Interrupted. The game is abandoned."
    assert "Final score:" not in out


def test_seats_and_cpu_specs_from_the_command_line():
    level = LEVEL
    assert parse_players(4, 1, 0, level) == [HUMAN, level, level, level]
    assert parse_players(4, 2, 3, f"{level},model:x.zip") == [HUMAN, level, "model:x.zip", HUMAN]
    with pytest.raises(ValueError, match="3 CPU seats"):
        parse_players(4, 1, 0, f"{level},{level}")
    with pytest.raises(ValueError, match="unknown CPU level 'wizard'"):
        parse_players(4, 1, 0, "wizard")
    with pytest.raises(ValueError, match="--humans"):
        parse_players(4, 5, 0, level)
    with pytest.raises(SystemExit):
        main(["--cpus", "wizard"], input_fn=scripted([]), output=lambda text: None)
    with pytest.raises(SystemExit):
        main(["--seat", "4"], input_fn=scripted([]), output=lambda text: None)


def play_main(argv):
    return main(argv, input_fn=lambda prompt: "quit", output=lambda text: None)


@pytest.mark.torch  # the saved agents
def test_play_refuses_a_model_seat_trained_for_another_table(agents, capsys):
    argv = ["--players", "3", "--humans", "0", "--cpus", f"model:{agents['recorded']}"]
    assert MISMATCH_4_TO_3 in usage_error(capsys, play_main, argv)


@pytest.mark.parametrize(
    ("typed", "asked"),
    [
        ("1 a", "Seat 0 asks seat 1 for aces."),
        ("2 A", "Seat 0 asks seat 2 for aces."),
        ("ask seat 2 for an ace", "Seat 0 asks seat 2 for aces."),
        ("ask 1 for a 2", "Seat 0 asks seat 1 for 2s."),
    ],
)
def test_the_last_word_is_the_rank_even_when_it_looks_like_filler(typed, asked):
    game = position(["AH 2C", "3C 4C", "5C 6C"], pool_top=["7C"], rules=Rules(players=3))
    out: list[str] = []
    TerminalGame(game, [HUMAN, LEVEL, LEVEL], scripted([typed, "quit"]), out.append).run()
    assert f"  {asked}" in out


def test_a_lone_a_asks_the_only_seat_that_can_be_asked_for_aces():
    # Two players: "a" is the rank, not a filler word that leaves nothing (it asked for 2s).
    game = position(["AH 2C", "3C 4C"], pool_top=["7C"], rules=Rules(players=2))
    out: list[str] = []
    TerminalGame(game, [HUMAN, LEVEL], scripted(["a", "quit"]), out.append).run()
    assert "  Seat 0 asks seat 1 for aces." in out
    assert not any("for 2s" in line for line in out)


@pytest.mark.parametrize(
    ("typed", "example"),
    [
        ("1", "1 5"),
        ("zz", "1 5"),
        ("a", "1 a"),
        ("aces", "1 aces"),
        ("5s", "1 5s"),
        ("2", "1 5"),  # a rank the seat does not hold: the ask `1 2` would be refused
        ("queens", "1 5"),
    ],
)
def test_a_lone_word_with_several_seats_to_ask_gets_an_example_that_works(typed, example):
    # Seat 0 holds an ace and a 5: a word that names no rank it holds is not put in the
    # example, which is then an ask the seat may make.
    game = position(["AH 5C", "3C 4C", "5D 6C"], pool_top=["7C"], rules=Rules(players=3))
    out: list[str] = []
    lines = [typed, example, "quit"]
    TerminalGame(game, [HUMAN, LEVEL, LEVEL], scripted(lines), out.append).run()
    assert f"Not allowed: say whom to ask, e.g. `{example}`. Ask again" in "\n".join(out)
    assert any(line.startswith("  Seat 0 asks seat 1 for ") for line in out)  # it was played


@pytest.mark.parametrize(("typed", "example"), [("QH", "1 QH"), ("QS", "1 QC"), ("q", "1 QC")])
def test_under_exact_card_asks_the_example_is_a_card_the_seat_may_ask_for(typed, example):
    # Seat 0 holds the QS: it may ask for the QC, QD or QH, not the QS (a card it holds).
    rules = Rules(players=3, ask_for="card")  # exact-card asks, as under authors
    game = position(["QS AC", "QH 3C", "4C 6C"], rules=rules)
    out: list[str] = []
    lines = [typed, example, "quit"]
    TerminalGame(game, [HUMAN, LEVEL, LEVEL], scripted(lines), out.append).run()
    assert f"Not allowed: say whom to ask, e.g. `{example}`. Ask again" in "\n".join(out)
    assert f"  Seat 0 asks seat 1 for the {example.split()[1]}." in out


@pytest.mark.parametrize("word", ["kings", "aces", "jacks", "queens", "KINGS", "queenh"])
def test_exact_card_asks_refuse_a_rank_word_as_they_refuse_a_bare_rank(word):
    # Seat 0 holds a king, an ace, a jack and a queen, none a spade: each word read as
    # "rank + S" was a card (KS, AS, JS, QS) and the ask was played.
    rules = Rules(players=3, ask_for="card")  # exact-card asks, as under authors
    game = position(["KC AC JC QH", "KS AS JS QS", "3C 4C"], rules=rules)
    out: list[str] = []
    TerminalGame(
        game, [HUMAN, LEVEL, LEVEL], scripted([f"1 {word}", "1 q", "quit"]), out.append
    ).run()
    refusals = [line for line in out if line.startswith("Not allowed: ")]
    assert refusals[0] == (
        f"Not allowed: not a card: {word!r} (cards look like 7H, 10S, QD or AC; suits are C, "
        "D, H, S); these rules ask for one exact card. Ask again (help for the commands)."
    )
    assert refusals[1].endswith(
        "these rules ask for one exact card. Ask again (help for the commands)."
    )
    assert not any(" asks seat " in line for line in out)  # nothing was played


def test_card_shaped_words_are_cards_under_exact_card_asks():
    rules = Rules(players=3, ask_for="card")
    game = position(["10C KC", "10S KS", "3C 4C"], rules=rules)
    out: list[str] = []
    TerminalGame(
        game, [HUMAN, LEVEL, LEVEL], scripted(["1 10s", "ask seat 1 for ks", "quit"]), out.append
    ).run()
    assert "  Seat 0 asks seat 1 for the 10S." in out
    assert "  Seat 0 asks seat 1 for the KS." in out


def test_help_under_exact_card_asks_gives_cards_not_rank_words():
    def help_text(rules):
        out: list[str] = []
        game = Game(rules, seed=1)
        players = [HUMAN] + [LEVEL] * (rules.players - 1)
        TerminalGame(game, players, scripted(["help", "quit"]), out.append).run()
        return next(text for text in out if text.startswith("Commands:"))

    cards = help_text(Rules.preset("authors", players=3))
    assert "2 QH" in cards and "ask seat 2 for 10S" in cards
    for rank_ask in ("2 q ", "2 jacks", "for queens", "just the rank"):
        assert rank_ask not in cards
    ranks = help_text(Rules(players=3))
    assert "2 jacks" in ranks and "ask seat 2 for queens" in ranks and "QH" not in ranks


@pytest.mark.parametrize(
    ("rules", "typed", "refusal"),
    [
        (Rules(players=3), "1 JK", "not a rank: 'JK' (there are no jokers in this game)"),
        (Rules(players=3), "1 joker", "not a rank: 'joker' (there are no jokers in this game)"),
        (
            Rules(players=3),
            "1 11",
            "not a rank: '11' (ranks are 2, 3, 4, 5, 6, 7, 8, 9, 10, J, Q, K, A)",
        ),
        (
            Rules.preset("authors", players=3),
            "1 JK",
            "not a card: 'JK' (there are no jokers in this game)",
        ),
        (
            Rules.preset("pairs", players=3, jokers=True),
            "1 11",
            "not a rank: '11' (ranks are 2, 3, 4, 5, 6, 7, 8, 9, 10, J, Q, K, A, or JK for a "
            "joker)",
        ),
    ],
)
def test_a_joker_is_offered_and_named_only_in_a_game_with_jokers(rules, typed, refusal):
    game = Game(rules, seed=1)
    players = [HUMAN] + [LEVEL] * (rules.players - 1)
    out: list[str] = []
    TerminalGame(game, players, scripted([typed, "quit"]), out.append).run()
    assert f"Not allowed: {refusal}. Ask again (help for the commands)." in out


@pytest.mark.parametrize("delay", ["1e10", "1e308", "60.5", "-1", "nan", "inf"])
def test_an_unreasonable_delay_is_refused_before_the_game(capsys, delay):
    shown = f"{float(delay):g}"
    # Seat 0 is a person who quits at once: a delay taken is never slept.
    message = usage_error(capsys, play_main, ["--delay", delay, "--cpus", LEVEL])
    assert message == f"--delay: got {shown}; allowed: 0 to 60 seconds"
    assert capsys.readouterr().out == ""  # no game started


@pytest.mark.parametrize(
    ("cpus", "noted"), [("master", True), (f"{LEVEL},master", True), (LEVEL, False)]
)
def test_a_master_cpu_at_the_table_is_announced_as_slow_on_first_use(cpus, noted):
    out: list[str] = []
    argv = ["--players", "3", "--cpus", cpus, "--seed", "1"]
    assert main(argv, input_fn=scripted(["quit"]), output=out.append) == 0
    note = "The master CPU compiles its search on first use"
    assert any(note in text for text in out) == noted
    if noted:  # before the game
        assert out[0].startswith(note) and out[1].startswith("Go Fish: 3 players")


def test_one_card_and_one_catch_are_singular():
    # Seat 1 holds one card and has laid every rank but 7s. Seat 0 takes the last 7 and
    # ends the game with 1 catch.
    others = ["2", "3", "4", "5", "6", "8", "9", "10", "J", "Q", "K", "A"]
    game = position(["7C 7D 7H", "7S"], rules=Rules(players=2), catches=[[], others])
    out: list[str] = []
    TerminalGame(game, [HUMAN, LEVEL], scripted(["1 7"]), out.append).run()
    text = "\n".join(out)
    view = next(block for block in out if "Your hand:" in block).splitlines()
    assert "  seat 1        1 card   catches: 2 3 4 5 6 8 9 10 J Q K A (97 pts)" in view
    assert re.search(r"seat 0 \(you\)\s+1 catch \(7\), 7 tiebreak points", text)
    assert re.search(r"seat 1 \(\w+ CPU\)\s+12 catches \(", text)
