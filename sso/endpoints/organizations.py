"""Organizations: create, list, list-members (better-auth's organization plugin subset, sso.md §8.1)."""

from rest_framework import serializers

from authservice.api import inputs
from authservice.api.registry import endpoint
from authservice.flows import sessions
from sso import organizations


class CreateOrganizationInput(inputs.Input):
    # The slug column is varchar(255); the name gets the same bound so neither overflows into a 500.
    name = inputs.String(min_length=1, max_length=255)
    slug = inputs.String(min_length=1, max_length=255)
    logo = inputs.String(required=False)
    metadata = inputs.Record(required=False)
    keepCurrentActiveOrganization = inputs.Boolean(required=False)


@endpoint("POST", "/organization/create", name="create_organization", body=CreateOrganizationInput,
          guard="session", summary="Create an organization owned by the caller", response="Organization",
          tags=("organization",))
def create_organization(ctx):
    organizations.require_enabled()
    body = ctx.body
    org, member = organizations.create(
        sessions.get_session(ctx), name=body["name"], slug=body["slug"], logo=body.get("logo"),
        metadata=body.get("metadata"),
        keep_current_active=body.get("keepCurrentActiveOrganization", False))
    return {**organizations.organization_wire(org), "members": [organizations.member_wire(member)]}


@endpoint("GET", "/organization/list", name="list_organizations", guard="session", no_store=True,
          summary="Organizations the caller belongs to", response="OrganizationList",
          tags=("organization",))
def list_organizations(ctx):
    organizations.require_enabled()
    user = sessions.get_session(ctx).user
    return [organizations.organization_wire(org) for org in organizations.list_for(user)]


class Count(inputs._Strict):  # noqa: SLF001 - the shared strict base
    """A non-negative integer, sent as a query string or a number."""

    expected = "number"
    # JavaScript's largest safe integer: far below what SQL LIMIT/OFFSET (64-bit) can hold.
    MAXIMUM = 2**53 - 1

    def to_internal_value(self, data):
        if isinstance(data, str) and data.isascii() and data.isdigit():
            data = int(data)
        if isinstance(data, int) and not isinstance(data, bool) and 0 <= data <= self.MAXIMUM:
            return data
        raise serializers.ValidationError(f"Invalid input: expected an integer from 0 to {self.MAXIMUM}")


class ListMembersQuery(inputs.Input):
    organizationId = inputs.String(required=False)
    organizationSlug = inputs.String(required=False)
    limit = Count(required=False)
    offset = Count(required=False)


@endpoint("GET", "/organization/list-members", name="list_members", query=ListMembersQuery,
          guard="session", no_store=True, summary="Members of an organization the caller belongs to",
          response="MemberList", tags=("organization",))
def list_members(ctx):
    organizations.require_enabled()
    query = ctx.query
    members, total = organizations.list_members(
        sessions.get_session(ctx), organization_id=query.get("organizationId"),
        organization_slug=query.get("organizationSlug"), limit=query.get("limit"),
        offset=query.get("offset"))
    return {"members": [organizations.member_wire(m, with_user=True) for m in members], "total": total}
