"""Which IP addresses the host's proxy may connect a worker to: the reviewed ranges, written out here, in one place.

The proxy (proxy.py) connects only to public addresses. Which ones are public is decided by this table, not by
``ipaddress``'s ``is_global``/``is_private``: those change between Python versions (3.11.4, 3.12.4 and 3.13 each
moved ranges) and judge 6to4 (``2002::/16``) as global, so ``2002:7f00:1::1`` (loopback carried in 6to4) and
``2002:a9fe:a9fe::1`` (cloud metadata) passed as public.

The rule is an allow-list: an IPv4 address is public unless it falls in one of ``_IPV4`` (the IANA special-purpose
ranges, the ones that could reach this machine, its LAN or its cloud first); an IPv6 address is public only inside
global unicast ``2000::/3`` and outside ``_IPV6``. Every form that carries an IPv4 address inside IPv6 is refused
outright, whatever it carries (6to4, Teredo, NAT64, IPv4-compatible): a relay or translator on the path could turn it
into that IPv4 address, and judging what it carries is a second policy to get wrong. The one exception is the
v4-mapped form (``::ffff:a.b.c.d``), which the socket layer itself turns into IPv4: it is judged as the IPv4 address.
"""

from __future__ import annotations

import ipaddress

_Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def _table(rows: tuple[tuple[str, str], ...]) -> tuple[tuple[_Network, str], ...]:
    return tuple((ipaddress.ip_network(cidr), words) for cidr, words in rows)


#: Not public, most specific first (the first match gives the words).
_IPV4 = _table((
    ("0.0.0.0/32", "an unspecified address"),
    ("0.0.0.0/8", "a 'this network' address"),
    ("10.0.0.0/8", "a private address"),
    ("100.64.0.0/10", "a shared (carrier-grade NAT) address"),
    ("127.0.0.0/8", "a loopback address"),
    ("169.254.0.0/16", "a link-local address"),  # cloud metadata: 169.254.169.254
    ("172.16.0.0/12", "a private address"),
    ("192.0.0.0/24", "a reserved address"),  # IETF protocol assignments (DS-Lite, NAT64 discovery)
    ("192.0.2.0/24", "a documentation address"),
    ("192.88.99.0/24", "a 6to4 relay address"),
    ("192.168.0.0/16", "a private address"),
    ("198.18.0.0/15", "a benchmarking address"),
    ("198.51.100.0/24", "a documentation address"),
    ("203.0.113.0/24", "a documentation address"),
    ("224.0.0.0/4", "a multicast address"),
    ("255.255.255.255/32", "a broadcast address"),
    ("240.0.0.0/4", "a reserved address"),
))  # fmt: skip

#: Not public within 2000::/3 (global unicast), plus the ranges outside it that need their own words.
_IPV6 = _table((
    ("::/128", "an unspecified address"),
    ("::1/128", "a loopback address"),
    ("::/96", "an IPv4-compatible address"),
    ("64:ff9b::/96", "a NAT64 address"),
    ("64:ff9b:1::/48", "a NAT64 address"),
    ("100::/64", "a discard address"),
    ("2001::/32", "a Teredo address"),
    ("2001::/23", "a reserved address"),  # IETF protocol assignments
    ("2001:db8::/32", "a documentation address"),
    ("2002::/16", "a 6to4 address"),
    ("3fff::/20", "a documentation address"),
    ("fc00::/7", "a private address"),  # unique local
    ("fe80::/10", "a link-local address"),
    ("fec0::/10", "a site-local address"),
    ("ff00::/8", "a multicast address"),
))  # fmt: skip

_GLOBAL_UNICAST = ipaddress.IPv6Network("2000::/3")


def not_public(address: str) -> str:
    """Why ``address`` (an IP address literal, maybe with a ``%zone``) is not public, in words; '' if it is."""
    ip = ipaddress.ip_address(address.split("%")[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if isinstance(ip, ipaddress.IPv4Address):
        return next((words for network, words in _IPV4 if ip in network), "")
    words = next((words for network, words in _IPV6 if ip in network), "")
    if not words and ip not in _GLOBAL_UNICAST:
        words = "not a public address"
    return words


def literal_not_public(host: str) -> str:
    """Why ``host``, an IP address literal, is not public ("" if it is public or a name)."""
    try:
        ipaddress.ip_address(host.split("%")[0])
    except ValueError:
        return ""
    return not_public(host)
