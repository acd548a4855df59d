"""The two config keys that only name an algorithm, ``label`` and ``variant``, and their check.

A campaign's ``algorithm_options`` entry may carry them beside the algorithm's options; they are
split off before the algorithm is built (:func:`split_label_options`, called by ``make``, the
config check and the workflow) and read by :mod:`tvbo.algorithms.display`. Standard library only:
``make`` and the CLI's start-up load this module.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: the variants a label can show
VARIANTS: tuple[str, ...] = ("paper", "paper-ml", "robust")
#: config keys that only name the algorithm (never passed to the algorithm)
LABEL_KEYS: tuple[str, ...] = ("label", "variant")


def check_variant(variant: Any, where: str = "variant") -> str | None:
    """``variant`` if it is one of :data:`VARIANTS` or None; a ValueError lists them otherwise."""
    if variant is None or variant in VARIANTS:
        return variant
    raise ValueError(
        f"{where}: unknown variant {variant!r}; valid variants: {', '.join(VARIANTS)} (or null)"
    )


def split_label_options(options: Mapping[str, Any] | None) -> tuple[dict, dict]:
    """``(algorithm options, label options)``: ``label``/``variant`` taken out (variant checked)."""
    options = dict(options or {})
    labels = {key: options.pop(key) for key in LABEL_KEYS if key in options}
    if "variant" in labels:
        check_variant(labels["variant"])
    if "label" in labels and not (isinstance(labels["label"], str) and labels["label"].strip()):
        raise ValueError(f"label must be a non-empty string, got {labels['label']!r}")
    return options, labels
