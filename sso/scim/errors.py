"""SCIM errors (RFC 7644 §3.12): one exception, rendered in the Error schema by ``views`` only."""

from scim2_models import Error

MEDIA_TYPE = "application/scim+json"


class ScimError(Exception):
    def __init__(self, status, detail, scim_type=None):
        super().__init__(detail)
        self.status, self.detail, self.scim_type = status, detail, scim_type

    def body(self):
        return Error(status=self.status, scim_type=self.scim_type, detail=self.detail).model_dump()


def not_found(what="Resource"):
    return ScimError(404, f"{what} not found")


def invalid_value(detail):
    return ScimError(400, detail, "invalidValue")


def invalid_syntax(detail):
    return ScimError(400, detail, "invalidSyntax")


def invalid_filter(detail):
    return ScimError(400, detail, "invalidFilter")


def invalid_path(detail):
    return ScimError(400, detail, "invalidPath")


def uniqueness(detail):
    return ScimError(409, detail, "uniqueness")


def too_many(detail):
    return ScimError(400, detail, "tooMany")


def mutability(detail):
    return ScimError(400, detail, "mutability")
