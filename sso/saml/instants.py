"""SAML instants (``xs:dateTime``), read and compared one way for the ACS and Single Logout (I4, I6).

An instant is the IdP's to write, and anyone can run an IdP (security.md, the attacker). Python's
datetime stops at year 9999, so ``NotOnOrAfter="9999-12-31T23:59:59Z"`` plus a clock skew raised
OverflowError: a 500 on an anonymous endpoint (attack pass 14). Hence:

- :func:`parse` turns the attribute into an aware UTC datetime, or None when it is not one (not a
  date, or an offset that takes it outside the datetime range);
- comparisons move *now* by the skew (``instant <= now - skew``), never the instant: now is far from
  both ends of the range, the instant may sit on one of them;
- :func:`later` adds a duration to an instant for a storage deadline (the replay store keeps an ID
  until its message expires) and saturates at :data:`LATEST` instead of overflowing. An instant that
  far away is still honoured: the ID stays reserved for as long as the message claims to be valid.
"""

from datetime import UTC, datetime

# A day short of datetime.max, so converting it to any local time (a database or a log) cannot overflow.
LATEST = datetime(9999, 12, 30, tzinfo=UTC)


def parse(value):
    """The instant ``value`` names as an aware UTC datetime, or None when it is not a valid instant.
    A value without an offset is UTC (SAML core §1.3.3 requires UTC)."""
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value.strip())  # 3.11+ reads the trailing Z
        return parsed.astimezone(UTC) if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    except (ValueError, OverflowError):  # e.g. 0001-01-01T00:00:00+23:59 is before year 1 in UTC
        return None


def later(instant, duration):
    """``instant + duration`` (a timedelta), or LATEST when that is past it."""
    if instant >= LATEST - duration:
        return LATEST
    return instant + duration


def passed(instant, now, skew):
    """True when the deadline ``instant`` (a NotOnOrAfter) has passed at ``now``, allowing ``skew``."""
    return instant <= now - skew
