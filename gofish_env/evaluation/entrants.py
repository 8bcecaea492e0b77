"""The players of a measurement: named entrants made from player specs, checked before any
game is played."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gofish_env.agent_files import AgentFileError
from gofish_env.players import MODEL_PREFIX, SeatPlayer, check_player_spec
from gofish_env.rules import Rules


@dataclass(frozen=True)
class Entrant:
    """A named player; ``spec`` is anything ``gofish_env.players.make_player`` accepts."""

    name: str
    spec: Any = field(compare=False)

    @property
    def description(self) -> str:
        spec = self.spec
        if isinstance(spec, str):
            return spec
        if isinstance(spec, SeatPlayer):
            return f"player {type(spec).__name__}"
        if hasattr(spec, "predict"):
            return f"model {type(spec).__name__}"
        if hasattr(spec, "choose"):
            return f"CPU object {type(spec).__name__}"
        return f"callable {getattr(spec, '__name__', type(spec).__name__)}"


def default_name(spec: Any) -> str:
    """A spec's name in tables: a CPU level, a model file's stem, a class or function name."""
    if isinstance(spec, str):
        if spec.startswith(MODEL_PREFIX):
            return Path(spec[len(MODEL_PREFIX) :]).stem or spec
        return spec
    if hasattr(spec, "choose"):
        return str(getattr(spec, "name", "") or type(spec).__name__)
    if hasattr(spec, "predict") or isinstance(spec, SeatPlayer):
        return type(spec).__name__
    name = getattr(spec, "__name__", "")
    return name if name and name != "<lambda>" else "callable"


def make_entrants(
    entrants: Mapping[str, Any] | Sequence[Any], rules: Rules | None = None, least: int = 2
) -> list[Entrant]:
    """Entrants from ``{name: spec}`` or a list of specs (named after the spec; a repeated
    name gets ``#2``, ``#3``, ...). String specs are checked here, before any game: CPU
    levels exist, mixes are not empty, model files were trained for the table of ``rules``
    (``gofish_env.agent_files``) and load (``players.load_agent``), so that a corrupt
    model stops nothing midway. At least ``least`` entrants."""
    if isinstance(entrants, Mapping):
        pairs = [(str(name), spec) for name, spec in entrants.items()]
    elif isinstance(entrants, Sequence) and not isinstance(entrants, str):
        pairs = []
        seen: dict[str, int] = {}
        for spec in entrants:
            base = default_name(spec)
            seen[base] = seen.get(base, 0) + 1
            pairs.append((base if seen[base] == 1 else f"{base}#{seen[base]}", spec))
    else:
        raise ValueError(
            f"entrants: got {entrants!r}; allowed: a dict of name -> spec, or a list of specs"
        )
    # Each entry first: a lone unknown level is named, not merely counted.
    for name, spec in pairs:
        if isinstance(spec, str):
            try:
                check_player_spec(spec, rules, load=True)
            except AgentFileError as error:
                raise AgentFileError(f"entrant {name!r}: {error}") from None
            except ValueError as error:
                raise ValueError(f"entrant {name!r}: {error}") from None
    if len(pairs) < least:
        raise ValueError(f"entrants: got {len(pairs)}; a tournament needs at least {least}")
    return [Entrant(name, spec) for name, spec in pairs]
