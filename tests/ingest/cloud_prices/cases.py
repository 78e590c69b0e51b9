"""The carried SkyPilot catalog samples (real rows at their pinned commits), for tests: read
them, serve them on the real local HTTP server, and write the sources section that reads them."""

from __future__ import annotations

from ingest.mirror import carried_copies
from tests.helpers import LocalServer

CLOUDS = ("azure", "daytona", "gcp", "hyperbolic", "lambda", "mithril", "nebius", "oci", "runpod",
          "vast", "verda")


def sample(cloud: str) -> tuple[bytes, str]:
    """The carried sample of one cloud's vms.csv and its commit."""
    [copy] = [c for c in carried_copies()
              if c.source == "cloud_prices" and f"/v8/{cloud}/" in c.upstream]
    return copy.read(), copy.commit


def serve(server: LocalServer, bodies: dict[str, bytes] | None = None,
          clouds: tuple[str, ...] = CLOUDS) -> str:
    """Serve each cloud's sample (or the given bytes) at /<commit>/catalogs/v8/<cloud>/vms.csv;
    the ``[cloud_prices]`` section reading them."""
    lines = []
    for cloud in clouds:
        body, commit = sample(cloud)
        server.files[f"/{commit}/catalogs/v8/{cloud}/vms.csv"] = (bodies or {}).get(cloud, body)
        lines.append(f'{cloud} = {{ commit = "{commit}", base_url = "{server.url("")}" }}')
    return "\n[cloud_prices]\nenabled = true\n[cloud_prices.clouds]\n" + "\n".join(lines) + "\n"
