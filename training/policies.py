"""A policy that scores each ask from what the observation says about that ask.

SB3's ``MlpPolicy`` maps the whole observation to one logit per action through dense layers:
it has to learn separately, for each of the (P - 1) x 13 asks, which cells of the
observation concern that target and that rank. ``AskScoringPolicy`` shares that work. For
every ask (target, rank) it gathers the cells that describe it: how many of the rank the
asker holds; for each opponent (the target first, then the others from the target's left)
what it is proved and assumed to hold of the rank (the bounds, and the bounds if every seat
takes sure hits), its hand size and how many of its cards the bounds account for; the
rank's catches; the pool. One small network, the
same for every ask, turns those cells and an embedding of the whole observation into the
ask's logit. The value comes from the same embedding.

    python -m gofish_training.train --policy ask-scoring --imitate expert --opponents hard
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import torch
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from torch import nn

from gofish_env.observation import DEFAULT_HISTORY, ObservationLayout
from gofish_env.rules import Rules

# Per opponent and rank: the sections read for each ask, in this order; per opponent, the
# sum over ranks of these (the cards of its hand the bounds account for).
OPPONENT_RANK_SECTIONS = (
    "least_held",
    "most_held",
    "known_none",
    "least_if_sure_hits",
    "most_if_sure_hits",
)
ROW_SUM_SECTIONS = ("least_held", "least_if_sure_hits")
SCORER_LAYERS = (64, 64)


def ask_feature_index(layout: ObservationLayout) -> tuple[np.ndarray, np.ndarray]:
    """(cells, opponents): ``cells[a]`` the observation cells that describe ask ``a``
    (actions x cells), ``opponents[a]`` the opponent rows in the order ask ``a`` reads them
    (actions x (P - 1)).

    Ask a = k * A + r asks the opponent k + 1 seats to the left for rank (or card) r; its
    cells are the asker's count of r; for each opponent, starting with the target and going
    on from its left, the ``OPPONENT_RANK_SECTIONS`` cells of r and its hand size; the
    catches of r by each seat; and the pool size.
    """
    rules = layout.rules
    players, ranks, asks = rules.players, rules.ranks, rules.ask_count
    opponents = players - 1
    rows, orders = [], []
    for action in range(opponents * asks):
        target, wanted = divmod(action, asks)
        rank = wanted // 4 if rules.ask_for == "card" else wanted
        cells = [layout["own_hand"].start + rank]
        order = [(target + step) % opponents for step in range(opponents)]
        for opponent in order:  # rows among the opponents, the target first
            for name in OPPONENT_RANK_SECTIONS:
                cells.append(layout[name].start + opponent * ranks + rank)
            cells.append(layout["hand_sizes"].start + opponent + 1)
        cells.extend(layout["caught_ranks"].start + seat * ranks + rank for seat in range(players))
        cells.append(layout["pool_size"].start)
        rows.append(cells)
        orders.append(order)
    return np.array(rows, np.int64), np.array(orders, np.int64)


def mlp(sizes: list[int], activation: type[nn.Module]) -> nn.Sequential:
    """Dense layers of these sizes, each followed by ``activation``."""
    layers: list[nn.Module] = []
    for inputs, outputs in itertools.pairwise(sizes):
        layers += [nn.Linear(inputs, outputs), activation()]
    return nn.Sequential(*layers)


class AskScoring(nn.Module):
    """SB3's "mlp extractor" slot: observation -> (one logit per ask, value features)."""

    def __init__(
        self, layout: ObservationLayout, embedding: list[int], activation: type[nn.Module]
    ):
        super().__init__()
        cells, orders = ask_feature_index(layout)
        self.register_buffer("cells", torch.as_tensor(cells), persistent=False)
        self.register_buffer("orders", torch.as_tensor(orders), persistent=False)
        self.row_sections = [
            (layout[name].start, layout[name].stop, layout[name].shape) for name in ROW_SUM_SECTIONS
        ]
        self.embed = mlp([layout.size, *embedding], activation)
        width = embedding[-1] if embedding else layout.size
        inputs = cells.shape[1] + len(ROW_SUM_SECTIONS) * orders.shape[1]
        # The scorer's first layer on [ask cells, embedding], with the embedding's part
        # computed once per observation rather than once per ask.
        self.first_cells = nn.Linear(inputs, SCORER_LAYERS[0])
        self.first_context = nn.Linear(width, SCORER_LAYERS[0], bias=False)
        self.first_activation = activation()
        self.scorer = nn.Sequential(
            mlp(list(SCORER_LAYERS), activation), nn.Linear(SCORER_LAYERS[-1], 1)
        )
        self.latent_dim_pi = cells.shape[0]
        self.latent_dim_vf = width

    def forward(self, observation: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        embedding = self.embed(observation)
        return self._scores(observation, embedding), embedding

    def forward_actor(self, observation: torch.Tensor) -> torch.Tensor:
        return self._scores(observation, self.embed(observation))

    def forward_critic(self, observation: torch.Tensor) -> torch.Tensor:
        return self.embed(observation)

    def _scores(self, observation: torch.Tensor, embedding: torch.Tensor) -> torch.Tensor:
        parts = [observation[:, self.cells]]  # batch x asks x cells
        for start, stop, shape in self.row_sections:
            sums = observation[:, start:stop].reshape(-1, *shape).sum(dim=2)  # batch x opponents
            parts.append(sums[:, self.orders])
        hidden = self.first_cells(torch.cat(parts, dim=2))
        hidden = self.first_activation(hidden + self.first_context(embedding)[:, None, :])
        return self.scorer(hidden).squeeze(2)


class AskScoringPolicy(MaskableActorCriticPolicy):
    """MaskablePPO's policy with ``AskScoring`` in place of the dense actor head.

    ``rules`` and ``history`` must be those of the env's observation; ``net_arch`` (a list
    of sizes) is the embedding of the whole observation, which the value head reads and
    every ask's scorer sees.
    """

    def __init__(
        self,
        *args: Any,
        rules: Rules | None = None,
        history: int = DEFAULT_HISTORY,
        **kwargs: Any,
    ):
        self.layout = ObservationLayout(Rules() if rules is None else rules, history)
        super().__init__(*args, **kwargs)

    def _build_mlp_extractor(self) -> None:
        size = self.layout.size
        if self.features_dim != size:
            raise ValueError(
                f"observation: {self.features_dim} values, but the rules and history given "
                f"to AskScoringPolicy lay out {size}"
            )
        embedding = list(self.net_arch if isinstance(self.net_arch, list) else [])
        self.mlp_extractor = AskScoring(self.layout, embedding, self.activation_fn)

    def _build(self, lr_schedule) -> None:
        super()._build(lr_schedule)
        # The extractor's output already is one logit per ask.
        self.action_net = nn.Identity()
        self.optimizer = self.optimizer_class(
            self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs
        )

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        data.update(rules=self.layout.rules, history=self.layout.history)
        return data
