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
    names the x axis."""
    figure, axes = plt.subplots(figsize=(8, 5))
    levels = [result["cpu"] for result in history[0]["results"]] if history else []
    for level in levels:
        timesteps, rates, lows, highs = [], [], [], []
        for entry in history:
            result = next(r for r in entry["results"] if r["cpu"] == level)
            low, high = result["win_rate_ci"] or (result["win_rate"], result["win_rate"])
            timesteps.append(entry["timesteps"])
            rates.append(result["win_rate"])
            lows.append(low)
            highs.append(high)
        (line,) = axes.plot(timesteps, rates, marker="o", label=f"vs {level}")
        axes.fill_between(timesteps, lows, highs, color=line.get_color(), alpha=0.15)
    if history:
        fair = history[0]["results"][0]["fair_share"]
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
