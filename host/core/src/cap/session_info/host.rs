use super::SessionCtx;
use crate::cap::bindings::workbooks::engine::session_info::{Host, Session};

impl Host for SessionCtx {
    fn get(&mut self) -> Session {
        Session {
            id: self.id.clone(),
            tenant: self.tenant.clone(),
            profile: self.profile.name().to_string(),
            caps: self.caps.words().into_iter().map(String::from).collect(),
        }
    }
}
