"""History from the SkyPilot catalog's earlier commits, for a chosen window, bounded.

The commits that changed one cloud's ``vms.csv`` in ``[since, until]`` are listed by GitHub's
commits API (``?path=…&since=…&until=…``); each is then read at its raw URL and versioned in
commit order with the commit's date as when its prices held, exactly as a refresh versions a
new pin. Bounded twice: at most ``max_commits`` commits (a longer list is refused, naming how
many), and only after the history already stored for that cloud (versions are added forward,
never slipped under stored ones). Runs as one refresh (lock, staging, validation, publish).
"""

from __future__ import annotations

from datetime import UTC, datetime
from urllib.parse import urlencode

from ingest import jsonsafe
from ingest.cloud_prices import suite
from ingest.cloud_prices.coverage import coverage
from ingest.cloud_prices.load import CATALOG_PATH, CloudPricesConfig, cloud_rules, load_cloud
from ingest.cloud_prices.parse import SOURCE
from ingest.context import LoadContext, SourceSpec
from warehouse.exceptions import ConfigError, ParseError, SourceError
from warehouse.storage.db import scalar

MAX_COMMITS = 100  # the most one backfill reads (GitHub's largest page)


def commits(ctx: LoadContext, cfg: CloudPricesConfig, cloud: str, since: datetime,
            until: datetime, max_commits: int) -> list[tuple[str, datetime]]:
    """(sha, committed) of the commits that changed the cloud's file in the window, oldest
    first; more than ``max_commits`` is refused."""
    query = urlencode({"path": CATALOG_PATH.format(cloud=cloud), "since": since.isoformat(),
                       "until": until.isoformat(), "per_page": max_commits + 1})
    raw = ctx.fetch(f"{cfg.commits_api}?{query}", SOURCE, None)
    try:
        body = jsonsafe.loads(raw.body)
        if not isinstance(body, list):
            raise TypeError("not a list")
        listed = [(c["sha"], datetime.fromisoformat(c["commit"]["committer"]["date"]
                                                    .replace("Z", "+00:00"))) for c in body]
    except (jsonsafe.JSONRefused, KeyError, TypeError, ValueError) as e:
        raise ParseError(f"{SOURCE} {cloud}: the commits listing is not GitHub's commit list "
                         f"({type(e).__name__}: {e})", source=SOURCE) from None
    if len(listed) > max_commits:
        raise SourceError(f"{SOURCE} {cloud}: more than {max_commits} commits changed "
                          f"{CATALOG_PATH.format(cloud=cloud)} between {since:%Y-%m-%d} and "
                          f"{until:%Y-%m-%d}; narrow the window or raise --max-commits "
                          f"(at most {MAX_COMMITS})", source=SOURCE)
    return sorted(listed, key=lambda c: c[1])


def backfill_spec(cloud: str, since: datetime, until: datetime,
                  max_commits: int = 10) -> SourceSpec:
    """The run that backfills one cloud (for ``refresh(specs=[…])``)."""
    if not 1 <= max_commits <= MAX_COMMITS or since >= until:
        raise SourceError(f"{SOURCE}: a backfill takes since < until and 1 to {MAX_COMMITS} "
                          "commits", source=SOURCE)

    def load(ctx: LoadContext) -> None:
        cfg = ctx.config
        assert isinstance(cfg, CloudPricesConfig)
        if cloud not in cfg.clouds:
            raise ConfigError(f"{SOURCE}: {cloud} is not a cloud of [cloud_prices.clouds] "
                              f"({', '.join(cfg.clouds)})")
        stored = scalar(ctx.reader, "SELECT max(valid_from) FROM cloud_price WHERE cloud = ?",
                        [cloud])
        if stored is not None and stored >= since:
            raise SourceError(f"{SOURCE} {cloud}: the warehouse holds its prices up to "
                              f"{stored:%Y-%m-%d %H:%M}; a backfill adds versions after the "
                              "stored history only (choose --since after that)", source=SOURCE)
        rules = cloud_rules(ctx, cfg)
        written = 0
        for sha, committed in commits(ctx, cfg, cloud, since, until, max_commits):
            detail = ctx.outcome.details.setdefault(sha, {"cloud": cloud,
                                                         "committed": committed.isoformat()})
            written += load_cloud(ctx, cfg, cloud, sha, rules, detail, observed=committed)
        ctx.outcome.finish(written)

    return SourceSpec(name=SOURCE, config=CloudPricesConfig, load=load, rules=suite.rules,
                      finish=coverage, doc=f"backfill of {cloud}")


def utc(day: datetime) -> datetime:
    """A command-line date as UTC."""
    return day if day.tzinfo else day.replace(tzinfo=UTC)
