"""Go Fish as an RLlib ``MultiAgentEnv``, with the scripted CPUs played inside.

    from gofish_training.rllib_env import register_env
    register_env()  # "gofish" in ray.tune.registry
    config = PPOConfig().environment("gofish", env_config={"players": 4, "opponents": "easy"})

Each episode is one game of the AEC ``raw_env``. The seats are of three kinds:

- **learner** seats, agent ids ``learner_S`` (S = the seat), mapped to the learning module;
- **snapshot** seats, ``snapshot_S``, mapped to frozen copies of the learner
  (``gofish_training.rllib_policies``);
- **CPU** seats, played inside the env by the project's scripted CPUs. They never reach
  RLlib: no agent id, no forward pass, no room in the batches.

``env_config["opponents"]`` says who sits in the seats that are not learners (see
``OpponentPlan``): ``"selfplay"`` (every seat is a learner), a CPU level, ``"snapshot"``,
or ``"mix:A,B,..."`` (each seat draws one member each game). ``learner_seats`` is how many
seats the learner holds (default: all with self-play, else 1); which seats, and each other
seat's member, are drawn at every reset from the env's seeded generator.

Turn-based: a step's observation dict holds only the seat to move, with the reward it
earned since its last move (RLlib credits it to that move). What a seat earned before its
first move (catches laid at the deal, or on the CPUs' turns when they move first) is paid
with its reward after that move, so its rewards sum to its return. When the game ends, every
exposed seat gets its last observation and what it earned, and its info says its share of
the win (``win_share``: 1/k for one of k winners). A game cut off at ``max_asks`` asks is
truncated. A game that ends before any exposed seat moves (possible under early-ending
rules) is dealt again.

An illegal ask (one the action mask rules out) ends the game, as PettingZoo's classic
envs do: the offender gets ``illegal_reward`` (default -1), its info says
``illegal_action``, nobody wins. So RLlib's env pre-check, which steps with unmasked
random actions, passes. ``illegal_action="raise"`` raises ``IllegalAsk`` with the reason
instead. The masking module (``gofish_training.rllib_module``) never asks illegally.

Seeding: RLlib resets sub-env ``i`` of EnvRunner ``w`` with ``seed + w + i``, so seeds
repeat across runners; the env mixes the worker index in (``derive_seed``), so every
sub-env of every runner deals its own games, and the same seed gives the same games.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from ray.rllib.env.multi_agent_env import MultiAgentEnv
from ray.tune.registry import register_env as _register_env

from gofish_env.aec_env import DEFAULT_MAX_ASKS, MAX_REDEALS, raw_env
from gofish_env.cpus import CPU_LEVELS
from gofish_env.evaluation.stats import derive_seed
from gofish_env.game import IllegalAsk
from gofish_env.observation import DEFAULT_HISTORY
from gofish_env.players import MIX_PREFIX, make_player, mix_members
from gofish_env.rewards import check_illegal_action
from gofish_env.rules import Rules, is_integer

ENV_NAME = "gofish"
LEARNER = "learner"
SNAPSHOT = "snapshot"
SELFPLAY = "selfplay"
CONFIG_KEYS = (
    "players",
    "rules",
    "reward",
    "opponents",
    "learner_seats",
    "history",
    "max_asks",
    "illegal_action",
    "illegal_reward",
)


@dataclass(frozen=True)
class OpponentPlan:
    """Who sits in the seats the learner does not hold: ``members`` are CPU levels and
    ``"snapshot"`` (a frozen copy of the learner); empty for self-play."""

    members: tuple[str, ...]

    @classmethod
    def parse(cls, spec: str) -> OpponentPlan:
        """``"selfplay"``, a CPU level, ``"snapshot"``, or ``"mix:A,B,..."`` of those two."""
        allowed = (
            f"{SELFPLAY}, a CPU level ({', '.join(CPU_LEVELS)}), {SNAPSHOT}, or "
            f"mix:A,B,... of CPU levels and {SNAPSHOT}"
        )
        if not isinstance(spec, str):
            raise ValueError(f"opponents: got {spec!r}; allowed: {allowed}")
        if spec == SELFPLAY:
            return cls(())
        try:
            members = mix_members(spec) if spec.startswith(MIX_PREFIX) else [spec]
        except ValueError as error:
            raise ValueError(f"opponents: {error}") from None
        for member in members:
            if member != SNAPSHOT and member not in CPU_LEVELS:
                raise ValueError(f"opponents: unknown opponent {member!r} in {spec!r}; {allowed}")
        return cls(tuple(members))

    @property
    def selfplay(self) -> bool:
        return not self.members

    @property
    def uses_snapshots(self) -> bool:
        return SNAPSHOT in self.members

    def default_learner_seats(self, players: int) -> int:
        return players if self.selfplay else 1


@dataclass(frozen=True)
class EnvSettings:
    """``env_config``, checked: every bad value is refused with its key and what is allowed."""

    rules: Rules
    reward: str
    plan: OpponentPlan
    learner_seats: int
    history: int
    max_asks: int
    illegal_action: str = "terminate"
    illegal_reward: float = -1.0

    @classmethod
    def from_config(cls, config: Mapping[str, Any] | None) -> EnvSettings:
        config = dict(config or {})
        unknown = sorted(set(config) - set(CONFIG_KEYS))
        if unknown:
            raise ValueError(
                f"env_config: unknown key {unknown[0]!r}; allowed: {', '.join(CONFIG_KEYS)}"
            )
        rules = config.get("rules", "table")
        if isinstance(rules, str):
            try:
                rules = Rules.preset(rules, players=config.get("players", 4))
            except ValueError as error:  # Rules names a bad preset "preset:"; the key is rules
                field, _, reason = str(error).partition(": ")
                if field != "preset":
                    raise
                raise ValueError(f"rules: {reason}") from None
        else:
            rules = Rules.resolve(config.get("players"), rules)
        plan = OpponentPlan.parse(config.get("opponents", SELFPLAY))
        seats = config.get("learner_seats")
        if seats is None:
            seats = plan.default_learner_seats(rules.players)
        low = rules.players if plan.selfplay else 1
        high = rules.players if plan.selfplay else rules.players - 1
        if not is_integer(seats) or not low <= seats <= high:
            allowed = f"{low}" if low == high else f"an integer from {low} to {high}"
            raise ValueError(
                f"learner_seats: got {seats!r} with opponents {config.get('opponents')!r}; "
                f"allowed: {allowed}"
            )
        seats = int(seats)
        illegal_action = config.get("illegal_action", "terminate")
        illegal_reward = check_illegal_action(illegal_action, config.get("illegal_reward", -1.0))
        return cls(
            rules=rules,
            reward=config.get("reward", "catches"),
            plan=plan,
            learner_seats=seats,
            history=config.get("history", DEFAULT_HISTORY),
            max_asks=config.get("max_asks", DEFAULT_MAX_ASKS),
            illegal_action=illegal_action,
            illegal_reward=illegal_reward,
        )


def agent_id(role: str, seat: int) -> str:
    return f"{role}_{seat}"


def role_of(agent: str) -> str:
    """``"learner"`` or ``"snapshot"``, from an agent id."""
    return agent.rpartition("_")[0]


class GoFishMultiAgentEnv(MultiAgentEnv):
    """See the module docstring. ``config`` is RLlib's ``env_config`` (an ``EnvContext``
    whose ``worker_index`` seeds apart the games of different EnvRunners)."""

    def __init__(self, config: Mapping[str, Any] | None = None):
        super().__init__()
        settings = EnvSettings.from_config(config)
        self.settings = settings
        self.worker_index = int(getattr(config, "worker_index", 0) or 0)
        self.aec = raw_env(
            rules=settings.rules,
            reward=settings.reward,
            history=settings.history,
            max_asks=settings.max_asks,
        )
        self.rules = settings.rules
        players = self.rules.players
        self.possible_agents = [
            agent_id(role, seat) for role in (LEARNER, SNAPSHOT) for seat in range(players)
        ]
        observation_space = self.aec.observation_spaces["player_0"]
        action_space = self.aec.action_spaces["player_0"]
        self.observation_spaces = dict.fromkeys(self.possible_agents, observation_space)
        self.action_spaces = dict.fromkeys(self.possible_agents, action_space)
        # One CPU player per (seat, level), made once: CPUs keep per-game memory, reset
        # with their own seed every game.
        self._cpus = {
            (seat, level): make_player(level, self.rules)
            for seat in range(players)
            for level in set(settings.plan.members) - {SNAPSHOT}
        }
        self._rng = np.random.default_rng(derive_seed(0, self.worker_index))
        self._seat_agents: list[str | None] = [None] * players  # None: a CPU seat
        self._seat_cpus: dict[int, Any] = {}
        # What an exposed seat earned that the AEC env no longer holds and RLlib has not
        # been given yet: the AEC env zeroes a seat's cumulative reward when it moves, and
        # reset() returns no rewards, so what the first seat to move earned before reset()
        # returned (its catches at the deal, catches on the CPUs' turns) is kept here and
        # paid with its next reward.
        self._owed: dict[str, float] = {}
        self.agents = []

    # ------------------------------------------------------------------ episode

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        if options and "game" in options:  # refused before anything changes
            raise ValueError(
                "options['game']: a start position is not offered by the RLlib env (its "
                "seats and CPUs are drawn at each deal); use raw_env or GoFishEnv for it"
            )
        if seed is not None:
            self._rng = np.random.default_rng(derive_seed(seed, self.worker_index))
        for _ in range(MAX_REDEALS):
            self._seat_players()
            self.aec.reset(seed=int(self._rng.integers(2**63)))
            self._play_cpus()
            if not self._over():
                break
            if not self.aec.game.is_over:  # cut off by the ask limit, not ended: no re-deal
                raise ValueError(
                    f"max_asks: the CPUs made all {self.aec.max_asks} asks before a learner's "
                    f"first move; allowed: a larger max_asks"
                )
        else:
            raise RuntimeError(f"no game in {MAX_REDEALS} deals let a learner or snapshot move")
        self.agents = [agent for agent in self._seat_agents if agent is not None]
        agent = self._to_move()
        aec_agent = self._aec_agent(agent)
        # Its first step zeroes its cumulative reward in the AEC env before RLlib has seen it.
        self._owed = {agent: float(self.aec._cumulative_rewards[aec_agent])}
        return {agent: self.aec.observe(aec_agent)}, {}

    def _seat_players(self) -> None:
        """Draw this game's seats: which the learner holds, and who sits in the others."""
        settings, rng = self.settings, self._rng
        players = self.rules.players
        learners = set(rng.choice(players, settings.learner_seats, replace=False).tolist())
        self._seat_cpus = {}
        for seat in range(players):
            if seat in learners:
                self._seat_agents[seat] = agent_id(LEARNER, seat)
                continue
            member = settings.plan.members[int(rng.integers(len(settings.plan.members)))]
            if member == SNAPSHOT:
                self._seat_agents[seat] = agent_id(SNAPSHOT, seat)
            else:
                self._seat_agents[seat] = None
                cpu = self._cpus[(seat, member)]
                cpu.reset(int(rng.integers(2**63)))
                self._seat_cpus[seat] = cpu

    def step(self, action_dict: Mapping[str, Any]):
        agent = self._to_move()
        if agent not in action_dict:
            raise ValueError(
                f"action_dict: got actions for {sorted(action_dict)}; allowed: one action "
                f"for {agent}, the seat to move"
            )
        aec = self.aec
        try:
            aec.step(int(action_dict[agent]))
        except IllegalAsk:  # refused with its reason; nothing changed
            if self.settings.illegal_action == "raise":
                raise
            return self._final_step(offender=agent)
        self._play_cpus()
        if self._over():
            return self._final_step()
        agent = self._to_move()
        aec_agent = self._aec_agent(agent)
        observations = {agent: aec.observe(aec_agent)}
        rewards = {agent: self._earned(agent)}
        return observations, rewards, {"__all__": False}, {"__all__": False}, {}

    def _final_step(self, offender: str | None = None):
        """Every exposed seat's last observation and what it earned since its last move.
        An ``offender`` (an illegal ask ended the game) gets ``illegal_reward`` instead, and
        nobody wins."""
        aec = self.aec
        game = aec.game
        over = game.is_over or offender is not None
        winners = () if offender else game.winners if game.is_over else game.leaders()
        observations, rewards, infos = {}, {}, {}
        for agent in self.agents:
            aec_agent = self._aec_agent(agent)
            seat = aec.agent_name_mapping[aec_agent]
            observations[agent] = aec.observe(aec_agent)
            rewards[agent] = self._earned(agent)
            infos[agent] = {
                "win_share": 1.0 / len(winners) if seat in winners else 0.0,
                "illegal_action": agent == offender,
            }
        if offender is not None:
            rewards[offender] = self.settings.illegal_reward
        terminated = dict.fromkeys(self.agents, over)
        truncated = dict.fromkeys(self.agents, not over)
        terminated["__all__"], truncated["__all__"] = over, not over
        return observations, rewards, terminated, truncated, infos

    def _earned(self, agent: str) -> float:
        """What ``agent`` earned since its last move (since the deal before its first), now
        paid: the AEC env's cumulative reward and anything owed from ``reset()``."""
        return float(self.aec._cumulative_rewards[self._aec_agent(agent)]) + self._owed.pop(
            agent, 0.0
        )

    def _play_cpus(self) -> None:
        """The CPU seats move until an exposed seat is to move or the game is over."""
        aec = self.aec
        while not self._over():
            seat = aec.game.current_player
            cpu = self._seat_cpus.get(seat)
            if cpu is None:
                return
            aec.step(cpu.act(aec.turn(seat)))

    def _over(self) -> bool:
        aec = self.aec
        return aec.game.is_over or aec.truncations["player_0"]

    def _to_move(self) -> str:
        return self._seat_agents[self.aec.game.current_player]

    def _aec_agent(self, agent: str) -> str:
        return self.aec.possible_agents[int(agent.rpartition("_")[2])]


def env_creator(config: Mapping[str, Any] | None = None) -> GoFishMultiAgentEnv:
    """What ``ray.tune.registry`` calls with each EnvRunner's ``env_config``."""
    return GoFishMultiAgentEnv(config)


def register_env(name: str = ENV_NAME) -> str:
    """Register the env with ``ray.tune.registry`` under ``name`` (default ``"gofish"``)."""
    _register_env(name, env_creator)
    return name
