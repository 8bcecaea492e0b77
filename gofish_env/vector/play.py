"""Kernels the vector environments step with: asks by actions, the compiled opponents'
moves until a learner is to move, and each ask's rewards as the AEC env pays them.

Rewards follow ``gofish_env.rewards.RewardCalculator`` step by step: every ask is one AEC
step; what its events earned (``State.parts``: catches, their points, and the win at the
end; the deal's catches wait for the first ask, as the AEC env pays them with the first
step) is weighed component by component and, for zero-sum schemes, taken relative to the
other seats, in the reference's order of floating-point additions.
"""

from __future__ import annotations

import numba
import numpy as np

import gofish_env.compile_interrupts  # noqa: F401  (Ctrl-C while compiling)
from gofish_env.vector import engine
from gofish_env.vector.cpus import choice_work, choose, random_ask


@numba.njit(cache=True, error_model="numpy")
def step_rewards(S, K, g, weights, zero_sum, out):
    """The rewards of the ask just made in game ``g`` for every seat, into ``out[P]``;
    returns False (and leaves ``out``) when it earned nothing. Clears what it read."""
    players = K.players
    parts = S.parts
    earned = False
    for seat in range(players):
        for component in range(4):
            if parts[g, seat, component] != 0.0:
                earned = True
    if not earned:
        return False
    total = 0.0
    for seat in range(players):
        reward = 0.0
        for component in range(4):
            reward = reward + weights[component] * parts[g, seat, component]
        out[seat] = reward
        total = total + out[seat]
    if zero_sum and players > 1:
        for seat in range(players):
            out[seat] = out[seat] - (total - out[seat]) / (players - 1)
    return True


@numba.njit(cache=True, error_model="numpy")
def collect(S, K, g, learner, weights, zero_sum, rewards, components, scratch):
    """Add the last ask's reward for seat ``learner`` to ``rewards[g]`` and its unweighted
    components to ``components[g]`` (the single-agent env's sums over its step)."""
    if step_rewards(S, K, g, weights, zero_sum, scratch):
        rewards[g] += scratch[learner]
        for component in range(4):
            components[g, component] += S.parts[g, learner, component]
        S.parts[g] = 0.0


@numba.njit(cache=True, error_model="numpy")
def apply_actions(S, K, actions, active, learner, weights, zero_sum, rewards, components):
    """The (checked) action of the seat to move in every active game, with its reward for
    seat ``learner[g]``."""
    scratch = np.empty(K.players, np.float64)
    for g in range(actions.shape[0]):
        if active[g] and not S.over[g]:
            target, wanted = engine.action_ask(K, S.current[g], actions[g])
            engine.ask(S, K, g, target, wanted)
            collect(S, K, g, learner[g], weights, zero_sum, rewards, components, scratch)


@numba.njit(cache=True, error_model="numpy")
def play_opponents(S, K, C, active, learner, max_asks, weights, zero_sum, rewards, components):
    """In every active game, the compiled CPUs move until seat ``learner[g]`` is to move,
    the game ends, or it reaches ``max_asks`` asks. Returns a mask of the games stopped at
    a seat no compiled CPU plays (a Python player's turn)."""
    work = choice_work(K)
    scratch = np.empty(K.players, np.float64)
    waiting = np.zeros(active.shape[0], np.bool_)
    for g in range(active.shape[0]):
        if not active[g]:
            continue
        while not S.over[g] and S.current[g] != learner[g] and S.num_asks[g] < max_asks:
            seat = S.current[g]
            if C.level[g, seat] < 0:
                waiting[g] = True
                break
            action = choose(S, K, C, g, seat, work)
            target, wanted = engine.action_ask(K, seat, action)
            engine.ask(S, K, g, target, wanted)
            collect(S, K, g, learner[g], weights, zero_sum, rewards, components, scratch)
    return waiting


@numba.njit(cache=True, error_model="numpy")
def apply_and_pay_all(S, K, actions, weights, zero_sum, rewards):
    """The multi-agent step: the action of the seat to move in every live game, and every
    seat's reward for it in ``rewards[g, seat]`` (zero where nothing was earned)."""
    scratch = np.empty(K.players, np.float64)
    for g in range(actions.shape[0]):
        rewards[g] = 0.0
        if S.over[g]:
            continue
        target, wanted = engine.action_ask(K, S.current[g], actions[g])
        engine.ask(S, K, g, target, wanted)
        if step_rewards(S, K, g, weights, zero_sum, scratch):
            rewards[g] = scratch
            S.parts[g] = 0.0


@numba.njit(cache=True, error_model="numpy")
def draw_below(states, games, n, out):
    """``out[i]``: an integer in [0, n[i]) from game ``games[i]``'s generator."""
    for i in range(games.shape[0]):
        out[i] = engine.below(states, games[i], n[i])


@numba.njit(cache=True, error_model="numpy")
def draw_seeds(states, games, out):
    """``out[i]``: a fresh 63-bit seed from game ``games[i]``'s generator."""
    for i in range(games.shape[0]):
        g = games[i]
        state = states[g] + np.uint64(0x9E3779B97F4A7C15)
        states[g] = state
        out[i] = engine.mix64(state) >> np.uint64(1)


@numba.njit(cache=True, error_model="numpy")
def play_out(S, K, C, active, max_asks, decisions):
    """The compiled CPUs play every active game on until it ends, reaches ``max_asks``
    asks, or a seat no compiled CPU plays is to move (no rewards are collected). Each ask
    is counted in ``decisions[g, seat]``."""
    work = choice_work(K)
    for g in range(active.shape[0]):
        if not active[g]:
            continue
        while not S.over[g] and S.num_asks[g] < max_asks:
            seat = S.current[g]
            level = C.level[g, seat]
            if level < 0:
                break
            if level == 0:
                target, wanted = random_ask(S, K, C, g, seat)
            else:
                action = choose(S, K, C, g, seat, work)
                target, wanted = engine.action_ask(K, seat, action)
            engine.ask(S, K, g, target, wanted)
            decisions[g, seat] += 1
