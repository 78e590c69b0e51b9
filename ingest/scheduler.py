"""Background refreshes for single-process deployments (``perfledger serve --refresh-every``).

The refresh runs in a daemon thread of the serving process; the API keeps answering from the
published snapshot and switches when a new one is published. The refresh lock still applies,
so a cron job next to it is safe.
"""

from __future__ import annotations

import logging
import re
import threading

from warehouse.exceptions import ConfigError, PerfledgerError
from warehouse.settings import Settings

log = logging.getLogger("perfledger.scheduler")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_interval(text: str) -> float:
    """``90s``, ``30m``, ``6h``, ``1d`` → seconds (at least 60)."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhd])\s*", text)
    if not m:
        raise ConfigError(f"--refresh-every {text!r}: use a number and a unit, e.g. 30m, 6h, 1d")
    seconds = float(m.group(1)) * _UNITS[m.group(2)]
    if seconds < 60:
        raise ConfigError(f"--refresh-every {text!r}: at least 60s between refreshes")
    return seconds


class BackgroundRefresh:
    """Refreshes in a daemon thread: one now, then one every ``every`` seconds, until
    ``stop``. A refresh that fails is logged and tried again at the next interval."""

    def __init__(self, settings: Settings, every: float) -> None:
        self.settings = settings
        self.every = every
        self.runs = 0  # refreshes finished (published, unchanged or failed)
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, name="perfledger-refresh", daemon=True)

    def _loop(self) -> None:
        from ingest.refresh import refresh

        while not self._stop.is_set():
            try:
                report = refresh(self.settings)
                for line in report.summary_lines():
                    log.warning("%s", line)
            except PerfledgerError as e:
                log.warning("background refresh: %s: %s", type(e).__name__, e)
            except Exception:  # keep serving; the traceback goes to the log
                log.exception("background refresh crashed; will try again")
            self.runs += 1
            self._stop.wait(self.every)

    def stop(self, timeout: float | None = None) -> bool:
        """Stop after the refresh in progress (if any); True once the thread has ended."""
        self._stop.set()
        self.thread.join(timeout)
        return not self.thread.is_alive()


def start_background_refresh(settings: Settings, every: float) -> BackgroundRefresh:
    """Refresh now and then every ``every`` seconds, in a daemon thread."""
    job = BackgroundRefresh(settings, every)
    job.thread.start()
    return job
