"""Command line of the data pipeline, called by ``workflow/rules/data.smk``.

::

    python -m tvbo.data download --url URL --dest PATH [--sha256 HEX] [--size N]
                                [--mirror URL|DIR] [--mirror-files MAP] [--timeout S] [--retries N]
    python -m tvbo.data download --url-template 'https://.../daily_44201_{year}.zip' --year 2006 ...
    python -m tvbo.data prepare-intel --data data.txt.gz --locs mote_locs.txt --dates 2004-03-06
                                      --out data/intel/intel_2004-03-06.nc [...]
    python -m tvbo.data prepare-ozone --inputs daily_44201_2006.zip ... --years 2006 --out F.nc

Snakemake renders a ``None`` config value as the word ``None`` and a dict as its Python repr, so
every optional argument accepts ``None``/``null`` for "not set", and ``--mirror-files`` accepts a
JSON object or a Python dict literal.

Errors (as for every ``tvbo`` command): bad arguments, an unreachable or truncated download, a
truncated, corrupt or empty input file end with exit status 2 and ONE line
``tvbo data: error: <cause>`` on stderr naming the file and what is wrong; nothing is written
(a download goes to pooch's temporary file, an output to a ``.part`` file; both are removed, and
so are the folders a failed download created). Download arguments are checked before anything
is fetched. Ctrl-C exits with status 130.
"""

from __future__ import annotations

import argparse
import ast
import json
import logging
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

import pooch

from tvbo.data.download import (
    DownloadError,
    check_mirror_files,
    check_sha256,
    check_size,
    fetch_source,
)
from tvbo.data.intel import DEFAULT_TEMPERATURE_RANGE, NORMALISATIONS, prepare_intel_file
from tvbo.data.ozone import (
    DEFAULT_CBSA,
    DEFAULT_EVENT_TYPES,
    DEFAULT_STANDARDS,
    POC_RULES,
    URL_TEMPLATE,
    ozone_url,
    prepare_ozone_files,
)

_NULLS = ("", "None", "none", "null")
PROG = "tvbo data"


def _one_line(text: object) -> str:
    """Collapse a possibly multi-line message (pandas, zlib) into one line."""
    return "; ".join(part.strip() for part in str(text).splitlines() if part.strip())


def _fail(message: object) -> int:
    """Print ``tvbo data: error: <message>`` as one line; return exit status 2."""
    sys.stderr.write(f"{PROG}: error: {_one_line(message)}\n")
    return 2


class _Parser(argparse.ArgumentParser):
    """Argument errors as one line (no usage dump), exit status 2, like the ``tvbo`` parser."""

    def error(self, message: str) -> NoReturn:
        sys.exit(_fail(f"{message} (see '{self.prog} --help')"))


def _opt_str(value: str) -> str | None:
    return None if value in _NULLS else value


def _opt_int(value: str) -> int | None:
    return None if value in _NULLS else int(value)


def _checked(check: Callable[[Any], Any], value: Any) -> Any:
    """``check(value)``, its ``ValueError`` or ``DownloadError`` as argparse's one-line error."""
    try:
        return check(value)
    except (ValueError, DownloadError) as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _opt_sha256(value: str) -> str | None:
    return _checked(lambda v: check_sha256(v, "value"), _opt_str(value))


def _opt_size(value: str) -> int | None:
    try:
        size = _opt_int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number of bytes: {value!r}") from None
    return _checked(lambda v: check_size(v, "value"), size)


def _attempts(value: str) -> int:
    try:
        attempts = int(value)
    except ValueError:
        attempts = 0
    if attempts < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of attempts >= 1, got {value!r}")
    return attempts


def _mirror_files(value: str) -> dict[str, Any]:
    return _checked(check_mirror_files, _mapping(value))


