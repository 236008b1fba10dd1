//! The agent API's grant routes: the operator lists, shows, adds,
//! narrows, widens and revokes the grants of the API's tenant over HTTP,
//! as `wbx grant` does on the command line.
//!
//! | route | what |
//! |---|---|
//! | `GET /api/grants` | the tenant's grants |
//! | `POST /api/grants` | add one: `{subject?, label?, profile?, caps?, reach, for?, until?}`; 201 with the record |
//! | `GET /api/grants/{id}` | one |
//! | `POST /api/grants/{id}/narrow` | `{only?, drop?, for?, until?}` |
//! | `POST /api/grants/{id}/widen` | `{add, for?, until?, forever?}` |
//! | `DELETE /api/grants/{id}` | revoke it: every call under it is refused from the next |
//!
//! `reach`, `only`, `drop` and `add` are lists as [`Lists`] reads them
//! (`{"net": ["https://api.example.com"], "names": {"commands": ["jq"]}}`).
//!
//! Threat: these routes change what runs may reach, so they sit behind
//! the API's gate (its bearer token, its Host and Origin checks) like
//! every route, and serve only the API's tenant: another tenant's grant
//! is `404`, as if it did not exist. No tool of an agent run reaches
//! them: the runs' `fetch` keeps to public addresses and the grant's
//! destinations, and this API listens on loopback unless the operator
//! gives it a token. Each change is written to the audit log (what, the
//! grant, `by api`, its scopes before and after) and to the grant's
//! history, which a run under the grant puts in its ledger.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::json;
use workbooks::grants::{BookError, Expiry, GrantRecord, Lists};

/// Who the grant's history and the audit say made a change over the API.
pub const API_CHANGER: &str = "api";

#[derive(Clone)]
struct Grants {
    engine: workbooks::Engine,
    tenant: String,
}

/// A new grant.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AddRequest {
    subject: Option<String>,
    label: Option<String>,
    profile: Option<String>,
    caps: Option<String>,
    #[serde(default)]
    reach: Lists,
    #[serde(rename = "for")]
    lasts: Option<String>,
    until: Option<String>,
}

/// A narrowing.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NarrowRequest {
    #[serde(default)]
    only: Lists,
    #[serde(default)]
    drop: Lists,
    #[serde(rename = "for")]
    lasts: Option<String>,
    until: Option<String>,
}

/// A widening.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct WidenRequest {
    #[serde(default)]
    add: Lists,
    #[serde(rename = "for")]
    lasts: Option<String>,
    until: Option<String>,
    #[serde(default)]
    forever: bool,
}

/// A request refused: its status and the `{"error": …}` it is answered.
struct Refusal(StatusCode, String);

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        (self.0, Json(json!({"error": self.1}))).into_response()
    }
}

fn bad(message: impl std::fmt::Display) -> Refusal {
    Refusal(StatusCode::BAD_REQUEST, message.to_string())
}

fn refused(e: BookError) -> Refusal {
    let status = match e {
        BookError::Unknown(_) => StatusCode::NOT_FOUND,
        BookError::Io { .. } => StatusCode::INTERNAL_SERVER_ERROR,
        _ => StatusCode::BAD_REQUEST,
    };
    Refusal(status, e.to_string())
}

/// What a grant route answers.
type Answer = Result<Response, Refusal>;

/// The expiry `for` or `until` asks for (not both).
fn expiry(lasts: Option<&str>, until: Option<&str>) -> Result<Expiry, Refusal> {
    match (lasts, until) {
        (Some(_), Some(_)) => Err(bad("give `for` or `until`, not both")),
        (Some(d), None) => Expiry::after(d).map_err(bad),
        (None, Some(t)) => Expiry::at(t).map_err(bad),
        (None, None) => Ok(Expiry::Keep),
    }
}

impl Grants {
    /// Grant `id` when it is this tenant's.
    fn own(&self, id: &str) -> Result<GrantRecord, Refusal> {
        self.engine
            .grants()
            .get(id)
            .filter(|r| r.tenant == self.tenant)
            .ok_or_else(|| refused(BookError::Unknown(id.to_string())))
    }

