"""Sessions: get-session, sign-out, list-sessions, revoke-*, update-session (core.md §4.5, §4.6, §4.16-18)."""

from authservice import cookie_cache, wire
from authservice.api import inputs
from authservice.api.registry import endpoint
from authservice.errors import APIError, codes
from authservice.flows import sessions


class GetSessionQuery(inputs.Input):
    disableCookieCache = inputs.Flag()
    disableRefresh = inputs.Flag()


# The allow-list of a session still enrolling a second factor (two_factor.required_for) is declared
# with ``during_enrolment=True``: get-session, sign-out, the e-mail verification pair and the
# two-factor enrolment endpoints (docs/mfa.md).
@endpoint("GET", "/get-session", name="get_session", query=GetSessionQuery, headers_required=True,
          during_enrolment=True, no_store=True, summary="The current session and user, or null",
          response="SessionUserOrNull", tags=("session",))
def get_session(ctx):
    # The one reader of the cookie cache (authservice/cookie_cache.py says why no other endpoint is).
    if not ctx.query.get("disableCookieCache", False):
        cached = cookie_cache.served(ctx)
        if cached is not None:
            return cached
    found = sessions.get_session(ctx, disable_refresh=ctx.query.get("disableRefresh", False))
    if found is None:
        return None
    answer = {"session": wire.session(found.session), "user": wire.user(found.user)}
    if found.enrolment_pending:
        # The one endpoint such a session may read must not pass it off as an ordinary one: the SPA
        # shows enrolment, and host code asking auth.api.get_session() learns it opens nothing else.
        # Absent otherwise, so everyone else's answer stays better-auth's.
        # Nor is it cached: a cached answer would drop the flag (cookie_cache.store refuses it too).
        answer["session"]["twoFactorEnrollmentRequired"] = True
    else:
        sessions.set_cache_cookie(ctx, found)
    return answer


@endpoint("POST", "/get-session", name="get_session_post", summary="Not available (deferred refresh)",
          tags=("session",))
def get_session_post(ctx):
    raise APIError(405, codes.METHOD_NOT_ALLOWED_DEFER_SESSION_REQUIRED)


class SignOutInput(inputs.Input):
    callbackURL = inputs.String(required=False)
    disableRedirect = inputs.Boolean(required=False)
    state = inputs.String(required=False)


@endpoint("POST", "/sign-out", name="sign_out", body=SignOutInput, body_optional=True, headers_required=True,
          during_enrolment=True, summary="End the current session",
          response="Success", tags=("session",))
def sign_out(ctx):
    sessions.end_session(ctx)
    return {"success": True}


@endpoint("GET", "/list-sessions", name="list_sessions", guard="fresh", headers_required=True,
          no_store=True, summary="The caller's live sessions", response="SessionList", tags=("session",))
def list_sessions(ctx):
    user = sessions.get_session(ctx).user
    return [wire.session(session) for session in sessions.live_sessions(user)]


class RevokeSessionInput(inputs.Input):
    token = inputs.String()


@endpoint("POST", "/revoke-session", name="revoke_session", body=RevokeSessionInput, guard="sensitive",
          headers_required=True, summary="Revoke one of the caller's sessions", response="Status",
          tags=("session",))
def revoke_session(ctx):
    found = sessions.get_session(ctx)
    sessions.revoke(found.user, token=ctx.body["token"])
    if ctx.body["token"] == found.session.token:
        cookie_cache.clear_carried(ctx)  # this device's cache must not keep answering for the revoked session
    return {"status": True}


@endpoint("POST", "/revoke-sessions", name="revoke_sessions", guard="sensitive", headers_required=True,
          summary="Revoke all the caller's sessions", response="Status", tags=("session",))
def revoke_sessions(ctx):
    sessions.revoke(sessions.get_session(ctx).user)
    cookie_cache.clear_carried(ctx)  # the caller's own session went too
    return {"status": True}


@endpoint("POST", "/revoke-other-sessions", name="revoke_other_sessions", guard="sensitive",
          headers_required=True, summary="Revoke all the caller's other sessions", response="Status",
          tags=("session",))
def revoke_other_sessions(ctx):
    found = sessions.get_session(ctx)
    sessions.revoke(found.user, keep_token=found.session.token)
    return {"status": True}


@endpoint("POST", "/update-session", name="update_session", guard="session",
          summary="Update additional session fields (core has none)", response="Session",
          tags=("session",))
def update_session(ctx):
    # Core declares no additional session fields, so there is never anything to update.
    raise APIError(400, codes.NO_FIELDS_TO_UPDATE)
