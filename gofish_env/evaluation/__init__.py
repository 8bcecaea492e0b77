"""Measuring players: one harness for duplicate deals (``harness``), who sits where
(``schedule``), named entrants (``entrants``), standings (``standings``) and the
statistics under them (``stats``); the decisions of a played game, for benchmarks
(``positions``); the JSON-lines files long runs append to and go on from
(``run_files``). The ladder, the tournament and the evaluation of trained agents are
reports on top of these."""

from gofish_env.evaluation.entrants import Entrant, make_entrants
from gofish_env.evaluation.harness import ENGINES, GameRecord, Measurement, engine_used, play_deals
from gofish_env.evaluation.schedule import deal_count, make_lineups
from gofish_env.evaluation.standings import EntrantStats, Summary, summarize
from gofish_env.evaluation.stats import derive_seed, ratio_interval

__all__ = [
    "ENGINES",
    "Entrant",
    "EntrantStats",
    "GameRecord",
    "Measurement",
    "Summary",
    "deal_count",
    "derive_seed",
    "engine_used",
    "make_entrants",
    "make_lineups",
    "play_deals",
    "ratio_interval",
    "summarize",
]
