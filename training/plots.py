"""The learning curve: win rate against each CPU level over training steps."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only; no screen needed
import matplotlib.pyplot as plt


def plot_learning_curve(
    history: list[dict], path: Path, title: str = "", steps: str = "training steps"
) -> Path:
    """Plot ``history`` (entries ``{"timesteps", "results": [LevelResult as dict]}``) with
    each level's 95% interval as a band and the fair share as a dashed line; ``steps``
    names the x axis. Each level is drawn over the entries that have it (the levels
    evaluated may change when a run is resumed)."""
    figure, axes = plt.subplots(figsize=(8, 5))
    # Every level any entry has, in the order first seen: a resume may evaluate others.
    levels = list(dict.fromkeys(r["cpu"] for entry in history for r in entry["results"]))
    for level in levels:
        timesteps, rates, lows, highs = [], [], [], []
        for entry in history:
            result = next((r for r in entry["results"] if r["cpu"] == level), None)
            if result is None:  # not evaluated at this point
                continue
            low, high = result["win_rate_ci"] or (result["win_rate"], result["win_rate"])
            timesteps.append(entry["timesteps"])
            rates.append(result["win_rate"])
            lows.append(low)
            highs.append(high)
        (line,) = axes.plot(timesteps, rates, marker="o", label=f"vs {level}")
        axes.fill_between(timesteps, lows, highs, color=line.get_color(), alpha=0.15)
    shares = [entry["results"][0]["fair_share"] for entry in history if entry["results"]]
    if shares:
        fair = shares[0]
        axes.axhline(fair, color="grey", linestyle="--", label=f"fair share {fair:.2f}")
    axes.set_xlabel(steps)
    axes.set_ylabel("win rate (95% interval)")
    axes.set_ylim(0, 1)
    axes.set_title(title or "Learning curve")
    axes.legend(loc="upper left")
    axes.grid(alpha=0.3)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return Path(path)
