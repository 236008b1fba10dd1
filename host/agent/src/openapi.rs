//! The OpenAPI document of the runs API, kept beside its routes; a test
//! checks that every route is in it.

use serde_json::{Value, json};

fn run_id() -> Value {
    json!([{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}])
}

fn grant_id() -> Value {
    json!([{"name": "id", "in": "path", "required": true, "schema": {"type": "string", "pattern": "^g-[0-9a-f]{8}$"}}])
}

fn grant() -> Value {
    json!({"description": "the grant as stored", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Grant"}}}})
}

fn error() -> Value {
    json!({"description": "an error", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}})
}

/// The document.
pub fn document() -> Value {
    json!({
        "openapi": "3.1.0",
        "info": {"title": "workbooks agent runs", "version": env!("CARGO_PKG_VERSION")},
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": {
                "Error": {"type": "object", "properties": {"error": {"type": "string"}}},
                "RunRequest": {
                    "type": "object", "required": ["task"], "additionalProperties": false,
                    "properties": {
                        "task": {"type": "string"}, "system": {"type": "string"},
                        "model": {"type": "string"}, "max_steps": {"type": "integer", "minimum": 0},
                        "agent": {"type": "string"},
                        "exec": {"type": "boolean", "description": "never honoured by this engine: the run is a plain one"},
                        "grant": {"type": "string", "description": "a grant of the API's tenant the run acts under: every tool call and model request is judged by it as it is then"}
                    }
                },
                "Lists": {
                    "type": "object", "additionalProperties": false,
                    "description": "entries of a grant's lists: destinations (Spin's allowed_outbound_hosts syntax), name prefixes and names by cap word (llm's are models), host directories HOST::GUEST[::ro], host variables",
                    "properties": {
                        "net": {"type": "array", "items": {"type": "string"}},
                        "prefixes": {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "string"}}},
                        "names": {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "string"}}},
                        "dirs": {"type": "array", "items": {"type": "string"}},
                        "env": {"type": "array", "items": {"type": "string"}},
                        "llm_tokens": {"type": "integer", "minimum": 0, "description": "the llm token allowance: a narrowing may only lower it, a widening only raise it"}
                    }
                },
                "Grant": {"type": "object", "description": "a grant as wbx grant export writes it: id, tenant, subject, label, profile, caps, net, prefixes, names, dirs, env, expires_ms, llm_tokens, llm_spent, created_ms, by, history"},
                "Run": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "string"},
                        "status": {"enum": ["running", "finished", "done", "stopped", "failed", "cancelled", "interrupted"]},
                        "steps": {"type": "integer"}, "result": {"type": ["string", "null"]},
                        "tools": {"type": "array", "items": {"type": "string"}},
                        "agent": {"type": "string"}, "task": {"type": "string"},
                        "started": {"type": "integer"}, "ended": {"type": ["integer", "null"]},
                        "events_org": {"type": ["string", "null"]}
                    }
                }
            }
        },
        "security": [{"bearer": []}],
        "paths": {
            "/api/run": {"post": {
                "summary": "start a run",
                "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/RunRequest"}}}},
                "responses": {"202": {"description": "started: {id, status: running, exec}"}, "400": error(), "429": error()}
            }},
            "/api/run/{id}": {
                "get": {"summary": "a run", "parameters": run_id(),
                        "responses": {"200": {"description": "the run", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Run"}}}}, "404": error()}},
                "delete": {"summary": "cancel a live run", "parameters": run_id(),
                           "responses": {"200": {"description": "the run, cancelled if it was live"}, "404": error()}}
            },
            "/api/run/{id}/stream": {"get": {
                "summary": "a WebSocket of {type: step, ...} frames, then {type: done, ...}; {type: error, ...} first when a run ended elsewhere has a ledger that does not hold",
                "parameters": run_id(), "responses": {"101": {"description": "switching to WebSocket"}, "404": error()}
            }},
            "/api/run/{id}/review": {"post": {
                "summary": "put an item (any JSON) on the run's review queue", "parameters": run_id(),
                "responses": {"201": {"description": "{queued: n}"}, "404": error(), "409": error()}
            }},
            "/api/run/{id}/review/take": {"post": {
                "summary": "take the front of the run's review queue", "parameters": run_id(),
                "responses": {"200": {"description": "the item"}, "204": {"description": "the queue is empty"}, "404": error()}
            }},
            "/api/runs": {"get": {"summary": "every run, newest first", "responses": {"200": {"description": "the runs"}}}},
            "/api/openapi.json": {"get": {"summary": "this document", "responses": {"200": {"description": "OpenAPI 3.1"}}}},
            "/api/grants": {
                "get": {"summary": "the tenant's grants (the grant routes are served only when the API has a token)", "responses": {"200": {"description": "the grants"}}},
                "post": {"summary": "add a grant: {subject?, label?, profile?, caps?, reach: Lists, for?, until?}",
                         "responses": {"201": grant(), "400": error()}}
            },
            "/api/grants/{id}": {
                "get": {"summary": "one of the tenant's grants", "parameters": grant_id(), "responses": {"200": grant(), "404": error()}},
                "delete": {"summary": "revoke it: every call under it is refused from the next", "parameters": grant_id(), "responses": {"200": grant(), "404": error()}}
            },
            "/api/grants/{id}/narrow": {"post": {
                "summary": "narrow it: {only?: Lists, drop?: Lists, for?, until?}", "parameters": grant_id(),
                "responses": {"200": grant(), "400": error(), "404": error()}
            }},
            "/api/grants/{id}/widen": {"post": {
                "summary": "widen it: {add: Lists, for?, until?, forever?}", "parameters": grant_id(),
                "responses": {"200": grant(), "400": error(), "404": error()}
            }}
        }
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_route_of_the_router_is_documented() {
        let src = [include_str!("api.rs"), include_str!("grants_api.rs")].concat();
        let doc = super::document();
        let paths = doc["paths"].as_object().unwrap();
        let routes: Vec<&str> = src
            .lines()
            .filter_map(|l| l.trim().strip_prefix(".route(\""))
            .filter_map(|l| l.split('"').next())
            .collect();
        assert!(routes.len() >= 11, "{routes:?}");
        for r in &routes {
            assert!(paths.contains_key(*r), "{r} is not in the OpenAPI document");
        }
        assert_eq!(paths.len(), routes.len(), "{:?}", paths.keys());
    }
}
