"""Players (``gofish_env.players``): whatever the spec (a CPU level, a CPU object, a callable,
a ``SeatPlayer``, a mix, a saved agent), ``make_player`` makes a ``SeatPlayer`` that decides
from a ``Turn``; the ``Turn`` makes the seat's view and observation when they are read;
specs are checked before any game; a mix draws a member per game; a saved agent is checked
against the table it is to play at."""

from __future__ import annotations

import random
import re
import zipfile
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from helpers import MISMATCH_4_TO_3, first_legal

from gofish_env import Rules, raw_env
from gofish_env.agent_files import AgentFileError, first_sentence
from gofish_env.cpus import CPU_LEVELS, RandomCPU
from gofish_env.knowledge import KnowledgeTracker
from gofish_env.players import (
    CPUPlayer,
    PlayerMix,
    PolicyPlayer,
    SeatPlayer,
    Turn,
    check_player_spec,
    load_agent,
    make_player,
)


class FirstAsk:
    """A ``SeatPlayer`` of its own: the first legal ask its view shows; notes its seeds."""

    def __init__(self):
        self.seeds = []

    def reset(self, seed):
        self.seeds.append(seed)

    def act(self, turn):
        return turn.to_action(*turn.view.legal_asks[0])


def play_seat_0(player: SeatPlayer, rules: Rules, seed: int) -> list[tuple[int, int]]:
    """A whole game with ``player`` at seat 0 and random CPUs elsewhere, every seat acting
    on ``env.turn(seat)``; the asks seat 0 made. Every action must be a legal ask."""
    env = raw_env(rules=rules)
    env.reset(seed=seed)
    others = [make_player("random") for _ in range(1, rules.players)]
    for offset, other in enumerate(others, start=1):
        other.reset(seed + offset)
    player.reset(seed)
    asks = []
    while not env.game.is_over and not env.truncations[env.agent_selection]:
        seat = env.game.current_player
        turn = env.turn(seat)
        action = (player if seat == 0 else others[seat - 1]).act(turn)
        assert turn.action_mask[action] == 1
        ask = env.codec.to_ask(seat, action)
        assert ask in env.game.legal_asks()
        if seat == 0:
            asks.append(ask)
        env.step(action)
    assert env.game.is_over
    return asks


# ----------------------------------------------------------------------------- make_player


@pytest.mark.parametrize(
    ("spec", "kind"),
    [
        ("random", CPUPlayer),
        ("expert", CPUPlayer),
        (RandomCPU(seed=1), CPUPlayer),
        (first_legal, PolicyPlayer),
        (FirstAsk(), FirstAsk),
    ],
    ids=["level-random", "level-expert", "cpu-object", "callable", "seat-player"],
)
@pytest.mark.parametrize(
    "rules", [Rules(players=3), Rules.preset("authors", players=4)], ids=["table-3", "authors-4"]
)
def test_make_player_turns_every_kind_of_spec_into_a_player_of_legal_asks(spec, kind, rules):
    player = make_player(spec, rules)
    assert isinstance(player, SeatPlayer) and type(player) is kind
    if kind is CPUPlayer and not isinstance(spec, str):
        assert player.cpu is spec  # the CPU object itself plays
    if kind is PolicyPlayer:
        assert player.policy is spec
    if kind is FirstAsk:
        assert player is spec  # a SeatPlayer is used as it is
    asks = [play_seat_0(player, rules, seed) for seed in range(3)]
    assert all(asks)
    if isinstance(spec, str):
        # Reset with the same seed, a CPU replays the same game.
        assert play_seat_0(make_player(spec, rules), rules, 1) == asks[1]
    if kind is FirstAsk:
        assert spec.seeds[-3:] == [0, 1, 2]


def test_make_player_refuses_what_is_no_player():
    with pytest.raises(ValueError, match=r"player: got 42; allowed: a CPU level name"):
        make_player(42)
    with pytest.raises(ValueError, match=r"^unknown CPU level 'wizard'; allowed: random, "):
        make_player("wizard")
    with pytest.raises(ValueError, match="a mix needs at least one member"):
        PlayerMix([])


# ----------------------------------------------------------------------------- Turn


