"""Crawler scope: which URLs and which network addresses a fetch may reach.

Cited URLs come from untrusted answers, so a crawler that follows them could be steered into
its owner's network (a cloud metadata endpoint, an admin page on loopback, an intranet host).
By default every request (a cited URL, each redirect hop, robots.txt and its redirects, an
archive snapshot URL outside the configured archive's own origin) is refused when:

- its scheme is not http(s) (``unsupported_url``) or its port is not on ``fetch.allowed_ports``
  (``port_refused``);
- its host, *in any spelling* (``2130706433``, ``0177.0.0.1``, ``0x7f000001``, ``127.1``,
  ``[::ffff:127.0.0.1]``) or *any address it resolves to* (a hosts-file name, a DNS name
  pointing inside) is loopback, private, link-local (169.254.x: cloud metadata), unique-local,
  shared (100.64/10), multicast, unspecified or reserved (``private_address``);
- its host name or one of its resolved addresses is on ``fetch.deny_hosts``, or neither is on
  a non-empty ``fetch.allow_hosts`` (``host_denied``). List entries are names (a name covers
  its subdomains), addresses in any spelling, or networks (``10.0.0.0/8``).

The name is resolved once; the connection goes to one of the addresses that were checked, and
the peer address of the open socket is checked again (no second DNS lookup, so a rebinding
resolver cannot swap the address between check and connect). ``fetch.allow_private_networks``
(default false) is the only way to reach private addresses: tests against a loopback server,
the demo and an intranet deployment set it. ``fetch.via`` is an operator's choice of where every
request goes (a proxy, a test site) and is not itself checked; the cited URL and every hop
still are, by name and literal address. A configured archive's own origin (``archives:``) is the
operator's choice in the same way; anything else an archive points to is checked.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from citeaudit.config import DEFAULT_PORTS

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_LEGACY_V4 = re.compile(r"^(0x[0-9a-f]*|[0-9]+)(\.(0x[0-9a-f]*|[0-9]+)){0,3}\.?$", re.I)
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


class Refused(Exception):
    """A request outside the scope: ``outcome`` names the fetch_log outcome, ``detail`` why."""

    def __init__(self, outcome: str, detail: str) -> None:
        super().__init__(f"{outcome}: {detail}")
        self.outcome = outcome
        self.detail = detail


def _legacy_part(text: str) -> int:
    if text.lower().startswith("0x"):
        return int(text[2:] or "0", 16)
    if len(text) > 1 and text.startswith("0"):
        return int(text, 8)
    return int(text)


def literal_ip(host: str) -> IPAddress | None:
    """The address a host string spells, in any form the C resolver accepts, or None.

    ``127.0.0.1``, ``[::1]``, ``2130706433`` (one number), ``0177.0.0.1`` (octal parts),
    ``0x7f000001`` (hex), ``127.1`` (short form: the last part fills the remaining bytes).
    """
    h = host.strip().lower().strip("[]")
    if not h:
        return None
    try:
        return ipaddress.ip_address(h.split("%", 1)[0])
    except ValueError:
        pass
    if not _LEGACY_V4.match(h):
        return None
    try:
        parts = [_legacy_part(p) for p in h.rstrip(".").split(".")]
    except ValueError:
        return None
    *head, last = parts
    if any(p > 255 for p in head) or last >= 256 ** (4 - len(head)):
        return None
    value = 0
    for p in head:
        value = value * 256 + p
    value = value * 256 ** (4 - len(head)) + last
    return ipaddress.IPv4Address(value)


def _embedded_v4(ip: IPAddress) -> ipaddress.IPv4Address | None:
    if isinstance(ip, ipaddress.IPv4Address):
        return None
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if ip.teredo is not None:
        return ip.teredo[1]
    return None


def private_kind(ip: IPAddress) -> str | None:
    """Why an address is not on the public internet (``loopback``, ``link-local``, ...), or
    None for a global unicast address. IPv4 inside IPv6 (mapped, 6to4, NAT64, Teredo) is judged
    by the IPv4 address it carries."""
    inner = _embedded_v4(ip)
    if inner is not None:
        kind = private_kind(inner)
        if kind:
            return kind
    for kind, hit in (("unspecified", ip.is_unspecified), ("loopback", ip.is_loopback),
                      ("link-local", ip.is_link_local), ("multicast", ip.is_multicast),
                      ("reserved", ip.is_reserved), ("private", ip.is_private)):
        if hit:
            return kind
    if not ip.is_global:
        return "non-global"
    return None


def strip_credentials(url: str) -> str:
    """``url`` without ``user:password@``: credentials are never sent, logged nor archived."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if "@" not in parts.netloc:
        return url
    netloc = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


@dataclass(frozen=True)
class HostPattern:
    """One ``allow_hosts`` / ``deny_hosts`` entry: a name (with its subdomains) or a network."""

    name: str | None
    network: ipaddress.IPv4Network | ipaddress.IPv6Network | None

    @classmethod
    def parse(cls, text: str) -> HostPattern:
        t = text.strip().lower().strip("[]")
        try:
            return cls(None, ipaddress.ip_network(t, strict=False))
        except ValueError:
            pass
        ip = literal_ip(t)
        if ip is not None:
            return cls(None, ipaddress.ip_network(ip))
        return cls(t.rstrip("."), None)

    def matches(self, host: str, addresses: tuple[IPAddress, ...]) -> bool:
        if self.name is not None:
            h = host.rstrip(".")
            return h == self.name or h.endswith("." + self.name)
        assert self.network is not None
        return any(_normal(a) in self.network for a in addresses)


