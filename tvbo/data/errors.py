"""The errors of :mod:`tvbo.data.download`, in a module of their own so that the transfer
(:mod:`tvbo.data.transfer`) and the download layer share them without importing each other."""

from __future__ import annotations

__all__ = ["ChecksumError", "DownloadError", "IntegrityError", "MirrorError", "TransferError"]


class DownloadError(RuntimeError):
    """A file could not be fetched (unreachable URL, HTTP error, missing mirror file)."""


class TransferError(DownloadError):
    """An attempt failed mid-transfer (deadline passed, body shorter than announced); retried."""


class ChecksumError(DownloadError):
    """The fetched bytes do not match the expected size or sha256."""


class IntegrityError(DownloadError):
    """A fetched file is empty, or a .gz or .zip archive is truncated, corrupt or empty."""


class MirrorError(DownloadError):
    """The configured mirror is unusable (folder missing, file missing, bad scheme)."""
