//! `wbx mcp --operator`: the operator's grant verbs as MCP tools for one
//! tenant (`grant_list`, `grant_show`, `grant_add`, `grant_narrow`,
//! `grant_widen`, `grant_revoke`), served by the core's
//! [`GrantDesk`](workbooks::grants::GrantDesk): each change kept in the
//! grant's history and audited `by mcp`.
//!
//! Threat: these tools change what sessions may reach. They are never
//! served beside the engine's sandbox tools (a client that may run a tool
//! cannot also widen its own grant), over HTTP a bearer token is required
//! even on loopback, and an agent run has no tool that reaches an MCP
//! server; another tenant's grant is unknown here.

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Map, Value, json};
use std::sync::Arc;
use workbooks::grants::{DeskError, GrantDesk};

/// Who the grant's history and the audit say made a change over MCP.
pub(crate) const MCP_CHANGER: &str = "mcp";

/// The grant tools of one tenant.
#[derive(Clone)]
pub(crate) struct GrantTools {
    pub(crate) desk: GrantDesk,
    pub(crate) tenant: String,
}

/// Each tool: name, description, the properties of its arguments and the
/// required ones.
fn tools() -> Vec<(&'static str, &'static str, Value, Vec<&'static str>)> {
    let id = json!({"type": "string", "description": "the grant's id (g-…)"});
    let lists = json!({"type": "object", "description": "lists: net (destinations), prefixes and names by cap word (llm's names are models), dirs (HOST::GUEST[::ro]), env, llm_tokens"});
    let lasts = json!({"type": "string", "description": "expire this long from now (10m, 2h)"});
    let until = json!({"type": "string", "description": "expire at this time (RFC 3339)"});
    vec![
        ("grant_list", "The tenant's grants.", json!({}), vec![]),
        (
            "grant_show",
            "One of the tenant's grants.",
            json!({"id": id}),
            vec!["id"],
        ),
        (
            "grant_add",
            "Add a grant for the tenant.",
            json!({"subject": {"type": "string"}, "label": {"type": "string"},
                   "profile": {"type": "string"}, "caps": {"type": "string"},
                   "reach": lists, "for": lasts, "until": until}),
            vec![],
        ),
        (
            "grant_narrow",
            "Narrow a grant: keep only, drop, an earlier expiry. Reaches running sessions at their next call.",
            json!({"id": id, "only": lists, "drop": lists, "for": lasts, "until": until}),
            vec!["id"],
        ),
        (
            "grant_widen",
            "Widen a grant: add, a later expiry, or never expire.",
            json!({"id": id, "add": lists, "for": lasts, "until": until,
                   "forever": {"type": "boolean"}}),
            vec!["id"],
        ),
        (
            "grant_revoke",
            "Revoke a grant: every call under it is refused from the next.",
            json!({"id": id}),
            vec!["id"],
        ),
    ]
}

/// Runs tool `name` with `args`: the grant(s) as JSON, or the refusal.
fn call(desk: &GrantDesk, name: &str, mut args: Map<String, Value>) -> Result<Value, String> {
    let id = args
        .remove("id")
        .and_then(|v| v.as_str().map(str::to_string));
    let need_id = || {
        id.clone()
            .ok_or_else(|| "`id` (a string) is required".to_string())
    };
    let rest = Value::Object(args);
    let read = |e: serde_json::Error| format!("arguments: {e}");
    let said = match name {
        "grant_list" => desk.list().map(|l| json!(l)),
        "grant_show" => desk.show(&need_id()?).map(|r| json!(r)),
        "grant_add" => desk
            .add(serde_json::from_value(rest).map_err(read)?)
            .map(|r| json!(r)),
        "grant_narrow" => desk
            .narrow(&need_id()?, serde_json::from_value(rest).map_err(read)?)
            .map(|r| json!(r)),
        "grant_widen" => desk
            .widen(&need_id()?, serde_json::from_value(rest).map_err(read)?)
            .map(|r| json!(r)),
        "grant_revoke" => desk.revoke(&need_id()?).map(|r| json!(r)),
        other => return Err(format!("no tool `{other}`")),
    };
    said.map_err(|e: DeskError| e.to_string())
}

impl ServerHandler for GrantTools {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                "workbooks-operator",
                workbooks::compiler::VERSION,
            ))
            .with_instructions(format!(
                "The operator's grant verbs for tenant {}: list, show, add, narrow, widen, revoke.",
                self.tenant
            ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let listed = tools()
            .into_iter()
            .map(|(name, description, properties, required)| {
                let schema =
                    json!({"type": "object", "properties": properties, "required": required});
                let schema = match schema {
                    Value::Object(map) => map,
                    _ => Map::new(),
                };
                Tool::new(name, description, Arc::new(schema))
            })
            .collect();
        Ok(ListToolsResult::with_all_items(listed))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if !tools().iter().any(|(name, ..)| *name == request.name) {
            return Err(ErrorData::invalid_params(
                format!("no tool `{}`", request.name),
                None,
            ));
        }
        let args = request.arguments.unwrap_or_default();
        Ok(match call(&self.desk, &request.name, args) {
            Ok(value) => CallToolResult::success(vec![ContentBlock::text(value.to_string())]),
            Err(why) => CallToolResult::error(vec![ContentBlock::text(why)]),
        }
        .into())
    }
}
