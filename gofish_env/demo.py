"""Play one game between CPU seats and print it as it goes.

python -m gofish_env.demo --players 4 --rules table --seed 7
"""

from __future__ import annotations

import argparse
import random

from gofish_env.game import Game
from gofish_env.rules import Rules


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=4, help="seats at the table, 2..6")
    parser.add_argument("--rules", default="table", help=f"preset: {', '.join(Rules.PRESETS)}")
    parser.add_argument("--seed", type=int, default=0, help="seed of the deal and the CPUs")
    args = parser.parse_args(argv)

    game = Game(Rules.preset(args.rules, players=args.players), seed=args.seed)
    chooser = random.Random(args.seed)
    for event in game.events:
        print(event)
    while not game.is_over:
        for event in game.ask(*chooser.choice(game.legal_asks())):
            print(event)


if __name__ == "__main__":
    main()
