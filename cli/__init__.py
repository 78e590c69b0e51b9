"""The ``perfledger`` command, on top of ``ingest``, ``warehouse`` and ``api`` (it may import
all three; none of them imports it)."""

from __future__ import annotations

from typing import NoReturn

import typer

from warehouse.exceptions import PerfledgerError
from warehouse.redact import redact_text

EXIT_LOCKED = 75  # EX_TEMPFAIL: another refresh holds the lock ("busy", not "broken")


def fail(e: PerfledgerError, code: int = 1) -> NoReturn:
    """End the command with ``e`` as one ``Type: message`` line (URLs redacted) and ``code``."""
    typer.echo(redact_text(f"{type(e).__name__}: {' '.join(str(e).split())}"), err=True)
    raise typer.Exit(code)
