//! Host interfaces a crate above the core links for a component it docks
//! itself, in a [`Role`](super::Role) of its own: the engine's one hook for a
//! service's own imports (the agent service's `tools` and `telemetry`).
//!
//! The service declares an [`Extension`] as a `static`, docks on
//! `Role::Extended(&EXTENSION)` and runs the component with
//! [`Engine::call_on`](crate::Engine::call_on), handing the
//! store a context of its own type, which its host functions reach with
//! [`StoreState::extension`].
//!
//! Invariant: an extension's interfaces are linked, and pass the import
//! check, only in its own role; in every other role they are refused like
//! any `workbooks:host/*` import. A store's context is the service's
//! value for that one call, or the type's default, which must serve
//! nothing.

use crate::state::StoreState;
use wasmtime::component::Linker;

/// Links the interfaces of an [`Extension`].
pub type ExtensionLink = fn(&mut Linker<StoreState>) -> wasmtime::Result<()>;

/// What a service adds to the linker of its own role.
pub struct Extension {
    /// Names the role (in errors and in the engine's linker cache), so it
    /// must be unique among the extensions one engine sees.
    pub name: &'static str,
    /// The host interfaces it links, without versions
    /// (`workbooks:host/tools`).
    pub interfaces: &'static [&'static str],
    /// Links them.
    pub link: ExtensionLink,
}

impl Extension {
    /// Whether the import `name` (with or without its version) is one of
    /// this extension's interfaces.
    pub fn serves(&self, name: &str) -> bool {
        let name = name.split_once('@').map_or(name, |(path, _)| path);
        self.interfaces.contains(&name)
    }
}

impl std::fmt::Debug for Extension {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Extension")
            .field("name", &self.name)
            .field("interfaces", &self.interfaces)
            .finish()
    }
}

impl PartialEq for Extension {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Eq for Extension {}

impl std::hash::Hash for Extension {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.name.hash(state);
    }
}
