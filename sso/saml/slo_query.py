"""The HTTP-Redirect query of a logout message, read once (docs/saml-slo.md; I2).

An HTTP-Redirect signature covers ``<SAMLRequest|SAMLResponse>=..&RelayState=..&SigAlg=..`` exactly as
the IdP encoded them (SAML bindings §3.4.4.1). The octets checked and the values used must come from
one reading of the query: Django's QueryDict decodes parameter *names* too, so ``Relay%53tate=<url>``
was an unsigned RelayState to the endpoint (echoed into our signed LogoutResponse) but no RelayState
to a signature check that matched names as received (attack pass 14). Here the raw query is split
once; a binding parameter whose name arrives percent-encoded, or that appears twice once decoded, is
refused; the values used and the octets verified are both taken from that one split.
"""

from dataclasses import dataclass
from urllib.parse import unquote_plus

PARAMETERS = ("SAMLRequest", "SAMLResponse", "RelayState", "SigAlg", "Signature")


class QueryRefused(Exception):
    """The query is not used; ``str()`` is the reason, safe to show."""


@dataclass(frozen=True)
class RedirectQuery:
    values: dict  # binding parameter name -> decoded value (what the SLO service uses)
    parts: dict  # binding parameter name -> its ``name=value`` part exactly as received (what is signed)

    @classmethod
    def parse(cls, raw_query):
        """The binding parameters of ``raw_query`` (the query string as received); raises QueryRefused."""
        values, parts = {}, {}
        for part in (raw_query or "").split("&"):
            raw_name, _, raw_value = part.partition("=")
            name = unquote_plus(raw_name)  # undecodable bytes become U+FFFD: never a binding name
            if name not in PARAMETERS:
                continue
            if raw_name != name:
                raise QueryRefused(f"the parameter name {name} arrives percent-encoded")
            if name in values:
                raise QueryRefused(f"{name} appears twice in the query")
            try:
                values[name] = unquote_plus(raw_value, errors="strict")
            except UnicodeDecodeError:
                raise QueryRefused(f"{name} is not UTF-8") from None
            parts[name] = part
        return cls(values, parts)

    def signed_octets(self, param):
        """What the query signature covers: ``param``, RelayState and SigAlg, as received, in that order."""
        if param not in self.parts or "SigAlg" not in self.parts:
            raise QueryRefused("the query signature needs the message and SigAlg in the query")
        names = (param, "RelayState", "SigAlg")
        return "&".join(self.parts[name] for name in names if name in self.parts).encode("ascii", "replace")