def _mapping(value: str) -> dict[str, Any]:
    """A JSON object or Python dict literal (Snakemake's rendering of a config dict)."""
    if value in _NULLS:
        return {}
    try:
        parsed = json.loads(value)
    except ValueError:
        try:
            parsed = ast.literal_eval(value)
        except (ValueError, SyntaxError) as exc:
            raise argparse.ArgumentTypeError(f"not a JSON object or dict: {value!r}") from exc
    if not isinstance(parsed, dict):
        raise argparse.ArgumentTypeError(f"expected a mapping, got {value!r}")
    return parsed


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, description=__doc__.split("::")[0])
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    dl = sub.add_parser("download", help="fetch one file (verified, atomic, with a manifest)")
    src = dl.add_mutually_exclusive_group(required=True)
    src.add_argument("--url", help="original URL of the file")
    src.add_argument("--url-template", help=f"URL with '{{year}}', e.g. {URL_TEMPLATE}")
    dl.add_argument("--year", type=int, help="year for --url-template (checked: EPA has a file)")
    dl.add_argument("--dest", required=True, help="where the file goes")
    # every argument is checked here, before anything is fetched or written (issue 24 item 9)
    dl.add_argument("--sha256", type=_opt_sha256, default=None,
                    help="known sha256 of the original (64 hex digits)")
    dl.add_argument("--size", type=_opt_size, default=None, help="known size in bytes (>= 1)")
    dl.add_argument("--mirror", type=_opt_str, default=None, help="mirror base URL or folder")
    dl.add_argument(
        "--mirror-files",
        type=_mirror_files,
        default={},
        help="per-file overrides {basename: {name, sha256, size}} used with --mirror",
    )
    dl.add_argument(
        "--timeout",
        type=_positive_seconds,
        default=60.0,
        help="total deadline of one attempt in seconds: connecting and the whole transfer",
    )
    dl.add_argument("--retries", type=_attempts, default=3, help="attempts before giving up")

    intel = sub.add_parser("prepare-intel", help="Intel raw lines -> (time, sensor) netCDF")
    intel.add_argument("--data", required=True, help="data.txt or data.txt.gz")
    intel.add_argument("--locs", required=True, help="mote_locs.txt")
    intel.add_argument("--dates", nargs="+", required=True, help="calendar days yyyy-mm-dd")
    intel.add_argument("--bin-minutes", type=int, default=10)
    intel.add_argument("--coverage", type=float, default=0.9)
    intel.add_argument(
        "--temperature-range", type=float, nargs=2, default=list(DEFAULT_TEMPERATURE_RANGE)
    )
    intel.add_argument("--normalise", choices=NORMALISATIONS, default="all")
    intel.add_argument("--out", required=True, help="output .nc")

    oz = sub.add_parser("prepare-ozone", help="EPA daily files -> (site, day) netCDF")
    oz.add_argument("--inputs", nargs="+", required=True, help="daily_44201_YYYY.zip files")
    oz.add_argument("--years", nargs="+", type=int, required=True)
    oz.add_argument("--cbsa", type=_opt_str, default=DEFAULT_CBSA, help="CBSA Name or None")
    oz.add_argument("--bbox", nargs="+", default=["None"], help="lon_min lat_min lon_max lat_max")
    oz.add_argument("--coverage", type=float, default=0.9)
    oz.add_argument("--max-sites", type=_opt_int, default=None)
    oz.add_argument("--standards", nargs="+", default=list(DEFAULT_STANDARDS))
    oz.add_argument("--event-types", nargs="+", default=list(DEFAULT_EVENT_TYPES))
    oz.add_argument("--poc", choices=POC_RULES, default="min")
    oz.add_argument("--fill", choices=("true", "false", "True", "False"), default="true")
    oz.add_argument("--start", type=_opt_str, default=None, help="first day (default: data)")
    oz.add_argument("--end", type=_opt_str, default=None, help="last day (default: data)")
    oz.add_argument("--out", required=True, help="output .nc")
    return parser


#: the longest deadline of one attempt: a socket timeout must fit the C timeval (1e308 overflowed)
MAX_TIMEOUT = 86400.0


def _positive_seconds(value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {value!r}") from None
    if not (0 < seconds <= MAX_TIMEOUT):
        raise argparse.ArgumentTypeError(
            f"must be a number of seconds in (0, {MAX_TIMEOUT:g}] (one day), got {value}")
    return seconds


def _bbox(values: Sequence[str]) -> list[float] | None:
    if len(values) == 1 and values[0] in _NULLS:
        return None
    if len(values) != 4:
        raise ValueError(
            f"--bbox needs 4 numbers (lon_min lat_min lon_max lat_max) or None, got {values}"
        )
    try:
        return [float(v) for v in values]
    except ValueError:
        raise ValueError(f"--bbox needs 4 numbers, got {values}") from None


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; return the exit status (0, 2 on bad input or a failed step, 130 on Ctrl-C).

    Errors of the pipeline (:class:`DownloadError`, :class:`ValueError`, :class:`OSError`) are
    printed as one line; any other exception is a bug and keeps its traceback.
    """
    args = _parser().parse_args(argv)
    try:
        if args.command == "download":
            # pooch reports each download and retry on stderr, where this command promises one
            # line, the error, and nothing else (the error names the attempts and the cause)
            pooch.get_logger().setLevel(logging.WARNING)
            if args.url_template is not None:
                if args.year is None:
                    return _fail("--url-template needs --year (e.g. --year 2006)")
                url = ozone_url(args.year, args.url_template)
            else:
                if args.year is not None:
                    ozone_url(args.year)  # a year without an EPA file fails here, clearly
                url = args.url
            path = fetch_source(
                url,
                args.dest,
                sha256=args.sha256,
                size=args.size,
                mirror=args.mirror,
                mirror_files=args.mirror_files,
                timeout=args.timeout,
                retries=args.retries,
            )
            print(f"ok {path}")
        elif args.command == "prepare-intel":
            ds = prepare_intel_file(
                args.data,
                args.locs,
                args.out,
                dates=args.dates,
                bin_minutes=args.bin_minutes,
                coverage=args.coverage,
                temperature_range=tuple(args.temperature_range),
                normalise=args.normalise,
            )
            print(f"ok {args.out}: {dict(ds.sizes)}, dropped {ds.attrs['dropped']}")
        else:
            ds = prepare_ozone_files(
                args.inputs,
                args.out,
                years=args.years,
                cbsa=args.cbsa,
                bbox=_bbox(args.bbox),
                coverage=args.coverage,
                max_sites=args.max_sites,
                standards=args.standards,
                event_types=args.event_types,
                poc=args.poc,
                fill=args.fill.lower() == "true",
                start=args.start,
                end=args.end,
            )
            print(f"ok {args.out}: {dict(ds.sizes)}, dropped {ds.attrs['dropped']}")
    except (DownloadError, ValueError, OSError) as exc:
        return _fail(exc)
    except KeyboardInterrupt:
        sys.stderr.write(f"\n{PROG}: interrupted\n")
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
