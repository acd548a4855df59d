"""How every tvbo figure is written: file format, resolution and a size/style preset.

One object, :class:`FigureOptions`, carries ``format`` (``png`` | ``pdf`` | ``svg``), ``dpi``
(raster resolution; PDF and SVG stay vector, the dpi only applies to embedded images) and
``style`` (``paper`` | ``slides``). Every figure command (``tvbo figures``, ``paper-figures``,
``whatif``, ``parallel-whatif``, ``theory``, ``fit-health``, ``compare``) takes the same three
options (:func:`add_figure_arguments`) and the workflow reads them from the config's
``figures:`` block, so a paper's PDF figures and a talk's large-font PNGs come from one switch.

Why a style is a matplotlib ``rc_context`` plus a size factor and not a seaborn ``context``
call: the figures are built on :class:`matplotlib.figure.Figure` without pyplot, and rcParams
are read when each artist is created, so wrapping creation *and* saving in
:meth:`FigureOptions.context` styles every figure without threading parameters through each
drawing function. Figure sizes in inches are multiplied by :func:`size_scale` (slides are
larger, and their fonts larger still, so a projected figure stays legible from the back).

The defaults (``png``, 150 dpi, ``paper``) keep the file names the workflow and
docs/how-to/figures.md use.
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # matplotlib is imported only when a figure is drawn (CLI start-up time)
    from matplotlib.figure import Figure

FORMATS: tuple[str, ...] = ("png", "pdf", "svg")
DEFAULT_FORMAT = "png"
DEFAULT_DPI = 150
DEFAULT_STYLE = "paper"


@dataclass(frozen=True)
class Style:
    """A size/style preset: rcParams and the factor applied to every figure size."""

    rc: Mapping[str, Any]
    scale: float
    description: str


STYLES: dict[str, Style] = {
    "paper": Style(
        rc={"font.size": 9, "axes.titlesize": 9, "axes.labelsize": 9, "xtick.labelsize": 8,
            "ytick.labelsize": 8, "legend.fontsize": 8, "legend.title_fontsize": 8,
            "figure.titlesize": 10, "lines.linewidth": 1.4, "pdf.fonttype": 42,
            "ps.fonttype": 42, "svg.fonttype": "none"},
        scale=1.0,
        description="print: 8-9 pt text at the figure's natural size, TrueType fonts embedded "
        "in PDF and text kept as text in SVG (editable, searchable)",
    ),
    "slides": Style(
        rc={"font.size": 14, "axes.titlesize": 14, "axes.labelsize": 14, "xtick.labelsize": 12,
            "ytick.labelsize": 12, "legend.fontsize": 12, "legend.title_fontsize": 12,
            "figure.titlesize": 15, "lines.linewidth": 2.4, "lines.markersize": 7,
            "pdf.fonttype": 42, "ps.fonttype": 42, "svg.fonttype": "none"},
        scale=1.45,
        description="projection: 12-15 pt text, thick lines, figures 1.45x larger",
    ),
}

_SCALE: ContextVar[float] = ContextVar("tvbo_figure_scale", default=1.0)


def size_scale() -> float:
    """The size factor of the style in force (1.0 outside :meth:`FigureOptions.context`)."""
    return _SCALE.get()


def scaled(width: float, height: float) -> tuple[float, float]:
    """A figure size in inches, scaled for the style in force."""
    factor = size_scale()
    return (width * factor, height * factor)


@dataclass(frozen=True)
class FigureOptions:
    """Format, resolution and style of the figures a command writes (validated on creation)."""

    format: str = DEFAULT_FORMAT
    dpi: int = DEFAULT_DPI
    style: str = DEFAULT_STYLE

    def __post_init__(self) -> None:
        if self.format not in FORMATS:
            raise ValueError(
                f"figure format {self.format!r} is not supported; valid: {', '.join(FORMATS)}"
            )
        if isinstance(self.dpi, bool) or not isinstance(self.dpi, int) or self.dpi <= 0:
            raise ValueError(f"figure dpi must be a positive integer, got {self.dpi!r}")
        if self.style not in STYLES:
            raise ValueError(
                f"figure style {self.style!r} is not known; valid: {', '.join(STYLES)}"
            )

    def filename(self, stem: str) -> str:
        """``stem`` with this format's extension (``regret_vs_time.pdf``)."""
        return f"{stem}.{self.format}"

    @contextlib.contextmanager
    def context(self) -> Iterator[None]:
        """rcParams and size factor of the style, for building *and* saving figures."""
        import matplotlib as mpl

        style = STYLES[self.style]
        token = _SCALE.set(style.scale)
        try:
            with mpl.rc_context(dict(style.rc)):
                yield
        finally:
            _SCALE.reset(token)

    def save(self, fig: Figure, outdir: str | Path, stem: str) -> Path:
        """Write ``fig`` as ``outdir/stem.<format>`` (inside the style's rc context)."""
        import matplotlib as mpl

        path = Path(outdir) / self.filename(stem)
        with mpl.rc_context(dict(STYLES[self.style].rc)):
            fig.savefig(path, dpi=self.dpi, format=self.format,
                        metadata=_metadata(self.format))
        return path


def _metadata(fmt: str) -> dict[str, Any]:
    """No creation date in PDF/SVG (the same figure gives the same bytes); PNG has none."""
    if fmt == "pdf":
        return {"CreationDate": None, "Creator": "tvbo"}
    if fmt == "svg":
        return {"Date": None, "Creator": "tvbo"}
    return {"Software": "tvbo"}


def from_mapping(values: Mapping[str, Any] | None) -> FigureOptions:
    """Options from the workflow config's ``figures:`` block (missing keys: defaults)."""
    values = dict(values or {})
    unknown = sorted(set(values) - {"format", "dpi", "style"})
    if unknown:
        raise ValueError(f"figures: unknown key(s) {unknown}; valid: format, dpi, style")
    return FigureOptions(**values)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}")
    return value


def add_figure_arguments(parser: argparse.ArgumentParser) -> None:
    """``--format``, ``--dpi`` and ``--style`` (the same on every figure command)."""
    parser.add_argument("--format", choices=FORMATS, default=DEFAULT_FORMAT, dest="fig_format",
                        help=f"figure file format (default {DEFAULT_FORMAT})")
    parser.add_argument("--dpi", type=_positive_int, default=DEFAULT_DPI,
                        help=f"raster resolution in dots per inch (default {DEFAULT_DPI}; "
                        "PDF/SVG stay vector)")
    parser.add_argument("--style", choices=tuple(STYLES), default=DEFAULT_STYLE,
                        dest="fig_style",
                        help="size/style preset: " + "; ".join(
                            f"{name} = {s.description}" for name, s in STYLES.items())
                        + f" (default {DEFAULT_STYLE})")


def from_args(args: argparse.Namespace) -> FigureOptions:
    """The options parsed by :func:`add_figure_arguments`."""
    return FigureOptions(format=args.fig_format, dpi=args.dpi, style=args.fig_style)
