"""Where the environments are registered, once: Gymnasium's ``GoFish-v0`` (the single-agent
``GoFishEnv``; ``make_vec`` builds the batched ``GoFishVectorEnv`` by default) and
PettingZoo's ``gofish/GoFish-v0`` (the AEC env as ``gofish_env.env`` builds it).
``import gofish_env`` calls ``register``; a second call changes nothing and warns about
nothing."""

from __future__ import annotations

GYMNASIUM_ID = "GoFish-v0"
PETTINGZOO_ID = "gofish/GoFish-v0"


def register() -> None:
    """Register both environments where they are not registered yet. Where a library
    cannot be imported, the rules engine still works and nothing is registered there."""
    try:
        import gymnasium
    except ImportError:
        pass
    else:
        if GYMNASIUM_ID not in gymnasium.registry:
            gymnasium.register(
                id=GYMNASIUM_ID,
                entry_point="gofish_env.gym_env:GoFishEnv",
                vector_entry_point="gofish_env.vector.gym_vector:GoFishVectorEnv",
            )
    try:
        import pettingzoo
    except ImportError:
        pass
    else:
        if PETTINGZOO_ID not in pettingzoo.aec_registry:
            pettingzoo.register("aec", PETTINGZOO_ID, entry_point="gofish_env.aec_env:env")
