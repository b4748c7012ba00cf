"""SCIM 2.0 directory sync (RFC 7643 / RFC 7644) for an SSO provider: docs/scim.md.

One module a job: ``models`` (connections, provisioned users and groups), ``tokens`` (bearer tokens,
stored hashed), ``errors`` (the SCIM Error schema), ``filters`` (the ``filter`` parameter to SQL),
``users`` and ``groups`` (the resource flows), ``membership`` (groups -> organization membership and
role), ``discovery`` (ServiceProviderConfig, Schemas, ResourceTypes), ``views`` (the HTTP protocol),
``openapi`` (its routes in /openapi.json), ``admin``, ``signals``.
"""
