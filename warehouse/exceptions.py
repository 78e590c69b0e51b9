"""The one exception tree of perfledger.

    PerfledgerError                 base; ``retryable`` says whether trying again may help
    ├── ConfigError                 a bad setting or sources file (terminal)
    ├── SourceError                 a source could not be fetched or read
    │   ├── FetchError              network / HTTP failure (retryable)
    │   │   └── FetchRefused        a redirect or a body the fetch policy refuses (terminal)
    │   └── ParseError              the bytes are not what the parser expects (terminal)
    │       ├── CuratedFileError    a curated data/ file breaks its schema (terminal)
    │       └── ResultFileError     an imported benchmark result file is refused (terminal)
    ├── ShrinkError                 a source returned far fewer rows than last time (terminal)
    ├── GrowthError                 a source returned far more rows than last time (terminal)
    ├── ValidationFailed            the validation run itself could not run (terminal)
    ├── SnapshotError               no snapshot / a snapshot cannot be opened (terminal)
    ├── ExportError                 an export could not write its files; none left (terminal)
    ├── RefreshLocked               another refresh holds the lock (retryable)
    ├── QueryError                  a query parameter is out of range (terminal; API → 422)
    └── ImportRefused               an import asked for what the warehouse cannot do (terminal)

Each carries enough context (source, URL, row number, field) to say how to fix the problem;
a refresh records a failed source's error type, ``retryable`` and context in its run record, so
a scheduler can tell a flaky network from a broken file. A rule that fails validation is not an
exception: the refresh reports the run as ``rejected``. Edges translate: the CLI prints
``Type: message`` and exits 1, the API answers one JSON shape.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path


class PerfledgerError(Exception):
    """Base of every error perfledger raises on purpose."""

    retryable = False

    def __init__(self, message: str, **context: object) -> None:
        super().__init__(message)
        self.message = message
        self.context = {k: v for k, v in context.items() if v is not None}

    def __str__(self) -> str:
        return self.message


class ConfigError(PerfledgerError):
    """A setting or the sources file is wrong."""


class SourceError(PerfledgerError):
    """A source could not be fetched or read. ``excerpt`` is a short piece of the upstream
    body for the operator (CLI, server log); it is kept out of the message and the context,
    which reach the run record and the public endpoints."""

    def __init__(self, message: str, *, source: str | None = None, url: str | None = None,
                 excerpt: str | None = None, **context: object) -> None:
        super().__init__(message, source=source, url=url, **context)
        self.source = source
        self.url = url
        self.excerpt = excerpt


class FetchError(SourceError):
    """The network or the server failed; a later try may succeed."""

    retryable = True


class FetchRefused(FetchError):
    """The fetch policy refused what a server sent: a redirect to a host or address it may not
    go to, or a body past its size or decompression limit. Trying again would not help."""

    retryable = False


class ParseError(SourceError):
    """The fetched bytes are not what the parser expects (missing column, bad row...)."""


class CuratedFileError(ParseError):
    """A curated file in data/ breaks its schema; names the file, entry and field."""


class ResultFileError(ParseError):
    """A benchmark result file given to ``perfledger import`` cannot be read as the tool wrote
    it: an unknown tool or schema version, a missing required field, a unit the parser does not
    know, a negative or non-finite figure. Names the file, the run (0-based index in the file)
    and the field; nothing of that file is stored."""

    def __init__(self, message: str, *, file: str, run: int | None = None,
                 field: str | None = None) -> None:
        where = file + (f", run {run}" if run is not None else "") + \
            (f", field {field}" if field else "")
        super().__init__(f"{where}: {message}", source="selfmeasured", file=file, run=run,
                         field=field)
        self.file, self.run, self.field = file, run, field


class ShrinkError(PerfledgerError):
    """A source returned far fewer rows than the last good refresh (see --accept-shrink)."""


class GrowthError(PerfledgerError):
    """A source returned far more rows than the last good refresh (see --accept-growth)."""


class ValidationFailed(PerfledgerError):
    """The validation suites could not run (the checker crashed or died); nothing was
    published. Rules that fail are reported in the run, not raised."""


class SnapshotError(PerfledgerError):
    """A snapshot is missing or cannot be opened."""


class ExportError(PerfledgerError):
    """An export could not write its files (a full disk, an unwritable folder); what it had
    written is removed, so nothing partial is left."""


class RefreshLocked(PerfledgerError):
    """Another refresh is running."""

    retryable = True


class ImportRefused(PerfledgerError):
    """``perfledger import`` was asked for something the warehouse cannot do: an accelerator
    id it does not know, a count below 1, an import id that is not on record, a file already
    imported with other stated hardware."""


class QueryError(PerfledgerError):
    """A query parameter is invalid; the message says what is accepted."""

    def __init__(self, message: str, *, param: str | None = None) -> None:
        super().__init__(message, param=param)
        self.param = param


def disk_full(e: BaseException) -> bool:
    """True when ``e`` (or what it was raised from) is ENOSPC, however it was wrapped: an
    OSError, or a DuckDB error whose text says so."""
    seen: BaseException | None = e
    while seen is not None:
        if getattr(seen, "errno", None) == errno.ENOSPC or "No space left" in str(seen):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def io_reason(e: BaseException, root: Path | None = None) -> str:
    """One line that says what an I/O failure was: ``disk full writing <file>`` when it was;
    paths inside ``root`` (the data directory) named relative to it."""
    where = getattr(e, "filename", None)
    text = " ".join(str(e).split())
    if root is not None:
        text = text.replace(f"{root}{os.sep}", "").replace(str(root), ".")
        where = where and str(where).replace(f"{root}{os.sep}", "")
    if disk_full(e):
        return "disk full" + (f" writing {where}" if where else "") + f": {text}"
    return f"I/O error ({type(e).__name__}): {text}"
