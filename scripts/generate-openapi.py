#!/usr/bin/env python3
"""Writes Sources/LanyardServer/Resources/openapi.json, the OpenAPI 3.1 document of DESIGN section 3.

Edit this file, run it, commit both. OperationsTests checks the document lists exactly the served routes."""
import json, pathlib

def ref(name): return {"$ref": f"#/components/schemas/{name}"}
def body(schema, required=True): return {"required": required, "content": {"application/json": {"schema": schema}}}
def ok(schema, description="OK"): return {"description": description, "content": {"application/json": {"schema": schema}}}
def errors(*codes):
    return {str(c): {"$ref": f"#/components/responses/Error{c}"} for c in codes}
bearer = [{"bearer": []}]
provider = {"name": "provider", "in": "path", "required": True, "schema": {"type": "string", "enum": ["apple", "google"]}}
collection = {"name": "collection", "in": "path", "required": True, "schema": {"type": "string", "pattern": "^[a-z][a-z0-9_-]{0,63}$"}}
record_id = {"name": "id", "in": "path", "required": True, "schema": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,128}$"}}
token_body = {"type": "object", "required": ["id_token"], "properties": {
    "id_token": {"type": "string", "description": "The provider's ID token (JWT, RS256)."},
    "nonce": {"type": "string", "description": "The raw nonce the app generated; the token may carry it raw or as SHA-256 hex."}}}

schemas = {
    "Identity": {"type": "object", "required": ["provider", "email", "email_verified", "is_private_email", "linked_at", "last_sign_in_at"],
        "properties": {"provider": {"type": "string", "enum": ["apple", "google"]}, "email": {"type": ["string", "null"]},
            "email_verified": {"type": "boolean"}, "is_private_email": {"type": "boolean"},
            "linked_at": {"type": "string", "format": "date-time"}, "last_sign_in_at": {"type": ["string", "null"], "format": "date-time"}}},
    "User": {"type": "object", "required": ["id", "created_at", "is_anonymous", "display_name", "email", "identities"],
        "properties": {"id": {"type": "string", "format": "uuid"}, "created_at": {"type": "string", "format": "date-time"},
            "is_anonymous": {"type": "boolean"}, "display_name": {"type": ["string", "null"]}, "email": {"type": ["string", "null"]},
            "identities": {"type": "array", "items": ref("Identity"), "description": "Oldest link first; the first is the primary one."}}},
    "Me": {"allOf": [ref("User"), {"type": "object", "required": ["linked_providers"],
        "properties": {"linked_providers": {"type": "array", "items": {"type": "string"}}}}]},
    "SessionResponse": {"type": "object", "required": ["access_token", "token_type", "expires_in", "refresh_token", "user",
        "linked_providers", "is_new_user", "merged_from"], "properties": {
            "access_token": {"type": "string", "description": "JWT, ES256; verify with /.well-known/jwks.json"},
            "token_type": {"type": "string", "const": "Bearer"}, "expires_in": {"type": "integer"},
            "refresh_token": {"type": "string"}, "user": ref("User"),
            "linked_providers": {"type": "array", "items": {"type": "string"}}, "is_new_user": {"type": "boolean"},
            "merged_from": {"type": ["string", "null"], "description": "The anonymous account merged into this one by this sign-in."}}},
    "LinkResponse": {"type": "object", "required": ["linked_providers", "message"], "properties": {
        "linked_providers": {"type": "array", "items": {"type": "string"}}, "message": {"type": "string"}, "user": ref("User")}},
    "Session": {"type": "object", "properties": {"id": {"type": "string"}, "created_at": {"type": "string", "format": "date-time"},
        "last_refreshed_at": {"type": "string", "format": "date-time"}, "expires_at": {"type": "string", "format": "date-time"},
        "auth_time": {"type": "string", "format": "date-time"}, "method": {"type": "string"},
        "client_ip": {"type": ["string", "null"]}, "user_agent": {"type": ["string", "null"]}, "current": {"type": "boolean"}}},
    "Error": {"type": "object", "required": ["error"], "properties": {"error": {"type": "object",
        "required": ["code", "message", "details", "request_id"], "properties": {
            "code": {"type": "string", "enum": ["INVALID_REQUEST", "PAYLOAD_TOO_LARGE", "UNSUPPORTED_PROVIDER",
                "INVALID_PROVIDER_TOKEN", "PROVIDER_UNAVAILABLE", "UNAUTHORIZED", "INVALID_REFRESH_TOKEN",
                "REFRESH_TOKEN_REUSED", "PROVIDER_CONFLICT", "CANNOT_UNLINK_ONLY_PROVIDER", "PROVIDER_NOT_LINKED",
                "REAUTHENTICATION_REQUIRED", "RATE_LIMITED", "NOT_FOUND", "FORBIDDEN", "VERSION_CONFLICT", "INTERNAL_ERROR"]},
            "message": {"type": "string"}, "details": {"type": "object", "description": "reason, field, merge_available, retry_after…"},
            "request_id": {"type": "string"}}}}},
    "Record": {"type": "object", "required": ["id", "collection", "version", "updated_at", "data"], "properties": {
        "id": {"type": "string"}, "collection": {"type": "string"}, "version": {"type": "integer"},
        "updated_at": {"type": "string", "format": "date-time"}, "deleted": {"type": "boolean"},
        "data": {"type": ["object", "null"]}}},
    "JWKS": {"type": "object", "properties": {"keys": {"type": "array", "items": {"type": "object"}}}},
}
responses = {f"Error{c}": {"description": d, "content": {"application/json": {"schema": ref("Error")}}} for c, d in [
    (400, "INVALID_REQUEST, UNSUPPORTED_PROVIDER or CANNOT_UNLINK_ONLY_PROVIDER"), (401, "UNAUTHORIZED, INVALID_PROVIDER_TOKEN, INVALID_REFRESH_TOKEN, REFRESH_TOKEN_REUSED or REAUTHENTICATION_REQUIRED"),
    (404, "NOT_FOUND or PROVIDER_NOT_LINKED"), (409, "PROVIDER_CONFLICT (details.reason: already_linked, provider_already_linked, identity_in_use)"),
    (412, "VERSION_CONFLICT"), (413, "PAYLOAD_TOO_LARGE"), (429, "RATE_LIMITED, with Retry-After"), (503, "PROVIDER_UNAVAILABLE")]}

