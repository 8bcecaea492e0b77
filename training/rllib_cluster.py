"""Where RLlib runs: a local Ray on this machine (the default), or a running cluster.

- ``""`` (default): start Ray here, for this program only, with as many logical CPUs as
  the machine has (at least one per EnvRunner and Learner actor, so a request for more
  actors than cores shares the cores instead of waiting forever for a free one), and its
  workers at the program's own priority (Ray's default is nice 15: on a busy machine the
  EnvRunners would crawl; ``RAY_worker_niceness`` set in the environment wins).
- ``"auto"``: join the cluster started on this machine with ``ray start --head``.
- ``"HOST:PORT"``: join the cluster whose head is there (``ray start --head`` prints it).
- ``"ray://HOST:PORT"``: connect through Ray Client (the head's client port, 10001).

Ray 2.59+ protects the clusters it starts on a machine with a token (``~/.ray/auth_token``);
a program joining by address must send it. When ``RAY_AUTH_MODE`` is not set and a token is
at hand (``RAY_AUTH_TOKEN``, ``RAY_AUTH_TOKEN_PATH`` or that file), joining turns token
mode on, as ``ray.init()`` does for a cluster it starts (a cluster without authentication
ignores the token).

An address that nothing answers fails within ``CONNECT_TIMEOUT`` seconds, with a message:
Ray itself waits 30 s (Ray Client) or minutes (a GCS address) before giving up. A cluster
with fewer CPUs than the EnvRunners and Learners ask for is refused before any actor is
created, since Ray would wait for them forever. A Ray already started in this process (a
notebook's, a test's) is used as it is, and left running.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
from collections.abc import Iterator

import ray

CONNECT_TIMEOUT = 5.0
CLIENT_PREFIX = "ray://"


class ClusterError(RuntimeError):
    """The cluster cannot be reached or cannot run the job; the message says why."""


def address_problem(address: str) -> str | None:
    """Why ``address`` is not one of the accepted forms, or None."""
    if address in ("", "auto"):
        return None
    host, _, port = address.removeprefix(CLIENT_PREFIX).rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        return f"got {address!r}; allowed: empty (a local Ray), auto, HOST:PORT or ray://HOST:PORT"
    return None


def check_reachable(address: str, timeout: float = CONNECT_TIMEOUT) -> None:
    """Raise ``ClusterError`` unless something accepts a connection at ``address``."""
    host, _, port = address.removeprefix(CLIENT_PREFIX).rpartition(":")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
            pass
    except OSError as error:
        raise ClusterError(
            f"--address {address}: nothing answers at {host}:{port} ({error.strerror or error}"
            f"); start a cluster there (ray start --head) or check the address"
        ) from None


@contextlib.contextmanager
def ray_session(address: str, actors: int, cpus_per_actor: float = 1.0) -> Iterator[dict]:
    """Ray connected as ``address`` says (see the module docstring), shut down at the end;
    yields the cluster's resources."""
    if address not in ("", "auto"):
        check_reachable(address)
    quiet = {"logging_level": logging.WARNING, "log_to_driver": False}
    if address:
        send_token_if_at_hand()
    if address == "" and ray.is_initialized():  # a notebook's or a test's own Ray
        yield check_resources(actors, cpus_per_actor)
        return
    try:
        if address == "":
            cpus = max(os.cpu_count() or 1, int(actors * cpus_per_actor + 0.999))
            # Ray starts its workers at nice 15: beside other programs the EnvRunners would
            # get a sliver of the cores while the learner (this process) gets its share.
            os.environ.setdefault("RAY_worker_niceness", "0")
            ray.init(num_cpus=cpus, include_dashboard=False, **quiet)
        else:
            ray.init(address=address, **quiet)
    except ConnectionError as error:
        if address == "auto":
            hint = "start one with: ray start --head"
        else:
            hint = (
                "check the address; a cluster with token authentication needs its token "
                "here: RAY_AUTH_TOKEN=... (ray get-auth-token on the head prints it)"
            )
        raise ClusterError(f"--address {address}: {error} ({hint})") from None
    try:
        yield check_resources(actors, cpus_per_actor)
    finally:
        ray.shutdown()


def send_token_if_at_hand() -> None:
    """Send the machine's Ray token when joining a cluster, as ``ray.init()`` does for the
    clusters it starts itself: Ray's own helper, which turns token mode on only when
    ``RAY_AUTH_MODE`` is unset and a token is configured or saved. (A private helper of
    Ray, hence the guard: without it, set ``RAY_AUTH_MODE=token`` by hand.)"""
    try:
        from ray._private.authentication.authentication_token_setup import (
            maybe_enable_token_auth_if_token_available,
        )
    except ImportError:
        return
    maybe_enable_token_auth_if_token_available(warn_if_disabled=False)


def check_resources(actors: int, cpus_per_actor: float) -> dict:
    """The cluster's resources; ``ClusterError`` if the actors (EnvRunners and Learners)
    cannot all be placed."""
    resources = ray.cluster_resources()
    needed = actors * cpus_per_actor
    if resources.get("CPU", 0) < needed:
        raise ClusterError(
            f"--env-runners/--learners: the cluster has {resources.get('CPU', 0):g} CPUs and "
            f"the EnvRunners and Learners need {needed:g}; add nodes or use fewer of them"
        )
    return resources
