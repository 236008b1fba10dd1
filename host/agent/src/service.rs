//! The agent service: what runs agent loops on an engine. It holds the
//! engine, the toolkits it offers a run and the outside services its tools
//! reach; the engine knows none of them.

use crate::outside::{AgentServices, Outside, ServicesError};
use std::sync::Arc;
use workbooks::engine::Engine;
use workbooks_toolkit::Toolkits;

/// Runs agent loops on an engine ([`Agents::run`]); cheap to clone.
#[derive(Clone)]
pub struct Agents {
    engine: Engine,
    toolkits: Toolkits,
    outside: Arc<Outside>,
}

impl Agents {
    /// The service on `engine`: no outside services, and the toolkits the
    /// process finds ([`Toolkits::from_env`]). The engine shares its runs'
    /// working dirs ([`crate::RUN_WORKDIRS`]) with their tools from here
    /// on, and no other part of its home.
    pub fn new(engine: Engine) -> Agents {
        engine
            .share_home(crate::RUN_WORKDIRS)
            .expect("RUN_WORKDIRS is a pattern of names");
        let outside = Arc::new(Outside::new(
            AgentServices::default(),
            engine.operator_client(),
        ));
        Agents {
            engine,
            toolkits: Toolkits::from_env(),
            outside,
        }
    }

    /// Where the agent's outside tools go: the search endpoint, and for
    /// runs the host grants exec, the git remotes, the publish folder and
    /// the image endpoint. Refused when a place is not usable.
    pub fn with_services(mut self, services: AgentServices) -> Result<Agents, ServicesError> {
        services.check()?;
        self.outside = Arc::new(Outside::new(services, self.engine.operator_client()));
        Ok(self)
    }

    /// The toolkits a run is offered and may be told of.
    pub fn with_toolkits(mut self, toolkits: Toolkits) -> Agents {
        self.toolkits = toolkits;
        self
    }

    /// The engine the runs run on.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The toolkits a run is offered.
    pub fn toolkits(&self) -> &Toolkits {
        &self.toolkits
    }

    /// Where the outside tools go.
    pub(crate) fn outside(&self) -> &Outside {
        &self.outside
    }
}
