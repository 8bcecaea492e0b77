"""The environments are registered once, where users look: Gymnasium and PettingZoo."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import gymnasium as gym
import numpy as np
import pettingzoo
import pytest

import gofish_env
from gofish_env import registration

PACKAGE = Path(gofish_env.__file__).parent


def test_pettingzoo_make_returns_what_env_returns():
    made = pettingzoo.make("aec", registration.PETTINGZOO_ID, players=4)
    direct = gofish_env.env(players=4)
    assert type(made) is type(direct)
    for env in (made, direct):
        env.reset(seed=7)
    for _ in range(40):
        assert made.agent_selection == direct.agent_selection
        a, b = made.last(), direct.last()
        np.testing.assert_array_equal(a[0]["observation"], b[0]["observation"])
        np.testing.assert_array_equal(a[0]["action_mask"], b[0]["action_mask"])
        assert a[1:4] == b[1:4]
        if a[2] or a[3]:
            break
        action = int(np.flatnonzero(a[0]["action_mask"])[0])
        made.step(action)
        direct.step(action)


def test_pettingzoo_make_passes_keyword_arguments_on():
    env = pettingzoo.make("aec", registration.PETTINGZOO_ID, players=3, rules="pairs")
    assert env.unwrapped.rules.set_size == 2 and len(env.possible_agents) == 3


def test_registering_again_warns_about_nothing_and_keeps_one_entry():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        registration.register()
        registration.register()
    assert gym.spec(registration.GYMNASIUM_ID).entry_point == "gofish_env.gym_env:GoFishEnv"
    assert pettingzoo.aec_registry[registration.PETTINGZOO_ID].entry_point == (
        "gofish_env.aec_env:env"
    )


def test_the_package_registers_in_one_module_only():
    registering = re.compile(r"\b(gym|gymnasium|pettingzoo)\.register\(")
    places = [path.name for path in PACKAGE.rglob("*.py") if registering.search(path.read_text())]
    assert places == ["registration.py"]


def test_action_masks_through_gym_make_are_reached_as_documented():
    env = gym.make(registration.GYMNASIUM_ID, players=4, opponents="random")
    _, info = env.reset(seed=3)
    # Gymnasium's wrappers do not forward arbitrary methods: the documented ways are the
    # info entry and get_wrapper_attr.
    with pytest.raises(AttributeError):
        env.action_masks()
    mask = env.get_wrapper_attr("action_masks")()
    np.testing.assert_array_equal(mask, info["action_mask"])
    assert mask.dtype == bool and mask.any()