def _normal(ip: IPAddress) -> IPAddress:
    """IPv4-mapped IPv6 as the IPv4 address (so ``::ffff:10.0.0.1`` matches ``10.0.0.0/8``)."""
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def _opt_in() -> str:
    return "set fetch.allow_private_networks: true in citeaudit.yaml to fetch it"


@dataclass(frozen=True)
class Scope:
    """The request scope of one crawl (see the module docstring)."""

    allow_private_networks: bool = False
    allowed_ports: tuple[int, ...] = DEFAULT_PORTS
    allow_hosts: tuple[str, ...] = ()
    deny_hosts: tuple[str, ...] = ()

    def _patterns(self, which: tuple[str, ...]) -> list[HostPattern]:
        return [HostPattern.parse(p) for p in which]

    def check_url(self, url: str, resolves: bool = False) -> tuple[str, int, IPAddress | None]:
        """(host, port, literal address or None) of an in-scope URL; raises :class:`Refused`
        for a scheme, port, literal address or listed name outside the scope (no DNS).
        ``resolves``: the caller checks the resolved addresses next (:meth:`resolve`), so an
        ``allow_hosts`` network may still admit a name."""
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError as exc:
            raise Refused("unsupported_url", f"not a valid URL: {exc}") from exc
        scheme = parts.scheme.lower()
        host = (parts.hostname or "").lower()
        if scheme not in ("http", "https") or not host:
            raise Refused("unsupported_url", "only absolute http(s) URLs are fetched")
        port = port or (443 if scheme == "https" else 80)
        if port not in self.allowed_ports:
            raise Refused("port_refused", f"port {port} is not on fetch.allowed_ports ("
                          + ", ".join(map(str, self.allowed_ports)) + ")")
        ip = literal_ip(host)
        self.check_addresses(host, (ip,) if ip else (), final=ip is not None or not resolves)
        return host, port, ip

    def check_addresses(self, host: str, addresses: tuple[IPAddress, ...],
                        final: bool = True, lists: bool = True) -> None:
        """Raise :class:`Refused` when ``host`` or one of its ``addresses`` is out of scope
        (``final`` false: the addresses are not known yet, a network on ``allow_hosts`` may
        still admit the host)."""
        if not self.allow_private_networks:
            for a in addresses:
                kind = private_kind(a)
                if kind:
                    shown = host if str(a) == host else f"{host} ({a})"
                    raise Refused("private_address", f"{shown} is a {kind} address; "
                                  + _opt_in())
        if not lists:
            return
        if any(p.matches(host, addresses) for p in self._patterns(self.deny_hosts)):
            raise Refused("host_denied", f"{host} is on fetch.deny_hosts")
        allow = self._patterns(self.allow_hosts)
        if not final and any(p.network is not None for p in allow):
            return
        if allow and not any(p.matches(host, addresses) for p in allow):
            raise Refused("host_denied", f"{host} is not on fetch.allow_hosts")

    def resolve(self, host: str, port: int, lists: bool = True) -> list[IPAddress]:
        """Every address ``host`` resolves to, checked (raises :class:`Refused` when one is
        out of scope: a name that also points inside is refused, not half-used); these are
        the only addresses the caller may connect to. ``lists`` false: private addresses only,
        not the host lists."""
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        addrs: list[IPAddress] = []
        for info in infos:
            a = ipaddress.ip_address(str(info[4][0]).split("%", 1)[0])
            if a not in addrs:
                addrs.append(a)
        self.check_addresses(host, tuple(addrs), lists=lists)
        return addrs

    def check_peer(self, host: str, peer: str, lists: bool = True) -> None:
        """The address actually connected to, checked again."""
        self.check_addresses(host, (ipaddress.ip_address(peer.split("%", 1)[0]),), lists=lists)


def from_settings(settings) -> Scope:  # settings: citeaudit.config.FetchSettings
    """The request scope of a ``fetch:`` section: which schemes, ports, hosts and addresses a
    fetch under those settings may reach."""
    return Scope(allow_private_networks=settings.allow_private_networks,
                 allowed_ports=settings.allowed_ports, allow_hosts=settings.allow_hosts,
                 deny_hosts=settings.deny_hosts)


def origin_of(url: str | None) -> str | None:
    """``scheme://host:port`` (lower case, default port spelled out) or None: the soft-404
    probe's grouping key of a URL (one probe per origin)."""
    if not url:
        return None
    try:
        p = urlsplit(url.strip())
        port = p.port or (443 if p.scheme.lower() == "https" else 80)
    except ValueError:
        return None
    if p.scheme.lower() not in ("http", "https") or not p.hostname:
        return None
    return f"{p.scheme.lower()}://{p.hostname.lower().rstrip('.')}:{port}"
