"""Hostnames and e-mail domains as SSO routing and domain verification use them (I6).

Every domain that enters the service (``/sign-in/sso``'s ``domain`` and e-mail, a provider's domain
list at registration or update, the names ``verify-domain`` looks up) passes :func:`hostname` first.
Its natural bounds are checked on the raw text *before* any parsing, IDNA mapping or query, so the
cost of a request never grows with anything but a few hundred characters: a 31 KiB "domain" once
turned into 15,000 ``LIKE`` clauses and 1.6 GB of SQL (issue 12, F3).

No model imports here: ``sso.models`` uses this module to fill its domain index.
"""

import idna

from authservice.errors import APIError
from sso.errors import codes

MAX_HOSTNAME = 253  # RFC 1035 §2.3.4, in the dotted text form without the root dot
MAX_LABEL = 63
MAX_EMAIL = 254  # RFC 5321 §4.5.3.1.3 (a path of 256 minus the angle brackets)
# How many domains one provider may claim. Each costs one DNS lookup in verify-domain, and the
# list is parsed on every save; an organisation with more should use more providers.
MAX_DOMAINS = 20
# A list entry may be written as a URL ("https://acme.com:443/login"); this bounds that form.
MAX_ENTRY = 512


def hostname(value, code=codes.INVALID_DOMAIN):
    """``value`` as a lower-case ASCII (IDNA 2008, UTS 46) hostname; APIError 400 ``code`` if it is none.

    One trailing root dot is allowed and dropped. The length is checked on the raw text before the
    IDNA mapping (linear, but not free), and again on its ASCII result, which Punycode can make
    longer. A raw text over 253 characters that would only fit once ignorable characters are
    mapped away is refused too: nobody needs that.
    """
    if not isinstance(value, str):
        raise APIError(400, code)
    host = value.strip()
    host = host[:-1] if host.endswith(".") else host
    if not host or len(host) > MAX_HOSTNAME:
        raise APIError(400, code)
    try:
        ascii_host = idna.encode(host, uts46=True).decode("ascii")
    except (idna.IDNAError, UnicodeError):
        raise APIError(400, code) from None
    labels = ascii_host.split(".")
    if not ascii_host or len(ascii_host) > MAX_HOSTNAME or any(not 0 < len(label) <= MAX_LABEL
                                                               for label in labels):
        raise APIError(400, code)
    return ascii_host


def email_domain(email):
    """The hostname after the last ``@`` of ``email``; 400 ``INVALID_EMAIL`` past 254 characters."""
    if not isinstance(email, str) or len(email) > MAX_EMAIL or "@" not in email:
        raise APIError(400, codes.INVALID_EMAIL)
    return hostname(email.rpartition("@")[2], code=codes.INVALID_EMAIL)


def suffixes(host):
    """``a.b.c`` -> ``["a.b.c", "b.c", "c"]``: at most 127 for a valid hostname."""
    labels = host.split(".")
    return [".".join(labels[index:]) for index in range(len(labels))]


def entries(domain_list):
    """The raw entries of a provider's ``domain`` column: one name or a comma-separated list."""
    return [part.strip() for part in (domain_list or "").split(",") if part.strip()]


def entry_hostname(entry):
    """A list entry (a bare name, or a URL whose host is the name) as a hostname; else APIError 400."""
    value = entry.strip()
    if len(value) > MAX_ENTRY:
        raise APIError(400, codes.INVALID_DOMAIN)
    if "://" in value:
        value = value.split("://", 1)[1]
    # What a URL adds around the host: a path, query or fragment after it, userinfo before it, a port.
    for separator in "/?#":
        value = value.split(separator, 1)[0]
    value = value.rpartition("@")[2]
    if value.startswith("["):
        raise APIError(400, codes.INVALID_DOMAIN)  # an IP literal is no domain anyone can verify
    value = value.partition(":")[0]
    return hostname(value)


def domain_list(domain_list_value):
    """Every hostname of a provider's domain list, in order, duplicates dropped.

    APIError 400 if any is invalid, if there is none, or if there are more than MAX_DOMAINS; the
    lengths and the count are checked before any entry is parsed.
    """
    if not isinstance(domain_list_value, str) or len(domain_list_value) > MAX_DOMAINS * (MAX_ENTRY + 1):
        raise APIError(400, codes.INVALID_DOMAIN)
    raw = entries(domain_list_value)
    if len(raw) > MAX_DOMAINS:
        raise APIError(400, codes.INVALID_DOMAIN, f"A provider may list at most {MAX_DOMAINS} domains")
    if not raw:
        raise APIError(400, codes.INVALID_DOMAIN)
    return list(dict.fromkeys(entry_hostname(entry) for entry in raw))


def indexable(domain_list_value):
    """The valid hostnames of a stored list, invalid entries skipped: what the routing index holds.

    A row written before validation existed (or by hand) may hold a bad entry; it can never match a
    valid name, so leaving it out of the index changes no answer.
    """
    found = []
    for entry in entries(domain_list_value)[:MAX_DOMAINS]:
        try:
            found.append(entry_hostname(entry))
        except APIError:
            continue
    return list(dict.fromkeys(found))
