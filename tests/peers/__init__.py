"""Peers the tests talk to over real HTTP: a real OpenID provider (Node, oidc-provider) and local stubs
of providers' documented responses."""
