"""The large-term budget: how many client images with long terms the server keeps.

A client image's log is three terms. Aeron's minimum term (64 KiB) already holds the
protocol's largest message many times over, but a stock Aeron client publishes with
Aeron's default 16 MiB term (a 48 MiB log). The server accepts such *large-term*
images, by default two per duologue its limits allow (a stock client's initial and
duologue images: ``ServerConfig.large_term_limits``), so stock clients are served as the
reference serves them: up to ``max_per_ip`` per source, ``max_clients`` in all. Logs are
sparse files: what an image costs is what its source wrote into it, not its length (the
memory argument is in docs/operator.md, "Memory"). Terms longer than
``max_image_term_length`` are refused outright.

The driver's endpoint filter applies the same budget to SETUPs, before any log exists;
this is the core's own rule, which also holds without the filter. Sans-I/O: image ids in,
a refusal cause out.
"""

from __future__ import annotations

from .contract import ServerConfig
from .per_ip import PerIpCounter

__all__ = ["LargeTermBudget", "large_term_rule"]


def large_term_rule(config: ServerConfig, cause: str) -> str:
    """The rule behind a refusal cause of :meth:`LargeTermBudget.admit`, with its server option."""
    total, per_ip = config.large_term_limits()
    return {"term_length": f"over --max-image-term-length {config.max_image_term_length}",
            "large_terms_per_ip": f"beyond --large-term-images-per-ip {per_ip}",
            "large_terms_total": f"beyond --large-term-images {total}"}[cause]


class LargeTermBudget:
    """Client images whose term is longer than ``config.large_term_length``, by source key."""

    def __init__(self, config: ServerConfig) -> None:
        self._config = config
        self._total, self._per_ip = config.large_term_limits()
        self._per_key = PerIpCounter(config.ipv6_prefix)
        self._images: dict[int, str] = {}  # image id -> its owner's IP

    @property
    def in_use(self) -> int:
        """Large-term images held now."""
        return len(self._images)

    def admit(self, image_id: int, ip: str, term_length: int) -> str | None:
        """None when image ``image_id`` from ``ip`` may stay (a large term takes a place),
        else why not: ``term_length``, ``large_terms_per_ip`` or ``large_terms_total``."""
        c = self._config
        if term_length > c.max_image_term_length:
            return "term_length"
        if term_length <= c.large_term_length:
            return None
        if len(self._images) >= self._total:
            return "large_terms_total"
        if self._per_key.count(ip) >= self._per_ip:
            return "large_terms_per_ip"
        self._images[image_id] = ip
        self._per_key.increment(ip)
        return None

    def rule(self, cause: str) -> str:
        """The rule behind a refusal cause of :meth:`admit`, with its server option."""
        return large_term_rule(self._config, cause)

    def release(self, image_id: int) -> None:
        """Image ``image_id`` is gone (any image: those without a place are ignored)."""
        ip = self._images.pop(image_id, None)
        if ip is not None:
            self._per_key.decrement(ip)
