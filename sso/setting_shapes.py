"""The shapes of the SSO plugin's compound settings (nameservers, providers defined in settings), in
the vocabulary of :mod:`authservice.setting_types`."""

from authservice.setting_types import Type, short


class Nameserver(Type):
    """``host``, ``host:port``, ``[v6]:port`` or a bare IPv6 address, as ``sso.domains`` reads it."""

    kind = "nameserver"
    emits = ("nameserver",)
    label = "'host' or 'host:port'"

    def problems(self, value, name):
        if not isinstance(value, str):
            return [self.wrong_type(value, name)]
        entry = value.strip()
        port = "53"
        if entry.startswith("["):
            host, _, rest = entry[1:].partition("]")
            port = rest[1:] if rest.startswith(":") else port if not rest else ""
        elif entry.count(":") == 1:
            host, port = entry.split(":")
        else:
            host = entry
        if host and port.isdigit() and 0 < int(port) < 65536:
            return []
        return [self.problem(name, f"is not a nameserver address: {value!r}",
                             "Write 'host' or 'host:port', e.g. '10.0.0.2:53' or '[::1]:5353'.")]


class DefaultProvider(Type):
    """One ``default_sso`` item: ``{"provider_id"|"providerId": ..., "oidc_config"|"saml_config": {...}}``."""

    kind = "default_sso"
    emits = ("default_sso",)
    label = 'a dict {"provider_id": ..., "domain": ..., "oidc_config" or "saml_config": {...}}'

    def problems(self, value, name):
        if not isinstance(value, dict):
            return [self.wrong_type(value, name)]
        found = []
        provider_id = value.get("provider_id") or value.get("providerId")
        if not (isinstance(provider_id, str) and provider_id):
            found.append(self.problem(name, "has no 'provider_id'", "Give the id its sign-in requests name, "
                                      "e.g. 'provider_id': 'okta'."))
        for snake, camel in (("oidc_config", "oidcConfig"), ("saml_config", "samlConfig"),
                             ("domain", "domain")):
            config = value.get(snake, value.get(camel))
            expected = dict if snake != "domain" else str
            if config is not None and not isinstance(config, expected):
                found.append(self.problem(f"{name}[{snake!r}]", f"must be a {expected.__name__}, not "
                                          f"{short(config)}", "See sso.md §2 for the provider's fields.",
                                          kind="type"))
        return found


