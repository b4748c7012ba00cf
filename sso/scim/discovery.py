"""ServiceProviderConfig, Schemas and ResourceTypes (RFC 7644 §4), generated from the scim2 models.

What is not supported is said here, where clients read it: bulk, sort, ETags, changePassword
(passwords are never set from the directory), cursor pagination.
"""

from scim2_models import (
    AuthenticationScheme, Bulk, ChangePassword, Context, EnterpriseUser, ETag, Filter, Group, ListResponse,
    Meta, Patch, ResourceType, Schema, ServiceProviderConfig, Sort, User,
)
from scim2_models.resources.service_provider_config import Pagination

from sso import app_settings as sso_settings
from sso.scim import errors, resources

RESOURCES = (User[EnterpriseUser], Group)


def service_provider_config(base):
    config = ServiceProviderConfig(
        documentation_uri=None,
        patch=Patch(supported=True),
        bulk=Bulk(supported=False, max_operations=0, max_payload_size=0),
        filter=Filter(supported=True, max_results=sso_settings.scim.max_results),
        change_password=ChangePassword(supported=False),
        sort=Sort(supported=False),
        etag=ETag(supported=False),
        authentication_schemes=[AuthenticationScheme(
            type="oauthbearertoken", name="OAuth Bearer Token", primary=True,
            description="The connection's SCIM token (POST /scim/generate-token), as Authorization: Bearer")],
        pagination=Pagination(index=True, cursor=False, default_page_size=sso_settings.scim.max_results,
                              max_page_size=sso_settings.scim.max_results),
        meta=Meta(resource_type="ServiceProviderConfig", location=f"{base}/ServiceProviderConfig"),
    )
    return config.model_dump(scim_ctx=Context.RESOURCE_QUERY_RESPONSE)


def _schemas(base):
    found = []
    for model in RESOURCES:
        found.append(model.to_schema() if model is Group else User.to_schema())
    found.append(EnterpriseUser.to_schema())
    for schema in found:
        schema.meta = Meta(resource_type="Schema", location=f"{base}/Schemas/{schema.id}")
    return found


def _resource_types(base):
    found = []
    for model in RESOURCES:
        resource_type = ResourceType.from_resource(model)
        resource_type.meta = Meta(resource_type="ResourceType", location=f"{base}/ResourceTypes/{resource_type.id}")
        found.append(resource_type)
    return found


def listing(kind, base, item_id=None):
    """``Schemas`` or ``ResourceTypes``: the ListResponse, or one item by id (404 when unknown)."""
    items = _schemas(base) if kind == "Schemas" else _resource_types(base)
    model = Schema if kind == "Schemas" else ResourceType
    if item_id is not None:
        for item in items:
            if item.id == item_id:
                return item.model_dump(scim_ctx=Context.RESOURCE_QUERY_RESPONSE)
        raise errors.not_found(model.__name__)
    response = resources.parametrized(ListResponse, model)(total_results=len(items), start_index=1, items_per_page=len(items),
                                   resources=items)
    return response.model_dump(scim_ctx=Context.SEARCH_RESPONSE)