session = ok(ref("SessionResponse"))
paths = {
    "/v1/auth/signin/{provider}": {"parameters": [provider], "post": {"summary": "Exchange a provider ID token for a session",
        "description": "Finds the account by (provider, sub) or creates one. With the bearer of an anonymous account, a new identity upgrades it in place; an identity that already has an account signs into it and merges the guest into it (merged_from). Retrying after a lost response lands in the same account.",
        "security": [{}, {"bearer": []}], "requestBody": body({"type": "object", "required": ["id_token"], "properties": {
            **token_body["properties"], "given_name": {"type": "string"}, "family_name": {"type": "string"}}}),
        "responses": {"200": session, **errors(400, 401, 413, 429, 503)}}},
    "/v1/auth/anonymous": {"post": {"summary": "Create an anonymous (guest) account and session",
        "responses": {"200": session, **errors(429)}}},
    "/v1/auth/refresh": {"post": {"summary": "Rotate a refresh token",
        "description": "A just-rotated token is answered again, with the same successor, within LANYARD_REFRESH_REUSE_GRACE; after that it revokes the session.",
        "requestBody": body({"type": "object", "required": ["refresh_token"], "properties": {"refresh_token": {"type": "string"}}}),
        "responses": {"200": session, **errors(400, 401, 429)}}},
    "/v1/auth/signout": {"post": {"summary": "Sign out", "security": bearer,
        "requestBody": body({"type": "object", "properties": {"scope": {"type": "string", "enum": ["local", "global", "others"], "default": "local"}}}, required=False),
        "responses": {"204": {"description": "Signed out"}, **errors(400, 401)}}},
    "/v1/auth/link/{provider}": {"parameters": [provider],
        "post": {"summary": "Link an identity to this account", "security": bearer, "requestBody": body(token_body),
            "responses": {"200": ok(ref("LinkResponse")), **errors(400, 401, 409, 429, 503)}},
        "delete": {"summary": "Unlink an identity (recent sign-in required)", "security": bearer,
            "responses": {"200": ok(ref("LinkResponse")), **errors(400, 401, 404)}}},
    "/v1/auth/reauthenticate/{provider}": {"parameters": [provider], "post": {"summary": "Refresh auth_time with an ID token of one of this account's identities",
        "security": bearer, "requestBody": body(token_body), "responses": {"200": session, **errors(400, 401, 404, 409, 503)}}},
    "/v1/users/me": {
        "get": {"summary": "The signed-in account", "security": bearer, "responses": {"200": ok(ref("Me")), **errors(401)}},
        "patch": {"summary": "Change the display name", "security": bearer,
            "requestBody": body({"type": "object", "required": ["display_name"], "properties": {"display_name": {"type": ["string", "null"], "maxLength": 200}}}),
            "responses": {"200": ok(ref("Me")), **errors(400, 401)}},
        "delete": {"summary": "Delete the account, its identities and sessions (recent sign-in required)", "security": bearer,
            "responses": {"204": {"description": "Deleted"}, **errors(401)}}},
    "/v1/sessions": {"get": {"summary": "The account's signed-in devices", "security": bearer,
        "responses": {"200": ok({"type": "object", "properties": {"sessions": {"type": "array", "items": ref("Session")}}}), **errors(401)}}},
    "/v1/sessions/{id}": {"parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}],
        "delete": {"summary": "Revoke one of the account's sessions", "security": bearer,
            "responses": {"204": {"description": "Revoked"}, **errors(401, 404)}}},
    "/v1/data/{collection}/{id}": {"parameters": [collection, record_id],
        "put": {"summary": "Create or replace a record", "security": bearer,
            "parameters": [{"name": "If-Match", "in": "header", "required": False, "schema": {"type": "string"}, "description": "\"<version>\": 412 VERSION_CONFLICT on mismatch"}],
            "requestBody": body({"type": "object", "required": ["data"], "properties": {"data": {"type": "object"}}}),
            "responses": {"200": ok(ref("Record")), **errors(400, 401, 412, 413)}},
        "get": {"summary": "Read a record", "security": bearer, "responses": {"200": ok(ref("Record")), **errors(400, 401, 404)}},
        "delete": {"summary": "Delete a record, leaving a tombstone", "security": bearer,
            "parameters": [{"name": "If-Match", "in": "header", "required": False, "schema": {"type": "string"}}],
            "responses": {"200": ok(ref("Record")), **errors(400, 401, 404, 412)}}},
    "/v1/data/{collection}": {"parameters": [collection], "get": {"summary": "Changes after a cursor, oldest first, tombstones included",
        "security": bearer, "parameters": [{"name": "since", "in": "query", "schema": {"type": "string"}},
            {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 500, "default": 100}}],
        "responses": {"200": ok({"type": "object", "required": ["records", "next_cursor", "has_more"], "properties": {
            "records": {"type": "array", "items": ref("Record")}, "next_cursor": {"type": "string"}, "has_more": {"type": "boolean"}}}),
            **errors(400, 401)}}},
    "/.well-known/jwks.json": {"get": {"summary": "Public keys of access tokens", "responses": {"200": ok(ref("JWKS"))}}},
    "/.well-known/openid-configuration": {"get": {"summary": "Issuer, jwks_uri, endpoints, algorithms", "responses": {"200": ok({"type": "object"})}}},
    "/healthz": {"get": {"summary": "Liveness", "responses": {"200": ok({"type": "object"})}}},
    "/readyz": {"get": {"summary": "Database reachable", "responses": {"200": ok({"type": "object"}), "503": {"description": "Database unreachable"}}}},
    "/metrics": {"get": {"summary": "Prometheus text", "responses": {"200": {"description": "Prometheus exposition format", "content": {"text/plain": {"schema": {"type": "string"}}}}}}},
    "/openapi.json": {"get": {"summary": "This document", "responses": {"200": ok({"type": "object"})}}},
    "/_emulator/apple/keys": {"get": {"summary": "Dev mode only: the emulated Apple JWKS", "responses": {"200": ok(ref("JWKS"))}}},
    "/_emulator/google/certs": {"get": {"summary": "Dev mode only: the emulated Google JWKS", "responses": {"200": ok(ref("JWKS"))}}},
    "/_emulator/{provider}/id-token": {"parameters": [provider], "post": {"summary": "Dev mode only: mint a provider-shaped ID token",
        "requestBody": body({"type": "object", "required": ["sub"], "properties": {k: {"type": t} for k, t in [
            ("sub", "string"), ("email", "string"), ("nonce", "string"), ("aud", "string"), ("name", "string"),
            ("email_verified", "boolean"), ("is_private_email", "boolean"), ("expires_in", "integer")]}}),
        "responses": {"200": ok({"type": "object", "properties": {"id_token": {"type": "string"}}}), **errors(400)}}},
    "/_emulator": {"get": {"summary": "Dev mode only: a page to pick a test user and sign in", "responses": {"200": {"description": "HTML", "content": {"text/html": {}}}}}},
}
document = {"openapi": "3.1.0", "info": {"title": "Lanyard", "version": "0.1.0",
    "description": "Self-hostable identity server for native apps. Every error has the one shape of #/components/schemas/Error."},
    "paths": paths, "components": {"schemas": schemas, "responses": responses,
        "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"}}}}
out = pathlib.Path(__file__).resolve().parent.parent / "Sources/LanyardServer/Resources/openapi.json"
out.write_text(json.dumps(document, indent=2) + "\n")
print(f"wrote {out}")
