//! The OpenAPI document of the runs API, kept beside its routes; a test
//! checks that every route is in it.

use serde_json::{Value, json};

fn run_id() -> Value {
    json!([{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}])
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
                        "exec": {"type": "boolean", "description": "never honoured by this engine: the run is a plain one"}
                    }
                },
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
            "/api/openapi.json": {"get": {"summary": "this document", "responses": {"200": {"description": "OpenAPI 3.1"}}}}
        }
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_route_of_the_router_is_documented() {
        let src = include_str!("api.rs");
        let doc = super::document();
        let paths = doc["paths"].as_object().unwrap();
        let routes: Vec<&str> = src
            .lines()
            .filter_map(|l| l.trim().strip_prefix(".route(\""))
            .filter_map(|l| l.split('"').next())
            .collect();
        assert!(routes.len() >= 7, "{routes:?}");
        for r in &routes {
            assert!(paths.contains_key(*r), "{r} is not in the OpenAPI document");
        }
        assert_eq!(paths.len(), routes.len(), "{:?}", paths.keys());
    }
}
