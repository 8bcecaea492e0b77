"""Imitation before reinforcement: start the learner from a scripted CPU's play.

``collect_demonstrations`` seats a teacher CPU in the learner's seat of ``GoFishEnv`` and
records what the learner would have seen (observation, action mask) with the teacher's
ask and the discounted return that followed. ``pretrain`` fits a MaskablePPO policy to them
by supervised learning: the policy head to the teacher's asks (cross-entropy over the legal
actions), the value head to the returns, so that PPO starts from the teacher's play with a
value function that already knows what its states are worth.

``RankRelabelling`` multiplies the examples: the game is the same under any renaming of the
ranks (of equal counts in the deck), so each example may be shown with its ranks renamed at
random, in the observation, the mask and the ask alike. A network that sees a few thousand
games this way generalises to positions it has not seen far better than one that sees them
as they were dealt.

    python -m gofish_training.train --imitate expert --imitate-games 3000 --opponents hard
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path

import numpy as np
import torch
from rich.progress import Progress, track
from sb3_contrib import MaskablePPO

from gofish_env.cpus import make_cpu
from gofish_env.gym_env import GoFishEnv
from gofish_env.observation import ObservationLayout
from gofish_env.players import make_player
from gofish_env.rules import Rules

# Observation sections indexed by rank on their last axis ("recent_asks" is handled apart).
RANK_SECTIONS = (
    "own_hand",
    "caught_ranks",
    "least_held",
    "most_held",
    "known_none",
    "least_if_sure_hits",
    "most_if_sure_hits",
)


@dataclass
class Demonstrations:
    observations: np.ndarray  # float32 (n, observation size)
    masks: np.ndarray  # bool (n, actions)
    actions: np.ndarray  # int64 (n,)
    returns: np.ndarray  # float32 (n,): discounted reward from that step to the end
    # float32 (n, actions): the teacher's scores as a distribution over the legal asks, when
    # it gives scores (soft targets); None: learn its asks alone.
    targets: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.actions)

    @classmethod
    def concatenate(cls, parts: list[Demonstrations]) -> Demonstrations:
        """The examples of ``parts``, in that order (all with soft targets or none)."""
        # Not dataclasses.astuple: it deep-copies every array before they are joined.
        columns = [[getattr(part, f.name) for part in parts] for f in fields(cls)]
        return cls(*(None if column[0] is None else np.concatenate(column) for column in columns))

    def save(self, path: Path) -> None:
        """Compressed, written whole or not at all (a stop midway leaves no partial file)."""
        arrays = {f.name: getattr(self, f.name) for f in fields(self)}
        partial = path.with_name(path.name + ".partial")
        with partial.open("wb") as file:
            np.savez_compressed(file, **{k: v for k, v in arrays.items() if v is not None})
        os.replace(partial, path)

    @classmethod
    def load(cls, path: Path) -> Demonstrations:
        with np.load(path) as arrays:
            return cls(**{f.name: arrays.get(f.name) for f in fields(cls)})


class RankRelabelling:
    """Renames the ranks of examples at random (rank asks only): ``apply`` gives each
    example its own renaming, among ranks with as many cards in the deck (jokers stay).

    Tiebreak points (the sum over a seat's catches) are left as they were: they are the one
    part of the game that tells ranks apart, and they only break ties on catches.
    """

    def __init__(self, layout: ObservationLayout):
        rules = layout.rules
        if rules.ask_for != "rank":
            raise ValueError(
                f"rank relabelling: ask_for is {rules.ask_for!r}; allowed: 'rank' "
                "(exact-card asks name cards, not ranks)"
            )
        ranks = rules.ranks
        # rank_at[i]: the rank that index i stands for (-1: none), in observations and actions.
        rank_at = np.full(layout.size, -1, np.int64)
        for name in RANK_SECTIONS:
            section = layout[name]
            rank_at[section.start : section.stop] = np.tile(np.arange(ranks), section.size // ranks)
        if layout.history:
            asks = layout["recent_asks"]
            width = asks.shape[1]
            wanted_start = 1 + 2 * rules.players  # where the asked rank's one-hot starts in a row
            for row in range(layout.history):
                start = asks.start + row * width + wanted_start
                rank_at[start : start + ranks] = np.arange(ranks)
        self.observation_rank = torch.as_tensor(rank_at)
        self.action_rank = torch.as_tensor(np.tile(np.arange(ranks), rules.players - 1))
        copies = [rules.copies_of(rank) for rank in range(ranks)]
        self.classes = [
            [rank for rank in range(ranks) if copies[rank] == count]
            for count in sorted(set(copies))
        ]
        self.ranks = ranks

    @classmethod
    def for_rules(cls, rules: Rules) -> RankRelabelling | None:
        """The relabelling for these rules, or None where asks name cards."""
        return cls(ObservationLayout(rules)) if rules.ask_for == "rank" else None

    def renamings(self, count: int, generator: torch.Generator) -> torch.Tensor:
        """``count`` random renamings, ``new[i, r]`` the new name of rank r."""
        new = torch.arange(self.ranks).repeat(count, 1)
        for members in self.classes:
            members = torch.as_tensor(members)
            shuffled = torch.argsort(torch.rand(count, len(members), generator=generator), dim=1)
            new[:, members] = members[shuffled]
        return new

    def apply(
        self, observations, masks, actions, new: torch.Tensor, targets=None
    ) -> tuple[torch.Tensor, ...]:
        """The examples with ranks renamed by ``new`` (one renaming per example):
        (observations, masks, actions), and the soft ``targets`` if given."""
        old = torch.argsort(new, dim=1)  # old[i, q]: the rank renamed to q
        observations = _rename(observations, self.observation_rank, old)
        masks = _rename(masks, self.action_rank, old)
        ranks = self.ranks
        actions = (actions // ranks) * ranks + new.gather(1, (actions % ranks)[:, None])[:, 0]
        if targets is None:
            return observations, masks, actions
        return observations, masks, actions, _rename(targets, self.action_rank, old)


def _rename(values: torch.Tensor, rank_at: torch.Tensor, old: torch.Tensor) -> torch.Tensor:
    """``values`` with each rank-indexed entry taken from the entry of the rank renamed to
    it (``old[i, q]``); entries that stand for no rank stay."""
    indexed = rank_at >= 0
    source = torch.arange(values.shape[1]).repeat(len(values), 1)
    ranks = rank_at[indexed]
    source[:, indexed] += old[:, ranks] - ranks
    return values.gather(1, source)


def collect_demonstrations(
    env: GoFishEnv,
    teacher: str,
    games: int,
    gamma: float,
    seed: int,
    progress: bool = False,
    temperature: float = 0.0,
    teacher_options: dict | None = None,
) -> Demonstrations:
    """Play ``games`` episodes of ``env`` with the ``teacher`` CPU in the learner's seat
    (built with ``teacher_options``, for example ``master``'s ``rollouts``).

    With ``temperature`` > 0, a teacher that scores every ask (``scores(view)``, as
    ``expert`` does) and rank asks, each example also keeps softmax(score / temperature)
    over the legal asks: how much better each ask was than the others, not only which won.
    """
    agent = make_player(make_cpu(teacher, **teacher_options) if teacher_options else teacher)
    scorer = getattr(getattr(agent, "cpu", None), "scores", None)
    if temperature <= 0 or env.rules.ask_for != "rank":
        scorer = None
    codec = env.aec.codec
    observations, masks, actions, returns, targets = [], [], [], [], []
    for game in track(range(games), "demonstrations", disable=not progress):
        observation, _ = env.reset(seed=seed + game)
        agent.reset(seed + game)
        rewards = []
        done = False
        while not done:
            if scorer is not None:
                scores = scorer(env.aec.view(env.seat))
                target = np.zeros(codec.size, np.float64)
                values = np.array(list(scores.values()))
                weights = np.exp((values - values.max()) / temperature)
                for (asked, rank), weight in zip(scores, weights / weights.sum(), strict=True):
                    target[codec.to_action(env.seat, asked, rank)] = weight
                targets.append(target)
            action = agent.act(env.aec.turn(env.seat))
            observations.append(observation)
            masks.append(env.action_masks())
            actions.append(action)
            observation, reward, terminated, truncated, _ = env.step(action)
            rewards.append(reward)
            done = terminated or truncated
        discounted, episode_returns = 0.0, []
        for reward in reversed(rewards):
            discounted = reward + gamma * discounted
            episode_returns.append(discounted)
        returns.extend(reversed(episode_returns))
    return Demonstrations(
        np.array(observations, np.float32),
        np.array(masks, bool),
        np.array(actions, np.int64),
        np.array(returns, np.float32),
        np.array(targets, np.float32) if scorer is not None else None,
    )


# Games per saved part of a long collection: what a stop can lose, at most, per worker.
CHUNK_GAMES = 100


def collect_in_parts(
    make_env: Callable[[], GoFishEnv],
    teacher: str,
    games: int,
    gamma: float,
    seed: int,
    temperature: float = 0.0,
    workers: int = 1,
    folder: Path | None = None,
    progress: bool = False,
    teacher_options: dict | None = None,
    after_part: Callable[[], None] | None = None,
) -> Demonstrations:
    """``collect_demonstrations`` over ``games`` games in parts of ``CHUNK_GAMES``, played
    by ``workers`` processes. Each game is seeded by its number alone, so the examples are
    the same, in the same order, whatever the number of workers.

    With ``folder``, each part is saved there as it is done and the parts already there are
    loaded, not played again: a stopped collection goes on where it was. Parts saved with
    other settings (teacher and its options, seed, gamma, temperature, table) are played
    again.
    ``make_env`` must pickle (a ``functools.partial`` of ``GoFishEnv``) when ``workers`` > 1.
    ``after_part`` is called after each part is done (a stop check may raise there).
    """
    after_part = after_part or (lambda: None)
    parts = [(first, min(CHUNK_GAMES, games - first)) for first in range(0, games, CHUNK_GAMES)]
    done: dict[int, Demonstrations] = {}
    if folder is not None:
        played = [teacher, seed, gamma, temperature, repr(make_env)]
        settings = json.dumps([*played, teacher_options] if teacher_options else played)
        _keep_parts_of(folder, settings)
        for first, count in parts:
            if _part_path(folder, first, count).exists():
                done[first] = Demonstrations.load(_part_path(folder, first, count))
    jobs = [
        (first, count, make_env, teacher, gamma, seed, temperature, teacher_options)
        for first, count in parts
        if first not in done
    ]
    with Progress(disable=not progress) as bar, tempfile.TemporaryDirectory() as scratch:
        task = bar.add_task("demonstrations", total=games)
        bar.advance(task, sum(count for first, count in parts if first in done))
        if workers == 1 or len(jobs) <= 1:
            for job in jobs:
                first, count = job[:2]
                demos = _collect_part(job)
                if folder is not None:
                    demos.save(_part_path(folder, first, count))
                done[first] = demos
                bar.advance(task, count)
                after_part()
        else:
            # Each worker saves its part and sends back only its name: a part is megabytes,
            # and a worker blocked writing one into the result pipe would hang the pool's
            # terminate. spawn: the workers start clean, without the parent's torch threads;
            # leaving the with-block (a stop included) terminates them.
            into = Path(scratch) if folder is None else folder
            context = multiprocessing.get_context("spawn")
            with context.Pool(min(workers, len(jobs)), initializer=_worker_setup) as pool:
                saved = pool.imap_unordered(_save_part, [(into, *job) for job in jobs])
                for first, count in saved:
                    done[first] = Demonstrations.load(_part_path(into, first, count))
                    bar.advance(task, count)
                    after_part()
    return Demonstrations.concatenate([done[first] for first, _ in parts])


def _keep_parts_of(folder: Path, settings: str) -> None:
    """Make ``folder`` hold parts played with ``settings`` only (none if it held others)."""
    folder.mkdir(parents=True, exist_ok=True)
    about = folder / "settings.json"
    if about.exists() and about.read_text() != settings:
        for part in folder.glob("games_*.npz"):
            part.unlink()
    about.write_text(settings)


def _part_path(folder: Path, first: int, count: int) -> Path:
    return folder / f"games_{first:07d}_{first + count:07d}.npz"


def _collect_part(job: tuple) -> Demonstrations:
    """Games ``first`` .. ``first + count - 1``: game n is seeded by ``seed + n``."""
    first, count, make_env, teacher, gamma, seed, temperature, options = job
    return collect_demonstrations(
        make_env(),
        teacher,
        count,
        gamma,
        seed + first,
        temperature=temperature,
        teacher_options=options,
    )


def _save_part(job: tuple) -> tuple[int, int]:
    """In a worker: play a part and save it in the folder ``job[0]``."""
    folder, first, count, *_ = job
    _collect_part(job[1:]).save(_part_path(folder, first, count))
    return first, count


def _worker_setup() -> None:
    """A collecting worker leaves Ctrl-C to the parent, which keeps the parts done and ends
    the workers (with SIGTERM, so that one stays); one thread: the workers share the cores."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    torch.set_num_threads(1)


def pretrain(
    model: MaskablePPO,
    demos: Demonstrations,
    epochs: int,
    batch_size: int = 256,
    learning_rate: float = 1e-3,
    seed: int = 0,
    progress: bool = False,
    relabelling: RankRelabelling | None = None,
) -> list[dict[str, float]]:
    """Fit the model's policy and value heads to ``demos`` (Adam, its step size falling
    linearly from ``learning_rate`` to zero over the epochs): the policy to the teacher's
    soft targets if the demonstrations have them, else to its asks. Returns each epoch's
    mean losses and how often the policy's most likely action is the teacher's. With
    ``relabelling`` every example is shown with its ranks renamed anew each epoch."""
    policy = model.policy
    policy.set_training_mode(True)
    optimizer = torch.optim.Adam(policy.parameters(), lr=learning_rate)
    # The step size falls linearly to zero over the passes: the last ones fine-tune the fit.
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda epoch: 1.0 - epoch / epochs)
    rng = np.random.default_rng(seed)
    generator = torch.Generator().manual_seed(seed)
    soft = demos.targets is not None
    arrays = [demos.observations, demos.masks, demos.actions, demos.returns]
    tensors = [torch.as_tensor(array) for array in arrays + ([demos.targets] if soft else [])]
    history = []
    for _ in track(range(epochs), "imitation", disable=not progress):
        order = torch.as_tensor(rng.permutation(len(demos)))
        sums = {"policy_loss": 0.0, "value_loss": 0.0, "agreement": 0.0}
        for start in range(0, len(demos), batch_size):
            batch = order[start : start + batch_size]
            observations, masks, actions, returns, *targets = (tensor[batch] for tensor in tensors)
            if relabelling is not None:
                new = relabelling.renamings(len(batch), generator)
                observations, masks, actions, *targets = relabelling.apply(
                    observations, masks, actions, new, *targets
                )
            if soft:  # cross-entropy with the teacher's distribution over the legal asks
                values = policy.predict_values(observations)
                distribution = policy.get_distribution(observations, masks).distribution
                log_probs = torch.log_softmax(distribution.logits, dim=1)
                policy_loss = -(targets[0] * log_probs).sum(dim=1).mean()
            else:  # cross-entropy with the teacher's ask
                values, log_prob, _ = policy.evaluate_actions(observations, actions, masks)
                policy_loss = -log_prob.mean()
            value_loss = torch.nn.functional.mse_loss(values.flatten(), returns)
            optimizer.zero_grad()
            (policy_loss + 0.5 * value_loss).backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), model.max_grad_norm)
            optimizer.step()
            with torch.no_grad():
                distribution = policy.get_distribution(observations, masks)
                chosen = distribution.distribution.probs.argmax(dim=1)
            size = len(batch)
            sums["policy_loss"] += policy_loss.item() * size
            sums["value_loss"] += value_loss.item() * size
            sums["agreement"] += (chosen == actions).float().sum().item()
        history.append({key: value / len(demos) for key, value in sums.items()})
        schedule.step()
    policy.set_training_mode(False)
    return history
