"""better-auth's passkey plugin (``@better-auth/passkey`` 1.7.6): WebAuthn credentials as a way to sign in.

``settings`` reads the relying party (RP ID, name, origins) from ``AUTHSERVICE["passkey"]``;
``challenges`` keeps the single-use challenge of a ceremony, bound to the browser that asked (I9);
``flows`` runs the ceremonies with py_webauthn and issues sessions through
:func:`authservice.flows.sessions.create_session`. The endpoints are declared in
``authservice/endpoints/passkey.py``; the model is :class:`authservice.models.Passkey`.
"""