def test_a_turn_makes_its_view_and_observation_when_first_read_and_maps_asks_as_the_codec():
    env = raw_env(players=3)
    env.reset(seed=4)
    chooser = random.Random(4)
    for _ in range(6):  # a position some asks into the game
        env.step(
            env.codec.to_action(env.game.current_player, *chooser.choice(env.game.legal_asks()))
        )
    seat = env.game.current_player
    agent = env.possible_agents[seat]
    tracker = KnowledgeTracker(env.game)
    made = Counter()

    def view():
        made["view"] += 1
        return tracker.view(seat)

    def observe():
        made["observe"] += 1
        return env.observe(agent)

    turn = Turn(seat, env.codec, view, observe)
    assert turn.seat == seat and not made  # nothing is made until a player reads it
    for target in range(3):
        for wanted in range(env.codec.ask_count):
            if target != seat:
                expected = env.codec.to_action(seat, target, wanted)
                assert turn.to_action(target, wanted) == expected
    assert not made  # mapping an ask needs neither
    assert turn.view.legal_asks == env.game.legal_asks()
    assert turn.view is turn.view and made == {"view": 1}
    observation, mask = turn.observation, turn.action_mask
    assert turn.observation is observation and turn.action_mask is mask
    assert made == {"view": 1, "observe": 1}  # one observation for both arrays
    np.testing.assert_array_equal(observation, env.observe(agent)["observation"])
    legal = {env.codec.to_action(seat, *ask) for ask in env.game.legal_asks()}
    assert set(np.flatnonzero(mask).tolist()) == legal
    # The env's own turn for the seat shows the same.
    own = env.turn(seat)
    np.testing.assert_array_equal(own.observation, observation)
    np.testing.assert_array_equal(own.action_mask, mask)
    assert own.view.legal_asks == turn.view.legal_asks


# ----------------------------------------------------------------------------- specs and mixes


def test_check_player_spec_refuses_an_unknown_level_with_a_message_naming_it():
    with pytest.raises(ValueError, match=r"^unknown CPU level 'wizard'; allowed: random, "):
        check_player_spec("wizard")
    with pytest.raises(ValueError, match="unknown CPU level 'grandmaster'"):
        check_player_spec("mix:random,grandmaster")
    with pytest.raises(AgentFileError, match=r"^model file not found: nowhere\.zip$"):
        check_player_spec("model:nowhere.zip", Rules())


def test_a_comma_list_without_mix_is_refused_with_how_a_mix_is_written():
    hint = r"\(a mix of players is written mix:random,easy\)$"
    with pytest.raises(ValueError, match=r"^unknown CPU level 'random,easy'; .*" + hint):
        check_player_spec("random,easy")
    with pytest.raises(ValueError, match=hint):
        make_player("random,easy")
    with pytest.raises(ValueError, match=r"model:PATH\.zip$"):  # no hint without a comma
        make_player("wizard")
    for level in CPU_LEVELS:
        assert check_player_spec(level) is None
    assert check_player_spec("mix:random,easy,expert") is None


def test_an_empty_mix_is_refused_with_how_a_mix_is_written():
    example = "allowed: mix: followed by a comma list of players"
    for refuse in (check_player_spec, make_player):
        with pytest.raises(
            ValueError, match=rf"^got 'mix:', an empty mix; {example}, e\.g\. mix:easy,normal$"
        ):
            refuse("mix:")
        with pytest.raises(ValueError, match=r"^got 'mix:easy,', a mix with an empty member; "):
            refuse("mix:easy,")
    with pytest.raises(ValueError, match=r"^got 'mix: , ', an empty mix; "):
        check_player_spec("mix: , ", Rules())


def test_a_mix_draws_a_member_at_each_reset_reproducibly_from_the_seed():
    spec = "mix:random,easy,normal,hard"
    mix = make_player(spec)
    assert isinstance(mix, PlayerMix)
    assert [player.cpu.name for player in mix.members] == ["random", "easy", "normal", "hard"]

    def drawn(player: PlayerMix, seeds) -> list[int]:
        members = []
        for seed in seeds:
            player.reset(seed)
            members.append(player.members.index(player.current))
        return members

    first = drawn(mix, range(40))
    assert set(first) == {0, 1, 2, 3}  # every member is drawn
    assert drawn(mix, range(40)) == first  # the same seeds, the same members
    assert drawn(make_player(spec), reversed(range(40))) == first[::-1]  # whatever came before
    # The member plays the same game for the same seed: its own seed comes from the mix's.
    rules = Rules(players=3)
    assert play_seat_0(make_player(spec), rules, 5) == play_seat_0(make_player(spec), rules, 5)
    # Without a seed the draws go on from the last seeded one.
    again = make_player(spec)
    mix.reset(9)
    again.reset(9)
    assert drawn(mix, [None] * 10) == drawn(again, [None] * 10)


# ----------------------------------------------------------------------------- saved agents


def test_a_mix_hands_deterministic_to_its_members():
    class Model:
        def predict(self, observation, deterministic=False):
            return 0, None

    for deterministic in (False, True):
        mix = PlayerMix([Model(), "easy"], deterministic=deterministic)
        assert mix.members[0].deterministic is deterministic


def test_seat_copy_copies_what_remembers_a_game_and_shares_models_names_and_callables():
    from gofish_env.players import PredictPlayer, seat_copy

    class Model:
        def predict(self, observation, deterministic=False):
            return 0, None

    cpu, player, model = RandomCPU(seed=1), FirstAsk(), Model()
    assert seat_copy(cpu) is not cpu and seat_copy(player) is not player
    for shared in ("easy", model, first_legal):
        assert seat_copy(shared) is shared
    predictor = PredictPlayer(model)
    copied = seat_copy(predictor)
    assert copied is not predictor and copied.model is model  # one network, two players