    /// Audits `what` of `record` (before: `was`) and answers with it.
    fn changed(&self, what: &str, was: Option<&GrantRecord>, record: GrantRecord) -> Response {
        let before = was.map_or_else(|| "(none)".to_string(), GrantRecord::scopes_text);
        let after = match what {
            "grant_revoked" => "(revoked)".to_string(),
            _ => record.scopes_text(),
        };
        let detail = format!("{} by {API_CHANGER}: {before} -> {after}", record.id);
        self.engine
            .cadence()
            .audit()
            .record(&self.tenant, "grant", what, &detail);
        Json(record).into_response()
    }
}

async fn list(State(g): State<Grants>) -> Answer {
    let all = g.engine.grants().list().map_err(refused)?;
    let own: Vec<GrantRecord> = all.into_iter().filter(|r| r.tenant == g.tenant).collect();
    Ok(Json(own).into_response())
}

async fn show(State(g): State<Grants>, Path(id): Path<String>) -> Answer {
    Ok(Json(g.own(&id)?).into_response())
}

async fn add(State(g): State<Grants>, Json(req): Json<AddRequest>) -> Answer {
    let expiry = expiry(req.lasts.as_deref(), req.until.as_deref())?;
    let mut record = GrantRecord::new(&g.tenant, API_CHANGER);
    record.subject = req.subject;
    record.label = req.label;
    record.profile = req.profile;
    record.caps = req.caps;
    record.net = (!req.reach.net.is_empty()).then_some(req.reach.net);
    record.prefixes = req.reach.prefixes;
    record.names = req.reach.names;
    record.dirs = (!req.reach.dirs.is_empty()).then_some(req.reach.dirs);
    record.env = (!req.reach.env.is_empty()).then_some(req.reach.env);
    record.llm_tokens = req.reach.llm_tokens;
    if let Expiry::At(ms) = expiry {
        record.expires_ms = Some(ms);
    }
    let added = g.engine.grants().add(record).map_err(refused)?;
    let mut answer = g.changed("grant_added", None, added);
    *answer.status_mut() = StatusCode::CREATED;
    Ok(answer)
}

async fn narrow(
    State(g): State<Grants>,
    Path(id): Path<String>,
    Json(req): Json<NarrowRequest>,
) -> Answer {
    let was = g.own(&id)?;
    let expiry = expiry(req.lasts.as_deref(), req.until.as_deref())?;
    let now = g
        .engine
        .grants()
        .narrow(&id, &req.only, &req.drop, expiry, API_CHANGER)
        .map_err(refused)?;
    Ok(g.changed("grant_narrowed", Some(&was), now))
}

async fn widen(
    State(g): State<Grants>,
    Path(id): Path<String>,
    Json(req): Json<WidenRequest>,
) -> Answer {
    let was = g.own(&id)?;
    let expiry = match req.forever {
        true if req.lasts.is_some() || req.until.is_some() => {
            return Err(bad("give `forever` or an expiry, not both"));
        }
        true => Expiry::Never,
        false => expiry(req.lasts.as_deref(), req.until.as_deref())?,
    };
    let now = g
        .engine
        .grants()
        .widen(&id, &req.add, expiry, API_CHANGER)
        .map_err(refused)?;
    Ok(g.changed("grant_widened", Some(&was), now))
}

async fn revoke(State(g): State<Grants>, Path(id): Path<String>) -> Answer {
    let was = g.own(&id)?;
    let gone = g.engine.grants().revoke(&id).map_err(refused)?;
    Ok(g.changed("grant_revoked", Some(&was), gone))
}

/// The grant routes of `tenant` in `engine`'s home (the caller puts them
/// behind its gate).
pub(crate) fn routes(engine: workbooks::Engine, tenant: &str) -> Router {
    let state = Grants {
        engine,
        tenant: tenant.to_string(),
    };
    Router::new()
        .route("/api/grants", get(list).post(add))
        .route("/api/grants/{id}", get(show).delete(revoke))
        .route("/api/grants/{id}/narrow", post(narrow))
        .route("/api/grants/{id}/widen", post(widen))
        .with_state(state)
}
