"""Abuse rules: which source keys the analytics job asks the server to block.

A *source key* is the unit rules judge: an IPv4 address, or an IPv6 address
aggregated to its ``--ipv6-prefix`` network (default /64, matching the server's per-IP
limits, spec decision 9) because one IPv6 host usually owns a whole /64.
IPv4-mapped IPv6 (``::ffff:a.b.c.d``) counts as the IPv4 address.

Rules (a threshold of ``null`` in the rules file disables the rule):

=============================  ========  ==========================================
rule                           default   fires when, per source key
=============================  ========  ==========================================
``min_hellos_without_connect`` 20        ``hellos - connects >= N``: HELLOs whose
                                         duologue the key never connected to (a
                                         HELLO flood, spoofed or not)
``max_bad_messages``           5         ``bad_messages > N`` (initial channel and
                                         duologues together)
``max_wrong_ip_connects``      3         ``wrong_ip_connects > N``: images on other
                                         owners' duologues (session guessing)
``max_reject_rate``            0.5       ``rejects / hellos > R`` and ``hellos >=
                                         min_hellos`` (the floor keeps one unlucky
                                         ``server full`` from condemning a client)
``min_hellos``                 20        floor for ``max_reject_rate``
=============================  ========  ==========================================

A key for which any rule fires gets verdict ``block``; the rule names and the numbers
behind them go into the verdict and the blocklist reason. Remember the threat model:
source addresses can be spoofed, so a HELLO flood "from" an address may be an attack
*on* that address. Blocklist entries therefore expire (``--blocklist-ttl``).

The rules file is JSON with any subset of the keys above, e.g.
``{"max_bad_messages": 10, "max_wrong_ip_connects": null}``.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

__all__ = [
    "AbuseRules",
    "RulesError",
    "apply_rules",
    "with_source_key",
]

class RulesError(ValueError):
    """The rules configuration is invalid; the message names the key and file."""


@dataclass(frozen=True)
class AbuseRules:
    """Rule thresholds (None disables a rule). See the module docstring."""

    min_hellos_without_connect: int | None = 20
    max_bad_messages: int | None = 5
    max_wrong_ip_connects: int | None = 3
    max_reject_rate: float | None = 0.5
    min_hellos: int = 20

    def __post_init__(self) -> None:
        for item in fields(self):
            value = getattr(self, item.name)
            if value is None and item.name != "min_hellos":
                continue
            numeric = isinstance(value, (int, float)) and not isinstance(value, bool)
            if item.name == "max_reject_rate":
                if not numeric or not math.isfinite(value) or not 0 <= value <= 1:
                    raise RulesError(f"max_reject_rate must be a number in [0, 1] or null, got {value!r}")
            elif not isinstance(value, int) or isinstance(value, bool) or value < 0:
                kind = "a non-negative integer" + ("" if item.name == "min_hellos" else " or null")
                raise RulesError(f"{item.name} must be {kind}, got {value!r}")

    @classmethod
    def from_dict(cls, data: dict[str, Any], where: str = "rules") -> "AbuseRules":
        """Rules from a mapping of any subset of the fields; unknown keys are errors."""
        if not isinstance(data, dict):
            raise RulesError(f"{where}: expected a JSON object, got {type(data).__name__}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise RulesError(
                f"{where}: unknown rule(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}"
            )
        try:
            return cls(**data)
        except RulesError as exc:
            raise RulesError(f"{where}: {exc}") from None

    @classmethod
    def from_json(cls, path: str | Path) -> "AbuseRules":
        """Rules from a JSON file; raises :class:`RulesError` naming the file."""
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except OSError as exc:
            raise RulesError(f"cannot read rules file {path}: {exc.strerror or exc}") from None
        except ValueError as exc:
            raise RulesError(f"rules file {path} is not valid JSON: {exc}") from None
        return cls.from_dict(data, str(path))

    def to_dict(self) -> dict[str, Any]:
        """The thresholds as a JSON-ready mapping."""
        return asdict(self)

    def checks(self) -> list[tuple[str, Column, Column]]:
        """(rule name, condition, evidence text) for each enabled rule."""
        col = F.col
        result = []
        if self.min_hellos_without_connect is not None:
            n = self.min_hellos_without_connect
            result.append((
                "min_hellos_without_connect",
                col("hellos_without_connect") >= n,
                F.format_string("hellos_without_connect=%d>=%d", col("hellos_without_connect"), F.lit(n)),
            ))
        if self.max_bad_messages is not None:
            n = self.max_bad_messages
            result.append((
                "max_bad_messages",
                col("bad_messages") > n,
                F.format_string("bad_messages=%d>%d", col("bad_messages"), F.lit(n)),
            ))
        if self.max_wrong_ip_connects is not None:
            n = self.max_wrong_ip_connects
            result.append((
                "max_wrong_ip_connects",
                col("wrong_ip_connects") > n,
                F.format_string("wrong_ip_connects=%d>%d", col("wrong_ip_connects"), F.lit(n)),
            ))
        if self.max_reject_rate is not None:
            rate = self.max_reject_rate
            result.append((
                "max_reject_rate",
                (col("hellos") >= self.min_hellos) & (col("reject_rate") > rate),
                F.format_string(
                    "reject_rate=%.2f>%.2f over %d hellos", col("reject_rate"), F.lit(rate), col("hellos")
                ),
            ))
        return result


def apply_rules(summary: DataFrame, rules: AbuseRules) -> DataFrame:
    """Add ``rules_fired`` (array of names), ``evidence`` (array) and ``verdict``.

    ``summary`` needs the columns ``hellos``, ``hellos_without_connect``,
    ``bad_messages``, ``wrong_ip_connects`` and ``reject_rate``.
    """
    checks = rules.checks()
    names = [(cond, F.lit(name)) for name, cond, _ in checks]
    evidence = [(cond, text) for _, cond, text in checks]
    return (
        summary.withColumn("rules_fired", _where_true(names))
        .withColumn("evidence", _where_true(evidence))
        .withColumn("verdict", F.when(F.size("rules_fired") > 0, "block").otherwise("ok"))
    )


def _where_true(pairs: list[tuple[Column, Column]]) -> Column:
    """Array of the values whose condition holds (an empty string array if none)."""
    if not pairs:
        return F.array().cast("array<string>")
    values = F.array(*[F.when(cond, value) for cond, value in pairs])
    return F.filter(values, lambda value: value.isNotNull())


_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"  # what ipaddress accepts: no leading zeros
_V4 = rf"^{_OCTET}(?:\.{_OCTET}){{3}}\z"
_V4_TAIL = rf":({_OCTET})\.({_OCTET})\.({_OCTET})\.({_OCTET})\z"
_MAPPED_PREFIX = "0" * 20 + "ffff"


_TMP = "_ck_"  # prefix of the intermediate columns of with_source_key


def _v4_tail_as_hextets(text: Column) -> Column:
    """IPv6 text ending in a dotted quad (``::ffff:1.2.3.4``) with the quad as two hextets."""
    octets = [F.lpad(F.lower(F.conv(F.regexp_extract(text, _V4_TAIL, i), 10, 16)), 2, "0") for i in range(1, 5)]
    with_quad = F.concat(
        F.regexp_replace(text, r"[0-9.]+\z", ""), octets[0], octets[1], F.lit(":"), octets[2], octets[3],
    )
    return F.when(text.rlike(_V4_TAIL), with_quad).otherwise(text)


def _groups(part: Column) -> Column:
    """The ``:``-separated groups of one side of ``::`` (empty side: no groups)."""
    return F.when(part == "", F.array().cast("array<string>")).otherwise(F.split(part, ":"))


def _v6_prefix_groups(hex32: Column, prefix: int) -> Column:
    """The 32 hex digits of the ``prefix``-bit network of a 32-hex-digit address."""
    full, rest = divmod(prefix, 4)
    parts = [F.substring(hex32, 1, full)] if full else []
    if rest:
        mask = (0xF << (4 - rest)) & 0xF
        nibble = F.conv(F.substring(hex32, full + 1, 1), 16, 10).cast("int").bitwiseAND(F.lit(mask))
        parts.append(F.lower(F.conv(nibble.cast("string"), 10, 16)))
    zeros = 32 - full - (1 if rest else 0)
    if zeros:
        parts.append(F.lit("0" * zeros))
    return F.concat(*parts)


def _zero_run(length: int) -> str:
    """Regex of ``length`` all-zero groups, ``(:|$)``-terminated (groups have no leading zeros)."""
    return "0" + "(?::0)" * (length - 1) + r"(?::|\z)"


def _compressed(text: Column) -> Column:
    """RFC 5952 text of 8 ``:``-joined groups without leading zeros: the longest run of
    two or more zero groups (the first of equally long runs) becomes ``::``, as
    :class:`ipaddress.IPv6Address` writes it."""
    result: Column | None = None
    for length in range(8, 1, -1):
        run = _zero_run(length)
        replaced = F.when(text.rlike("^" + run), F.regexp_replace(text, "^" + run, "::")).otherwise(
            F.regexp_replace(text, r"^(.*?:)" + run, "$1:")  # lazy prefix: the first such run only
        )
        found = text.rlike("(?:^|:)" + run)
        result = F.when(found, replaced) if result is None else result.when(found, replaced)
    assert result is not None
    return result.otherwise(text)


def _v6_plain(net: Column) -> Column:
    """The 8 groups of 32 hex digits, ``:``-joined, without leading zeros."""
    return F.concat_ws(":", *[F.lower(F.conv(F.substring(net, 4 * i + 1, 4), 16, 16)) for i in range(8)])


def with_source_key(
    frame: DataFrame, ip_column: str, ipv6_prefix: int = 64, key: str = "key", family: str = "family"
) -> DataFrame:
    """Add ``key`` and ``family`` columns for the IP text in ``ip_column``.

    The key is :func:`aeron_py.addresses.source_key` (IPv4 prefix 32) in Spark SQL, text
    for text: IPv4 and IPv4-mapped IPv6 → the IPv4 address, family ``ipv4``; IPv6 → its
    ``ipv6_prefix`` network as ``net/prefix``, family ``ipv6``; text ``source_key``
    refuses (not an address, null) → unchanged, family ``other``. Accepted exactly as
    :func:`aeron_py.addresses.parse_address` accepts: ``[...]`` brackets, an IPv6 zone
    (``%eth0``), upper case hex; no surrounding blanks, no leading zeros in a dotted quad.
    ``tests/analytics/test_source_key.py`` checks the two agree (hypothesis).

    Built in stages (one column each) so Spark evaluates every intermediate once
    instead of copying a huge expression tree; apply it to distinct addresses, not
    to every event.
    """
    if not 0 <= ipv6_prefix <= 128:
        raise RulesError(f"ipv6 prefix must be in [0, 128], got {ipv6_prefix}")
    names = ("body", "addr", "text", "left", "right", "groups", "valid", "hex", "plain")
    t = {name: f"{_TMP}{name}" for name in names}
    c = {name: F.col(column) for name, column in t.items()}
    ip = F.col(ip_column)
    body = c["body"]
    # An IPv6 zone: one '%' followed by something (ipaddress refuses "x%" and "x%a%b").
    zone_ok = ~body.contains("%") | ((F.size(F.split(body, "%")) == 2) & ~body.endswith("%"))
    has_gap = F.instr(c["text"], "::") > 0
    explicit = F.size(c["left"]) + F.size(c["right"])
    staged = (
        frame.withColumn(
            t["body"],
            F.when(ip.startswith("[") & ip.endswith("]"), ip.substr(F.lit(2), F.length(ip) - 2)).otherwise(ip),
        )
        .withColumn(t["addr"], F.lower(F.substring_index(body, "%", 1)))
        # Only possible IPv6 text goes through the IPv6 stages (null for everything else).
        .withColumn(
            t["text"],
            F.when(c["addr"].contains(":") & ~body.contains("/") & zone_ok, _v4_tail_as_hextets(c["addr"])),
        )
        .withColumn(t["left"], _groups(F.substring_index(c["text"], "::", 1)))
        .withColumn(t["right"], _groups(F.substring_index(c["text"], "::", -1)))
        .withColumn(
            t["groups"],
            F.when(has_gap, F.concat(c["left"], F.array_repeat(F.lit("0"), F.greatest(8 - explicit, F.lit(0))),
                                     c["right"]))
            .otherwise(F.split(c["text"], ":")),
        )
        .withColumn(
            t["valid"],
            ~c["text"].contains(":::")
            & (F.size(F.split(c["text"], "::")) <= 2)
            & F.when(has_gap, explicit <= 7).otherwise(F.size(c["groups"]) == 8)  # "::" stands for >= 1 group
            & (F.size(c["groups"]) == 8)
            & F.forall(c["groups"], lambda g: g.rlike(r"^[0-9a-f]{1,4}\z")),
        )
        .withColumn(t["hex"], F.concat_ws("", F.transform(c["groups"], lambda g: F.lpad(g, 4, "0"))))
        .withColumn(t["plain"], _v6_plain(_v6_prefix_groups(c["hex"], ipv6_prefix)))
    )
    is_v4 = body.rlike(_V4)
    mapped = c["valid"] & c["hex"].startswith(_MAPPED_PREFIX)
    mapped_v4 = F.concat_ws(".", *[F.conv(F.substring(c["hex"], 25 + 2 * i, 2), 16, 10) for i in range(4)])
    return (
        staged.withColumn(
            key,
            F.when(is_v4, body)
            .when(mapped, mapped_v4)
            .when(c["valid"], F.concat(_compressed(c["plain"]), F.lit(f"/{ipv6_prefix}")))
            .otherwise(ip),
        )
        .withColumn(family, F.when(is_v4 | mapped, "ipv4").when(c["valid"], "ipv6").otherwise("other"))
        .drop(*t.values())
    )
