"""Hardware profiles: coefficients that turn counted work into seconds.

A profile is a small YAML file users can share::

    name: reference-2core
    description: tvbo's own numerics on the CI machine (2 cores), fitted by `tvbo calibrate`
    machine: {...}                 # free-form facts about where it was measured
    coefficients:                  # seconds per unit of work (see tvbo.work.WORK_KINDS)
      flop: 1.1e-10
      kernel: 9.0e-9
      call: 2.5e-5

Packaged profiles live in ``tvbo/sim/profiles/``; :func:`load_profile` accepts a packaged name
or a path to a YAML file.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import yaml

from tvbo.work import WORK_KINDS

#: the profile used when none is named
DEFAULT_PROFILE = "reference-2core"


@dataclass(frozen=True)
class HardwareProfile:
    """Seconds per unit of each work kind."""

    name: str
    coefficients: Mapping[str, float]
    description: str = ""
    machine: Mapping[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        unknown = sorted(set(self.coefficients) - set(WORK_KINDS))
        if unknown:
            raise ValueError(
                f"profile {self.name!r}: unknown work kind(s) {unknown}; "
                f"valid kinds: {', '.join(WORK_KINDS)}"
            )
        for kind, value in self.coefficients.items():
            if not (isinstance(value, int | float) and math.isfinite(value) and value >= 0):
                raise ValueError(
                    f"profile {self.name!r}: coefficient {kind!r} must be a finite number >= 0, "
                    f"got {value!r}"
                )

    def seconds(self, counts: Mapping[str, float]) -> float:
        """Seconds for a bag of work counts. A profile built in code may leave a kind out (it
        then costs nothing); a profile FILE must price every kind (:func:`load_profile`)."""
        return float(sum(self.coefficients.get(k, 0.0) * v for k, v in counts.items()))

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "description": self.description,
            "machine": dict(self.machine),
            "coefficients": {k: float(v) for k, v in self.coefficients.items()},
        }

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(self.to_dict(), sort_keys=False))
        return path


def packaged_profiles() -> list[str]:
    """Names of the profiles shipped with the package."""
    folder = resources.files("tvbo.sim") / "profiles"
    return sorted(p.name[: -len(".yaml")] for p in folder.iterdir() if p.name.endswith(".yaml"))


def _from_mapping(data: object, origin: str) -> HardwareProfile:
    if not isinstance(data, Mapping) or "coefficients" not in data:
        raise ValueError(f"{origin}: a hardware profile needs a 'coefficients' mapping")
    allowed = {"name", "description", "machine", "coefficients"}
    extra = sorted(set(data) - allowed)
    if extra:
        raise ValueError(f"{origin}: unknown profile key(s) {extra}; valid: {sorted(allowed)}")
    coefficients = data["coefficients"]
    if not isinstance(coefficients, Mapping):
        raise ValueError(f"{origin}: 'coefficients' must be a mapping of work kind -> seconds")
    missing = [kind for kind in WORK_KINDS if kind not in coefficients]
    if missing:  # a missing price would silently make that work free (issue 24 item 6)
        raise ValueError(
            f"{origin}: coefficients {', '.join(missing)} missing; a profile prices every work "
            f"kind ({', '.join(WORK_KINDS)}): give each in seconds per unit (0 if it is free)")
    return HardwareProfile(
        name=str(data.get("name", origin)),
        coefficients={str(k): _number(v, f"{origin}: coefficient {k!r}")
                      for k, v in coefficients.items()},
        description=str(data.get("description", "")),
        machine=dict(data.get("machine") or {}),
    )


def _number(value: object, where: str) -> object:
    """A coefficient as a number: YAML 1.1 (PyYAML) reads ``1e-11`` -- an exponent without a
    dot -- as the STRING '1e-11', although every other reader (YAML 1.2, JSON, Python) sees a
    number; such a string is read as the number it spells. Any other string is refused, saying
    that YAML read it as a string."""
    if not isinstance(value, str):
        return value
    try:
        number = float(value)
    except ValueError:
        raise ValueError(f"{where} must be a number of seconds, but YAML read it as the string "
                         f"{value!r}") from None
    if not math.isfinite(number):
        raise ValueError(f"{where} must be a finite number >= 0, got {value!r}")
    return number


def load_profile(name_or_path: str | Path | None = None) -> HardwareProfile:
    """Load a packaged profile by name, or a YAML file by path (``None``: the default)."""
    if name_or_path is None:
        name_or_path = DEFAULT_PROFILE
    candidate = Path(name_or_path)
    if candidate.suffix in {".yaml", ".yml"} or candidate.exists():
        if not candidate.is_file():
            raise ValueError(f"hardware profile file not found: {candidate}")
        return _from_mapping(yaml.safe_load(candidate.read_text()), str(candidate))
    names = packaged_profiles()
    if str(name_or_path) not in names:
        raise ValueError(
            f"unknown hardware profile {str(name_or_path)!r}; packaged profiles: "
            f"{', '.join(names)} (or give a path to a YAML file)"
        )
    text = (resources.files("tvbo.sim") / "profiles" / f"{name_or_path}.yaml").read_text()
    return _from_mapping(yaml.safe_load(text), str(name_or_path))
