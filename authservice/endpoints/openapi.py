"""GET /openapi.json (the API document) and GET /reference (a readable page of it, DEBUG only).

Both are registered endpoints like any other, so both appear in the document: the document describes
exactly the registry, with no exceptions to remember.
"""

from django.conf import settings
from django.utils.html import escape

from authservice import links
from authservice.api import openapi, render
from authservice.api.registry import endpoint
from authservice.errors import APIError, codes


@endpoint("GET", "/openapi.json", name="openapi_document", summary="This API as an OpenAPI 3.1 document",
          response="OpenAPI", tags=("meta",))
def openapi_document(ctx):
    return openapi.build(server_url=links.base(ctx))


@endpoint("GET", "/reference", name="openapi_reference",
          summary="A readable page of the OpenAPI document (only when DEBUG is on)", response="Page",
          tags=("meta",))
def openapi_reference(ctx):
    if not settings.DEBUG:
        raise APIError(404, codes.NOT_FOUND)
    return render.html(reference_page(openapi.build(server_url=links.base(ctx))))


_STYLE = """
body{font:15px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:60rem;padding:0 1rem;color:#222}
h2{margin-top:2.2rem;border-bottom:1px solid #ddd}.op{margin:1.2rem 0;padding:.6rem .9rem;
border:1px solid #e3e3e3;border-radius:6px}.m{display:inline-block;min-width:3.5rem;font-weight:700}
.get{color:#0a6}.post{color:#06c}.put,.patch{color:#a60}.delete{color:#c22}code{font-size:.95em}
table{border-collapse:collapse;margin:.4rem 0}td,th{border:1px solid #e3e3e3;padding:.15rem .5rem;
text-align:left;font-size:.9em}.d{color:#555}
"""


def _type(schema):
    if "$ref" in schema:
        return schema["$ref"].rsplit("/", 1)[-1]
    kind = schema.get("type", "any")
    kind = " | ".join(kind) if isinstance(kind, list) else kind
    if kind == "array":
        kind = f"{_type(schema.get('items', {}))}[]"
    if schema.get("format"):
        kind += f" ({schema['format']})"
    return kind


def _fields_table(rows):
    if not rows:
        return ""
    body = "".join(
        f"<tr><td><code>{escape(name)}</code></td><td>{escape(where)}</td><td>{escape(_type(schema))}</td>"
        f"<td>{'yes' if required else ''}</td></tr>"
        for name, where, schema, required in rows
    )
    return f"<table><tr><th>field</th><th>in</th><th>type</th><th>required</th></tr>{body}</table>"


def _operation_html(path, method, op):
    rows = [(p["name"], p["in"], p["schema"], p.get("required")) for p in op.get("parameters", ())]
    body = op.get("requestBody")
    if body:
        schema = body["content"][openapi.JSON]["schema"]
        required = set(schema.get("required", ()))
        rows += [(name, "body", prop, name in required) for name, prop in schema["properties"].items()]
        media = ", ".join(body["content"])
    else:
        media = ""
    codes_ = ", ".join(op["responses"])
    lock = " &#128274;" if op.get("security") else ""
    return (
        f'<div class="op" id="{escape(op["operationId"])}"><div><span class="m {method}">{method.upper()}'
        f"</span> <code>{escape(path)}</code>{lock} &mdash; {escape(op['summary'])}</div>"
        f'<div class="d"><code>auth.api.{escape(op["operationId"])}</code>'
        f"{' · ' + escape(op['description']) if op.get('description') else ''}</div>"
        f"{_fields_table(rows)}"
        f'<div class="d">{"body: " + escape(media) + " · " if media else ""}responses: {escape(codes_)}</div></div>'
    )


def reference_page(document):
    """Self-contained HTML (no scripts, no CDN): operations grouped by tag."""
    groups = {}
    for path, item in document["paths"].items():
        for method, op in item.items():
            groups.setdefault((op.get("tags") or ["other"])[0], []).append(_operation_html(path, method, op))
    sections = "".join(f"<h2>{escape(tag)}</h2>{''.join(ops)}" for tag, ops in groups.items())
    server = escape(document["servers"][0]["url"])
    return (
        "<!doctype html><html><head><meta charset=utf-8><title>authservice API reference</title>"
        f"<style>{_STYLE}</style></head><body><h1>authservice API reference</h1>"
        f"<p>Base URL <code>{server}</code> · OpenAPI {escape(document['openapi'])} document: "
        f'<a href="{server}/openapi.json">openapi.json</a> · errors are JSON '
        "<code>{message, code, status}</code>.</p>"
        f"{sections}</body></html>"
    )
