"""A batched engine: thousands of games of Go Fish in NumPy arrays, stepped by compiled
(numba) kernels, in one process.

``VectorGame(rules, num_games, seed)`` holds N games (``game.py``; the kernels in
``engine.py``, the public knowledge in ``knowledge.py``, the masks and observations in
``views.py``); ``CompiledCPUs`` plays the ``random``, ``easy``, ``normal``, ``hard`` and
``expert`` CPUs at any seats of every game (``cpus.py``, ``players.py``); ``GoFishVectorEnv``
(``gym_vector.py``, ``gymnasium.make_vec("GoFish-v0", vectorization_mode=
"vector_entry_point")``) and ``SelfPlayVectorEnv`` (``self_play.py``) are the environments
on top, and ``gofish_training.vec_env.VectorVecEnv`` the SB3 ``VecEnv``. docs/vector.md is
the user's guide.

How the two engines are kept equal. The Python ``Game`` is the reference: every rule is
written there first, readably. This package writes the same rules once more over arrays,
function for function (``engine.py`` follows ``Game``'s methods by name: ``ask``, ``lay``,
``refill``, ``start_turn``, ``end``, ...; ``knowledge.py`` follows
``PublicKnowledge.update`` and ``ObservationEncoder.update`` event by event, called where
``Game`` logs each event), and it computes the bounds and the observation with the
reference's own compiled kernels (``gofish_env.knowledge.opponent_bounds_into``,
``gofish_env.observation.fill_observation_into``), so those exist once. The differential
tests (tests/test_vector_engine.py, harness in tests/vector_helpers.py) start both engines
from the same positions (every preset at 2 to 6 players, the house-rule set-ups of
tests/test_properties.py, rare combinations; thousands of games), apply the same random
legal asks to both, and after every ask compare hands, catches, pool, seat to move, the end,
the winners, every seat's observation and the mask, bit for bit (and, for a few set-ups,
with the rules compiled into the kernels, ``compile_rules=True``); the invariants of
tests/test_properties.py are checked on the batch too. The compiled CPUs are the Python
levels given the same random stream (tests/test_vector_cpus.py), and the environments are
compared step by step with ``GoFishEnv`` and the AEC env (tests/test_vector_env.py).

How to add a house rule to both: add the field to ``Rules`` (its check, docs/rules.md) and
play it in ``Game``, with a scenario test in tests/test_scenarios.py; give it a number in
``state.Constants`` (``state.constants`` fills it from the ``Rules``) and play it in the
``engine.py`` function named after the ``Game`` method that plays it; add a set-up using
it to ``HOUSE_RULES`` in tests/test_properties.py (or ``EXTRA_SETUPS`` in
tests/test_vector_engine.py): the differential tests then hold both engines to it. Until
the batch plays it, ``game.check_supported`` must refuse it by name.
"""

from gofish_env.vector.game import VectorGame
from gofish_env.vector.players import CompiledCPUs

__all__ = ["CompiledCPUs", "VectorGame"]
