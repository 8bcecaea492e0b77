"""Training and evaluation of learning agents (stable-baselines3 / sb3-contrib).

The commands start here, so that one run without the extra it needs says which to install
(this module imports none of it)."""

TRAIN_LIBRARIES = ("torch", "stable_baselines3", "sb3_contrib", "tensorboard", "tqdm")
RLLIB_LIBRARIES = ("torch", "ray", "tensorboardX")  # none of the SB3 side
INSTALL_TORCH = (
    "pip install torch==2.13.0 first (its CPU build: --index-url "
    "https://download.pytorch.org/whl/cpu), then "
)


def train_cli() -> None:
    """``gofish-train``."""
    from gofish_env.cli import launch  # on use: importing the package stays light
    from gofish_training.train_args import build_parser

    install = INSTALL_TORCH + "pip install 'gofish-env[train]'"
    launch("gofish_training.train", "gofish-train", "train", TRAIN_LIBRARIES, install, build_parser)


def rllib_train_cli() -> None:
    """``gofish-rllib-train``."""
    from gofish_env.cli import launch  # on use: importing the package stays light
    from gofish_training.rllib_args import build_parser

    install = INSTALL_TORCH + "pip install 'gofish-env[rllib]'"
    launch(
        "gofish_training.rllib_train",
        "gofish-rllib-train",
        "rllib",
        RLLIB_LIBRARIES,
        install,
        build_parser,
    )
