"""Games kept as they are played (``gofish_env.evaluation.kept``): a measurement stopped
midway goes on from its file and ends with the games of one that never stopped; a cut
write, other settings and a retrained model are each noticed. The tournament keeps its
games in ``--out``, the ladder and ``gofish-evaluate`` in ``--keep DIR``, and each says how
to go on after Ctrl-C, and exits with status 130."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from gofish_baselines import ladder, tournament
from gofish_env import Rules
from gofish_env.evaluation import Measurement, make_entrants, make_lineups, play_deals
from gofish_env.evaluation.kept import file_stamp, play_kept, read_games, settings_path


def measurement(engine: str = "python", seed: int = 3, levels=("random", "easy", "hard")):
    rules = Rules(players=3)
    entrants = make_entrants(list(levels), rules)
    return Measurement(entrants, rules, seed, make_lineups(len(entrants), 3), engine=engine)


class Stop(Exception):
    """Stands for Ctrl-C: raised once a number of games is reached."""


def stop_after(games: int):
    def on_games(done: int) -> None:
        if done >= games:
            raise Stop

    return on_games


# The vector engine plays in one process: workers do not apply to it.
@pytest.mark.parametrize(("engine", "workers"), [("python", 1), ("python", 2), ("vector", 1)])
def test_a_measurement_stopped_midway_goes_on_to_the_games_of_one_never_stopped(
    tmp_path, engine, workers
):
    whole = play_deals(measurement(engine), 8, workers)
    path = tmp_path / "games.jsonl"
    with pytest.raises(Stop):
        play_kept(measurement(engine), 8, path, workers, on_games=stop_after(9))
    kept, _, left_out = read_games(path)
    assert left_out == ""
    assert kept == whole[: len(kept)] and 9 <= len(kept) < len(whole)  # whole deals only
    said = []
    assert play_kept(measurement(engine), 8, path, workers, say=said.append) == whole
    assert said == [f"{path}: {len(kept) // 3} deals kept; going on from deal {len(kept) // 3}"]
    assert read_games(path)[0] == whole


def test_the_vector_engine_keeps_its_games_a_batch_at_a_time(tmp_path):
    # Its deals come a batch at a time; each is kept as the batch hands it over.
    path = tmp_path / "games.jsonl"
    counts = []
    play_kept(measurement("vector"), 5, path, on_games=counts.append)
    assert counts == [0, 3, 6, 9, 12, 15] and len(read_games(path)[0]) == 15


def test_a_write_cut_midway_is_dropped_and_its_deal_played_again(tmp_path):
    whole = play_deals(measurement(), 4)
    path = tmp_path / "games.jsonl"
    play_kept(measurement(), 4, path)
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:7]) + lines[7][:20])  # deal 2 with one game and a cut line
    said = []
    assert play_kept(measurement(), 4, path, say=said.append) == whole
    assert said[0] == (
        f"{path}: a cut last line (20 bytes) and deal 2 with 1 of its 3 games dropped "
        "(a write stopped midway); played again"
    )
    assert read_games(path) == (whole, os.path.getsize(path), "")


def test_a_file_damaged_before_its_last_line_is_set_aside_and_begun_again(tmp_path):
    path = tmp_path / "games.jsonl"
    play_kept(measurement(), 2, path)
    lines = path.read_text().splitlines(keepends=True)
    damaged = "".join(lines[:2]) + "not json\n" + "".join(lines[3:])
    path.write_text(damaged)
    said = []
    assert play_kept(measurement(), 2, path, say=said.append) == play_deals(measurement(), 2)
    aside = tmp_path / "games.jsonl.damaged"
    assert said == [
        f"{path}, line 3: not a JSON line (Expecting value: line 1 column 1 (char 0)); only "
        f"a cut last line is mended, so mend or move the file. It was moved to {aside}, and "
        "the games are begun again"
    ]
    assert aside.read_text() == damaged  # nothing lost


def aside_of(path, said: str):
    """The file a message says the kept games were moved to."""
    return type(path)(said.split("moved to ", 1)[1].split(" (")[0].split(", ")[0])


def test_games_kept_with_other_settings_are_moved_aside_and_begun_again(tmp_path):
    path = tmp_path / "games.jsonl"
    first = play_kept(measurement(seed=3), 2, path)
    before, settings_before = path.read_bytes(), settings_path(path).read_bytes()
    said = []
    other = play_kept(measurement(seed=4), 2, path, say=said.append)
    assert other == play_deals(measurement(seed=4), 2)
    (message,) = said
    aside = aside_of(path, message)
    assert aside.parent == tmp_path and aside.name.startswith("games.2")
    assert aside.name.endswith(".jsonl") and aside != path
    assert message == (
        f"{path}: its games were played with other settings; moved to {aside} (their "
        f"settings to {settings_path(aside).name}), and begun again"
    )
    assert aside.read_bytes() == before and read_games(aside)[0] == first  # nothing lost
    assert settings_path(aside).read_bytes() == settings_before
    assert read_games(path)[0] == other
    assert json.loads(settings_path(path).read_text())["seed"] == 4
    # Again, within the same second: another free name, the first aside untouched.
    said = []
    play_kept(measurement(seed=3), 2, path, say=said.append)
    second = aside_of(path, said[0])
    assert second not in (aside, path) and read_games(second)[0] == other
    assert aside.read_bytes() == before


def test_games_whose_settings_cannot_be_read_are_moved_aside_and_begun_again(tmp_path):
    path = tmp_path / "games.jsonl"
    play_kept(measurement(), 2, path)
    before = path.read_bytes()
    settings_path(path).write_text('{"rules": ')  # a write cut midway
    said = []
    assert play_kept(measurement(), 2, path, say=said.append) == play_deals(measurement(), 2)
    aside = aside_of(path, said[0])
    assert said == [
        f"{path}: its games were played with other settings; moved to {aside} (their "
        f"settings to {settings_path(aside).name}), and begun again"
    ]
    assert aside.read_bytes() == before
    assert json.loads(settings_path(path).read_text())["seed"] == 3


def test_kept_deals_that_are_not_a_runs_first_are_moved_aside_and_begun_again(tmp_path):
    path = tmp_path / "games.jsonl"
    play_kept(measurement(), 3, path)
    without_first = "".join(path.read_text().splitlines(keepends=True)[3:])  # deals 1, 2
    path.write_text(without_first)
    said = []
    assert play_kept(measurement(), 3, path, say=said.append) == play_deals(measurement(), 3)
    aside = aside_of(path, said[0])
    assert said == [f"{path}: its deals are not 0, 1, 2, ...; moved to {aside}, and begun again"]
    assert aside.read_text() == without_first


def test_an_empty_file_of_other_settings_is_begun_again_with_nothing_to_move(tmp_path):
    path = tmp_path / "games.jsonl"
    path.write_text("")
    said = []
    play_kept(measurement(), 1, path, say=said.append)
    assert said == [] and sorted(p.name for p in tmp_path.iterdir()) == [
        "games.jsonl",
        "games.settings.json",
    ]


def test_a_second_damaged_file_does_not_replace_the_first(tmp_path):
    path = tmp_path / "games.jsonl"
    damaged = []
    for seed in (3, 4):
        play_kept(measurement(seed=seed), 2, path)
        lines = path.read_text().splitlines(keepends=True)
        damaged.append("".join(lines[:2]) + "not json\n" + "".join(lines[3:]))
        path.write_text(damaged[-1])
        play_kept(measurement(seed=seed), 2, path)
    assert (tmp_path / "games.jsonl.damaged").read_text() == damaged[0]
    assert (tmp_path / "games.jsonl.damaged-2").read_text() == damaged[1]


def test_fewer_deals_than_kept_read_the_first_and_play_none(tmp_path):
    path = tmp_path / "games.jsonl"
    whole = play_kept(measurement(), 4, path)
    before = path.read_bytes()
    counts = []
    assert play_kept(measurement(), 2, path, on_games=counts.append) == whole[:6]
    assert counts == [6] and path.read_bytes() == before


def test_a_retrained_model_is_not_taken_for_the_one_whose_games_were_kept(tmp_path):
    model = tmp_path / "agent.zip"
    model.write_bytes(b"first")
    stamp = file_stamp(f"model:{model}")
    assert stamp == file_stamp(f"model:{model}") and file_stamp("hard") is None
    model.write_bytes(b"second, longer")
    assert file_stamp(f"model:{model}") != stamp
    folder = tmp_path / "module"  # an RLlib module is a folder: every file counts
    (folder / "deep").mkdir(parents=True)
    (folder / "deep" / "weights").write_bytes(b"1")
    stamp = file_stamp(f"model:{folder}")
    (folder / "deep" / "weights").write_bytes(b"22")
    assert file_stamp(f"model:{folder}") != stamp


def test_the_tournament_stopped_by_ctrl_c_says_how_to_go_on_and_ends_as_if_never_stopped(
    tmp_path, capsys, monkeypatch
):
    argv = ["--cpus", "random,easy,hard", "--players", "3", "--games", "12", "--seed", "5"]
    out = tmp_path / "out"
    real_play_kept = tournament.play_kept

    def interrupted(measurement, deals, path, workers, on_games, say):
        def ctrl_c(done):
            on_games(done)
            if done >= 6:
                raise KeyboardInterrupt

        return real_play_kept(measurement, deals, path, workers, ctrl_c, say)

    monkeypatch.setattr(tournament, "play_kept", interrupted)
    assert exit_message(tournament.main, [*argv, "--out", str(out)], capsys) == (
        f"interrupted: 2 deals kept in {out / 'played.jsonl'}; run the same command to go on"
    )
    monkeypatch.setattr(tournament, "play_kept", real_play_kept)
    capsys.readouterr()
    tournament.main([*argv, "--out", str(out)])
    assert "2 deals kept; going on from deal 2" in capsys.readouterr().err
    assert not (out / "played.jsonl").exists()  # done: the next run plays afresh
    assert not (out / "played.settings.json").exists()
    tournament.main([*argv, "--out", str(tmp_path / "fresh")])
    resumed = json.loads((out / "results.json").read_text())
    fresh = json.loads((tmp_path / "fresh" / "results.json").read_text())
    assert resumed == fresh and len(fresh["games"]) == 12


def test_a_tournament_of_other_settings_into_the_same_out_moves_the_kept_games_aside(
    tmp_path, capsys, monkeypatch
):
    # Every tournament keeps its games in --out (results/tournament by default): a stopped
    # one's games were deleted by the next tournament of other settings there.
    argv = ["--cpus", "random,easy,hard", "--players", "3", "--games", "12", "--no-progress"]
    out = tmp_path / "out"
    kept = out / "played.jsonl"
    monkeypatch.setattr(tournament, "play_kept", ctrl_c_after(tournament.play_kept, 6))
    exit_message(tournament.main, [*argv, "--out", str(out)], capsys)
    monkeypatch.undo()
    stopped = kept.read_bytes()
    capsys.readouterr()
    tournament.main(["--cpus", "easy,hard", "--games", "4", "--out", str(out), "--no-progress"])
    err = capsys.readouterr().err
    aside = aside_of(kept, err)
    assert f"{kept}: its games were played with other settings; moved to {aside}" in err
    assert aside.read_bytes() == stopped  # nothing lost
    assert not kept.exists() and (out / "results.json").exists()  # the new run is done
    # Moved back, the stopped tournament goes on from them.
    aside.replace(kept)
    settings_path(aside).replace(settings_path(kept))
    tournament.main([*argv, "--out", str(out)])
    assert "2 deals kept; going on from deal 2" in capsys.readouterr().err


def test_fewer_games_than_kept_write_their_results_and_leave_the_kept_deals(
    tmp_path, capsys, monkeypatch
):
    # A smaller --games on resume read the first deals, wrote results, then deleted the
    # deals kept beyond them.
    argv = ["--cpus", "random,easy,hard", "--players", "3", "--seed", "2", "--no-progress"]
    out = tmp_path / "out"
    kept = out / "played.jsonl"
    monkeypatch.setattr(tournament, "play_kept", ctrl_c_after(tournament.play_kept, 9))
    exit_message(tournament.main, [*argv, "--games", "12", "--out", str(out)], capsys)
    monkeypatch.undo()
    stopped = kept.read_bytes()
    capsys.readouterr()
    small = tournament.main([*argv, "--games", "3", "--out", str(out)])
    assert small.deals == 1 and kept.read_bytes() == stopped
    assert f"{kept}: left as it is: it holds 3 deals, more than the 1 of these results" in (
        capsys.readouterr().err
    )
    whole = tournament.main([*argv, "--games", "12", "--out", str(out)])
    assert "3 deals kept; going on from deal 3" in capsys.readouterr().err
    assert not kept.exists()  # all its deals in these results: done with
    fresh = tournament.main([*argv, "--games", "12", "--out", ""])
    assert whole.records == fresh.records


def exit_message(main, argv: list[str], capsys, status: int = 130) -> str:
    """What a command stopped by Ctrl-C says, its last line on stderr; it must exit with
    status 130 (128 + SIGINT, as the shells report it; 143 for SIGTERM), with no
    traceback."""
    capsys.readouterr()
    with pytest.raises(SystemExit) as stopped:
        try:
            main(argv)
        except KeyboardInterrupt:
            pytest.fail("the command let a KeyboardInterrupt out (a traceback)")
    assert stopped.value.code == status
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err.rstrip("\n").splitlines()[-1]


def ctrl_c_after(real, games: int):
    """``play_kept`` that stops as if by Ctrl-C once ``games`` games of a measurement ended."""

    def interrupted(measurement, deals, path, workers=1, on_games=None, say=print):
        def ctrl_c(done):
            if on_games is not None:
                on_games(done)
            if done >= games:
                raise KeyboardInterrupt

        return real(measurement, deals, path, workers, ctrl_c, say)

    return interrupted


def test_the_ladder_with_keep_goes_on_after_ctrl_c_to_the_results_of_one_never_stopped(
    tmp_path, capsys, monkeypatch
):
    argv = ["--games", "6", "--players", "2,3", "--levels", "random,easy,hard", "--seed", "4"]
    keep = tmp_path / "kept"
    monkeypatch.setattr(ladder, "play_kept", ctrl_c_after(ladder.play_kept, 4))
    assert exit_message(ladder.main, [*argv, "--keep", str(keep)], capsys) == (
        f"interrupted: the games played are kept in {keep}; run the same command to go on"
    )
    assert [path.name for path in keep.glob("*.jsonl")] == ["p2-easy-random.jsonl"]
    monkeypatch.undo()
    capsys.readouterr()
    resumed = ladder.main([*argv, "--keep", str(keep)])
    assert "p2-easy-random.jsonl: 2 deals kept; going on from deal 2" in capsys.readouterr().err
    fresh = ladder.main(argv)
    outcome = [(r.strong, r.weak, r.players, r.score, r.low, r.high) for r in fresh]
    assert [(r.strong, r.weak, r.players, r.score, r.low, r.high) for r in resumed] == outcome
    assert len(list(keep.glob("*.jsonl"))) == 4  # two pairs at two tables


def test_a_ladder_stopped_without_keep_says_how_to_keep_its_games(capsys, monkeypatch):
    def ctrl_c(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(ladder, "play_deals", ctrl_c)
    argv = ["--games", "2", "--players", "2", "--levels", "random,easy"]
    assert exit_message(ladder.main, argv, capsys) == (
        "interrupted: nothing kept; with --keep DIR the games are kept as they are played, "
        "and the same command goes on from them"
    )


@pytest.mark.torch
def test_gofish_evaluate_with_keep_goes_on_after_ctrl_c_to_the_same_table(
    agents, tmp_path, capsys, monkeypatch
):
    from gofish_training import evaluate

    argv = [agents["recorded"], "--cpus", "random,easy", "--deals", "3", "--seed", "2"]
    keep = tmp_path / "kept"
    monkeypatch.setattr(evaluate, "play_kept", ctrl_c_after(evaluate.play_kept, 8))
    assert exit_message(evaluate.main, [*argv, "--keep", str(keep)], capsys) == (
        f"interrupted: the games played are kept in {keep}; run the same command to go on"
    )
    assert len(read_games(keep / "random.jsonl")[0]) == 8  # two whole deals of four games
    monkeypatch.undo()
    capsys.readouterr()
    resumed = evaluate.main([*argv, "--keep", str(keep)])
    assert "random.jsonl: 2 deals kept; going on from deal 2" in capsys.readouterr().err
    assert resumed == evaluate.main(argv)


def test_a_tournament_that_keeps_nothing_says_so_when_stopped(capsys, monkeypatch):
    def ctrl_c(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(tournament, "play_deals", ctrl_c)
    argv = ["--cpus", "random,easy", "--games", "4", "--out", ""]
    assert exit_message(tournament.main, argv, capsys) == (
        "interrupted: nothing kept (--out '' keeps no games)"
    )


# ------------------------------------------------------- signals: SIGTERM, and before any game


@pytest.fixture
def sigterm_not_taken_fails():
    """SIGTERM to this process that a command does not take fails the test (by default it
    would end pytest). Only for tests that play in this process: a pool's worker would
    inherit the handler and take the pool's SIGTERM for a task's error."""

    def not_taken(signum, frame):
        raise RuntimeError("SIGTERM reached the test: the command did not take it")

    before = signal.signal(signal.SIGTERM, not_taken)
    yield
    signal.signal(signal.SIGTERM, before)


def signal_at_start(signum: int):
    """Stands for a signal that lands while a command loads its models (seconds, before
    the first game)."""

    def loading(*args, **kwargs):
        os.kill(os.getpid(), signum)
        time.sleep(5)  # the signal interrupts this
        raise AssertionError("the signal was not taken")

    return loading


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_while_the_tournament_loads_its_entrants_says_so_in_one_line(
    tmp_path, capsys, monkeypatch, signum, status, sigterm_not_taken_fails
):
    monkeypatch.setattr(tournament, "make_entrants", signal_at_start(signum))
    out = tmp_path / "out"
    argv = ["--cpus", "random,easy", "--games", "4", "--out", str(out), "--no-progress"]
    assert exit_message(tournament.main, argv, capsys, status) == (
        "interrupted before the first game: nothing kept, nothing created"
    )
    assert not out.exists()


@pytest.mark.torch
@pytest.mark.parametrize(("signum", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_while_gofish_evaluate_loads_the_model_says_so_in_one_line(
    agents, tmp_path, capsys, monkeypatch, signum, status, sigterm_not_taken_fails
):
    from gofish_training import evaluate

    monkeypatch.setattr(evaluate, "load_agent", signal_at_start(signum))
    keep = tmp_path / "kept"
    argv = [agents["recorded"], "--deals", "2", "--keep", str(keep)]
    assert exit_message(evaluate.main, argv, capsys, status) == (
        "interrupted before the first game: nothing kept, nothing created"
    )
    assert not keep.exists()


def test_sigterm_stops_the_ladder_as_ctrl_c_does_with_status_143(
    tmp_path, capsys, monkeypatch, sigterm_not_taken_fails
):
    def sigterm_after(real, games: int):
        def interrupted(measurement, deals, path, workers=1, on_games=None, say=print):
            def term(done):
                if on_games is not None:
                    on_games(done)
                if done >= games:
                    os.kill(os.getpid(), signal.SIGTERM)

            return real(measurement, deals, path, workers, term, say)

        return interrupted

    keep = tmp_path / "kept"
    monkeypatch.setattr(ladder, "play_kept", sigterm_after(ladder.play_kept, 4))
    argv = ["--games", "6", "--players", "2", "--levels", "random,easy", "--keep", str(keep)]
    assert exit_message(ladder.main, argv, capsys, 143) == (
        f"interrupted: the games played are kept in {keep}; run the same command to go on"
    )
    assert read_games(keep / "p2-easy-random.jsonl")[0]  # the games played are kept


@pytest.mark.parametrize(("workers", "group"), [(1, False), (2, False), (2, True)])
def test_sigterm_stops_a_tournament_as_ctrl_c_does_with_its_workers_quiet(tmp_path, workers, group):
    """SIGTERM to the command (or to its whole process group, as a service manager sends
    it) keeps the deals played, says how to go on in one line and exits with 143; no
    worker prints a traceback (they printed BrokenPipeError), and none hangs the pool."""
    out = tmp_path / "out"
    command = [
        sys.executable, "-m", "gofish_baselines.tournament", "--players", "4",
        "--cpus", "easy,normal,hard,expert", "--games", "100000", "--engine", "python",
        "--workers", str(workers), "--no-progress", "--out", str(out),
    ]  # fmt: skip
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    kept = out / "played.jsonl"
    deadline = time.monotonic() + 120
    while not (kept.exists() and kept.read_text().count("\n") >= 8):  # two deals
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.1)
    if group:
        os.killpg(process.pid, signal.SIGTERM)
    else:
        process.send_signal(signal.SIGTERM)
    try:
        stdout, stderr = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        raise
    assert process.returncode == 143, stderr
    deals = len({record.deal for record in read_games(kept)[0]})
    assert deals >= 2 and stdout == ""
    assert stderr == f"interrupted: {deals} deals kept in {kept}; run the same command to go on\n"


def _stopped_at_once(*args, **kwargs):
    raise KeyboardInterrupt  # Ctrl-C before the first deal ends


def test_a_stop_before_the_first_deal_leaves_no_empty_file_nor_the_folders_made(tmp_path):
    """A later run would take an empty played.jsonl and its settings for a stopped run (the
    tournament said "0 deals kept"): a stop before a whole deal is kept leaves neither, nor
    the folders made for them; a folder that was there stays."""
    path = tmp_path / "results" / "tournament" / "played.jsonl"
    with pytest.raises(KeyboardInterrupt):
        play_kept(measurement(), 2, path, play=_stopped_at_once)
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "mine").mkdir()
    with pytest.raises(KeyboardInterrupt):
        play_kept(measurement(), 2, tmp_path / "mine" / "played.jsonl", play=_stopped_at_once)
    assert [path.name for path in tmp_path.iterdir()] == ["mine"]
    assert list((tmp_path / "mine").iterdir()) == []
