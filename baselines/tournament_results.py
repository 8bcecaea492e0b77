"""A tournament's result: its games and standings, as text, JSON, CSV and a chart."""

from __future__ import annotations

import csv
import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gofish_env.evaluation import Entrant, EntrantStats, GameRecord, Summary
from gofish_env.rules import Rules


@dataclass
class TournamentResult:
    entrants: list[Entrant]
    rules: Rules
    seed: int
    deals: int
    lineups: list[tuple[int, ...]]
    records: list[GameRecord]
    summary: Summary
    engine: str = "python"  # the engine the games were played in ("python" or "vector")

    @property
    def names(self) -> list[str]:
        return [entrant.name for entrant in self.entrants]

    @property
    def standings(self) -> list[EntrantStats]:
        """Per entrant, in entrant order."""
        return self.summary.standings

    @property
    def head_to_head(self) -> np.ndarray:
        return self.summary.head_to_head

    @property
    def games(self) -> int:
        return len(self.records)

    def ranked(self) -> list[EntrantStats]:
        """Standings best first: by rating, then win rate."""
        return sorted(self.standings, key=lambda s: (-s.rating, -s.win_rate, s.name))

    def to_dict(self) -> dict:
        return {
            "config": {
                "players": self.rules.players,
                "rules": self.rules.describe(),
                "rules_fields": asdict(self.rules),
                "seed": self.seed,
                "engine": self.engine,
                "deals": self.deals,
                "games": self.games,
                "truncated_games": sum(record.truncated for record in self.records),
                "entrants": [
                    {"name": entrant.name, "spec": entrant.description} for entrant in self.entrants
                ],
                "lineups": [[self.names[e] for e in lineup] for lineup in self.lineups],
            },
            "standings": [_json_ready(asdict(stats)) for stats in self.ranked()],
            "head_to_head": {
                "entrants": self.names,
                "ahead": _json_ready(self.summary.head_to_head.tolist()),
                "meetings": self.summary.meetings.astype(int).tolist(),
            },
            "games": [
                {
                    **{k: v for k, v in asdict(record).items() if k != "decision_seconds"},
                    "seats": [self.names[e] for e in record.seats],
                    "winners": list(record.winners),
                }
                for record in self.records
            ],
        }

    def table(self) -> str:
        """The standings and head-to-head matrix as plain text."""

        def interval(ci: tuple[float, float] | None, digits: int) -> str:
            return "-" if ci is None else f"{ci[0]:.{digits}f}..{ci[1]:.{digits}f}"

        width = max(6, *(len(name) for name in self.names))
        lines = [
            f"{self.games} games ({self.deals} deals x {self.rules.players} seatings), "
            f"{self.rules.players} players, {rules_text(self.rules)}, seed {self.seed}",
            "",
            f"{'#':>2} {'entrant':<{width}} {'rating':>6} {'95% CI':>11}  {'win %':>5} "
            f"{'95% CI':>11}  {'catches':>7} {'95% CI':>11}  {'points':>6} {'95% CI':>13}",
        ]
        for place, stats in enumerate(self.ranked(), 1):
            win_ci = stats.win_rate_ci and (stats.win_rate_ci[0] * 100, stats.win_rate_ci[1] * 100)
            lines.append(
                f"{place:>2} {stats.name:<{width}} {stats.rating:>6.0f} "
                f"{interval(stats.rating_ci, 0):>11}  {stats.win_rate * 100:>5.1f} "
                f"{interval(win_ci, 1):>11}  {stats.mean_catches:>7.2f} "
                f"{interval(stats.mean_catches_ci, 2):>11}  {stats.mean_points:>6.1f} "
                f"{interval(stats.mean_points_ci, 1):>13}"
            )
        lines += ["", "Head to head (row finished ahead of column, % of meetings, ties half):"]
        widths = [max(6, len(name)) for name in self.names]
        header = " ".join(f"{name:>{w}}" for name, w in zip(self.names, widths, strict=True))
        lines.append(" " * (width + 1) + header)
        for a, name in enumerate(self.names):
            cells = [
                f"{'-':>{w}}" if math.isnan(value) else f"{value * 100:>{w}.1f}"
                for value, w in zip(self.summary.head_to_head[a], widths, strict=True)
            ]
            lines.append(f"{name:<{width}} " + " ".join(cells))
        return "\n".join(lines)

    def write(self, out_dir: str | Path) -> dict[str, Path]:
        """Write results.json, standings.csv, head_to_head.csv, games.csv and win_rates.png."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        paths = {
            "json": out / "results.json",
            "standings": out / "standings.csv",
            "head_to_head": out / "head_to_head.csv",
            "games": out / "games.csv",
            "chart": out / "win_rates.png",
        }
        paths["json"].write_text(json.dumps(self.to_dict(), indent=2) + "\n")
        with paths["standings"].open("w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(
                [
                    "rank", "entrant", "spec", "seats", "deal_groups", "wins",
                    "win_rate", "win_rate_low", "win_rate_high",
                    "mean_catches", "mean_catches_low", "mean_catches_high",
                    "mean_points", "mean_points_low", "mean_points_high",
                    "rating", "rating_low", "rating_high",
                ]
            )  # fmt: skip
            for place, stats in enumerate(self.ranked(), 1):
                writer.writerow(
                    [
                        place, stats.name, stats.spec, stats.seats, stats.deal_groups,
                        _num(stats.wins),
                        _num(stats.win_rate), *_pair(stats.win_rate_ci),
                        _num(stats.mean_catches), *_pair(stats.mean_catches_ci),
                        _num(stats.mean_points), *_pair(stats.mean_points_ci),
                        _num(stats.rating), *_pair(stats.rating_ci),
                    ]
                )  # fmt: skip
        with paths["head_to_head"].open("w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["entrant", *self.names])
            for a, name in enumerate(self.names):
                row = self.summary.head_to_head[a]
                writer.writerow([name, *("" if math.isnan(v) else _num(v) for v in row)])
        with paths["games"].open("w", newline="") as handle:
            writer = csv.writer(handle)
            players = self.rules.players
            writer.writerow(
                ["deal", "rotation", "deal_seed", "asks", "truncated", "winners"]
                + [f"{kind}_{seat}" for seat in range(players) for kind in ("entrant", "catches")]
                + [f"points_{seat}" for seat in range(players)]
            )
            for record in self.records:
                writer.writerow(
                    [
                        record.deal,
                        record.rotation,
                        record.deal_seed,
                        record.asks,
                        int(record.truncated),
                        " ".join(map(str, record.winners)),
                    ]
                    + [
                        value
                        for seat in range(players)
                        for value in (self.names[record.seats[seat]], record.catches[seat])
                    ]
                    + list(record.points)
                )
        self.plot(paths["chart"])
        return paths

    def plot(self, path: str | Path) -> None:
        """A bar chart of win rates with their 95% intervals (matplotlib, no pyplot state)."""
        from matplotlib.figure import Figure

        ranked = self.ranked()
        rates = np.array([stats.win_rate * 100 for stats in ranked])
        errors = np.array(
            [
                [0.0, 0.0]
                if stats.win_rate_ci is None
                else [
                    stats.win_rate * 100 - stats.win_rate_ci[0] * 100,
                    stats.win_rate_ci[1] * 100 - stats.win_rate * 100,
                ]
                for stats in ranked
            ]
        ).T
        figure = Figure(figsize=(max(4.0, 1.2 * len(ranked) + 2), 4.0), layout="constrained")
        axes = figure.subplots()
        positions = np.arange(len(ranked))
        axes.bar(positions, rates, yerr=errors, capsize=6, color="tab:blue", alpha=0.8)
        axes.axhline(100 / self.rules.players, color="gray", linestyle="--", linewidth=1)
        # The names as typed: a "$" in one is no TeX (mathtext would fail on "$\\x$").
        axes.set_xticks(positions, [stats.name for stats in ranked], parse_math=False)
        axes.set_ylabel("win rate (%), 95% CI")
        axes.set_ylim(0, max(100 / self.rules.players, float((rates + errors[1]).max())) * 1.15)
        axes.set_title(
            f"{self.games} games, {self.rules.players} players, {rules_text(self.rules)}",
            fontsize=10,
        )
        figure.savefig(path, dpi=100)


def rules_text(rules: Rules) -> str:
    """The house rules in force apart from the player count, e.g. ``set_size=2``."""
    parts = [part for part in rules.describe().split(", ") if not part.startswith("players=")]
    return ", ".join(parts) or "table rules"


def _num(value: float) -> str:
    return f"{value:.6g}"


def _pair(ci: tuple[float, float] | None) -> list[str]:
    return ["", ""] if ci is None else [_num(ci[0]), _num(ci[1])]


def _json_ready(value: Any) -> Any:
    """NaN -> None and tuples -> lists, for strict JSON."""
    if isinstance(value, float):
        return None if math.isnan(value) else value
    if isinstance(value, dict):
        return {key: _json_ready(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_json_ready(item) for item in value]
    return value
