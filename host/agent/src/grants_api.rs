//! The agent API's grant routes: the operator lists, shows, adds,
//! narrows, widens and revokes the grants of the API's tenant over HTTP,
//! as `wbx grant` does on the command line.
//!
//! | route | what |
//! |---|---|
//! | `GET /api/grants` | the tenant's grants |
//! | `POST /api/grants` | add one: `{subject?, label?, profile?, caps?, reach, for?, until?}` (`reach` may hold `llm_tokens`); 201 with the record |
//! | `GET /api/grants/{id}` | one |
//! | `POST /api/grants/{id}/narrow` | `{only?, drop?, for?, until?}` |
//! | `POST /api/grants/{id}/widen` | `{add, for?, until?, forever?}` |
//! | `DELETE /api/grants/{id}` | revoke it: every call under it is refused from the next |
//!
//! `reach`, `only`, `drop` and `add` are lists as
//! [`Lists`](workbooks::grants::Lists) reads them (`{"net":
//! ["https://api.example.com"], "names": {"commands": ["jq"]}}`); the
//! verbs are the core's [`GrantDesk`].
//!
//! Threat: these routes change what runs may reach, so they are served
//! only when the API has a bearer token (without one, any local process
//! could call a loopback API), behind its gate (the token, its Host and
//! Origin checks) like every route, and serve only the API's tenant: another tenant's grant
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
use serde_json::json;
use workbooks::grants::{
    BookError, DeskError, GrantDesk, GrantRecord, Narrowing, NewGrant, Widening,
};

/// Who the grant's history and the audit say made a change over the API.
pub const API_CHANGER: &str = "api";

/// A request refused: its status and the `{"error": …}` it is answered.
struct Refusal(StatusCode, String);

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        (self.0, Json(json!({"error": self.1}))).into_response()
    }
}

impl From<DeskError> for Refusal {
    fn from(e: DeskError) -> Self {
        let status = match &e {
            DeskError::Book(BookError::Unknown(_)) => StatusCode::NOT_FOUND,
            DeskError::Book(BookError::Io { .. }) => StatusCode::INTERNAL_SERVER_ERROR,
            _ => StatusCode::BAD_REQUEST,
        };
        Refusal(status, e.to_string())
    }
}

/// What a grant route answers: the grant as stored, or the refusal.
type Answer = Result<Json<GrantRecord>, Refusal>;

async fn list(State(desk): State<GrantDesk>) -> Result<Json<Vec<GrantRecord>>, Refusal> {
    Ok(Json(desk.list()?))
}

async fn show(State(desk): State<GrantDesk>, Path(id): Path<String>) -> Answer {
    Ok(Json(desk.show(&id)?))
}

async fn add(
    State(desk): State<GrantDesk>,
    Json(new): Json<NewGrant>,
) -> Result<(StatusCode, Json<GrantRecord>), Refusal> {
    Ok((StatusCode::CREATED, Json(desk.add(new)?)))
}

async fn narrow(
    State(desk): State<GrantDesk>,
    Path(id): Path<String>,
    Json(change): Json<Narrowing>,
) -> Answer {
    Ok(Json(desk.narrow(&id, change)?))
}

async fn widen(
    State(desk): State<GrantDesk>,
    Path(id): Path<String>,
    Json(change): Json<Widening>,
) -> Answer {
    Ok(Json(desk.widen(&id, change)?))
}

async fn revoke(State(desk): State<GrantDesk>, Path(id): Path<String>) -> Answer {
    Ok(Json(desk.revoke(&id)?))
}

/// The grant routes of `tenant` in `engine`'s home (the caller puts them
/// behind its gate).
pub(crate) fn routes(engine: &workbooks::Engine, tenant: &str) -> Router {
    let desk = GrantDesk::new(
        engine.grants().clone(),
        engine.cadence().clone(),
        tenant,
        API_CHANGER,
    );
    Router::new()
        .route("/api/grants", get(list).post(add))
        .route("/api/grants/{id}", get(show).delete(revoke))
        .route("/api/grants/{id}/narrow", post(narrow))
        .route("/api/grants/{id}/widen", post(widen))
        .with_state(desk)
}