@pytest.mark.torch  # the saved agents
def test_load_agent_checks_the_rules_it_is_given_and_loads_a_model_once_per_path(agents):
    from gofish_training.agents import load_model

    with pytest.raises(AgentFileError, match=MISMATCH_4_TO_3):
        load_agent(agents["recorded"], Rules(players=3))
    with pytest.raises(AgentFileError, match=r"^model file not found: nowhere\.zip$"):
        load_agent("nowhere.zip")
    with pytest.raises(AgentFileError, match="cannot read model file"):
        load_agent(agents["corrupt"])
    first = load_agent(agents["recorded"], Rules(players=4))
    second = load_agent(agents["recorded"])
    assert first is not second  # each player keeps its own random state
    assert first.model is second.model is load_model(agents["recorded"])


@pytest.mark.torch  # the saved agents
def test_a_model_opponent_is_checked_against_the_rules_it_is_given(agents):
    with pytest.raises(AgentFileError, match=MISMATCH_4_TO_3):
        make_player(f"model:{agents['recorded']}", Rules(players=3))
    with pytest.raises(AgentFileError, match=r"this table is 4 players under pairs rules$"):
        make_player(f"mix:random,model:{agents['run']}", Rules.preset("pairs"))
    make_player(f"model:{agents['checkpoint']}", Rules(players=4))


def with_garbage_weights(model: str, path: Path) -> Path:
    """A copy of the saved agent ``model`` at ``path`` whose rules entry is sound but whose
    weights (``policy.pth``) are garbage: only loading the model finds out."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(model) as source, zipfile.ZipFile(path, "w") as copy:
        for entry in source.namelist():
            copy.writestr(entry, b"garbage" if entry == "policy.pth" else source.read(entry))
    return path


@pytest.mark.torch  # the saved agents
def test_a_model_whose_weights_do_not_load_is_refused_in_the_first_sentence_of_the_reason(
    agents, tmp_path
):
    # A ". " in the path is not the end of a sentence: the reason is cut after the path.
    garbage = with_garbage_weights(agents["recorded"], tmp_path / "A. Bee" / "weights.zip")
    check_player_spec(f"model:{garbage}", Rules())  # its rules alone are fine
    for refuse in (
        lambda: load_agent(garbage),
        lambda: check_player_spec(f"model:{garbage}", Rules(), load=True),
    ):
        with pytest.raises(AgentFileError) as refused:
            refuse()
        # PyTorch's reason is a paragraph: "Weights only load failed. In PyTorch 2.6, ..."
        pattern = rf"cannot load model file {re.escape(str(garbage))}: UnpicklingError: [^.]+\."
        assert re.fullmatch(pattern, str(refused.value)), str(refused.value)


def test_first_sentence_cuts_only_where_no_quote_is_open():
    assert first_sentence("Load failed. In PyTorch 2.6, we changed `weights_only`.") == (
        "Load failed."
    )
    assert first_sentence("No file '/a. B/x.pkl'. Detail: [errno 2] gone") == (
        "No file '/a. B/x.pkl'."
    )
    assert first_sentence("No file '/a. B/x.pkl' here") == "No file '/a. B/x.pkl' here"
    assert first_sentence("version 2.6 failed") == "version 2.6 failed"
    assert first_sentence("") == ""


class UnloadablePoint:
    """An entry point whose package is installed but cannot import its libraries."""

    name = "sb3"

    def load(self):
        raise ModuleNotFoundError("No module named 'torch'", name="torch")  # as Python's


def test_without_an_importable_agent_loader_a_saved_agent_is_refused_in_one_line(
    tmp_path, monkeypatch
):
    from gofish_env import players

    saved = tmp_path / "agent.zip"
    with zipfile.ZipFile(saved, "w") as archive:
        archive.writestr("data", "{}")  # what read_agent_rules looks for in an SB3 zip
    monkeypatch.setattr(players, "entry_points", lambda group: [UnloadablePoint()])
    players._agent_loaders.cache_clear()
    try:
        assert players._agent_loaders() == ()
        with pytest.raises(AgentFileError, match=r"^model file not found: nowhere\.zip$"):
            load_agent("nowhere.zip")
        with pytest.raises(AgentFileError) as refused:
            make_player(f"model:{saved}")
        # The train extra is installed but torch is not: say so, and install torch's CPU build.
        assert str(refused.value) == (
            f"cannot load {saved}: the train extra's agent loader cannot be imported (torch "
            "is not installed); saved agents need: pip install torch==2.13.0 first (its CPU "
            "build: --index-url https://download.pytorch.org/whl/cpu), then pip install "
            "'gofish-env[train]'"
        )
        monkeypatch.setattr(players, "entry_points", lambda group: [])  # no loader at all
        players._agent_loaders.cache_clear()
        with pytest.raises(AgentFileError) as refused:
            make_player(f"model:{saved}")
        assert str(refused.value) == (
            f"cannot load {saved}: no agent loader is installed; saved agents need the train "
            "extra (pip install 'gofish-env[train]')"
        )
    finally:
        players._agent_loaders.cache_clear()
