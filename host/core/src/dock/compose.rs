//! Composing a guest with the broker components that serve its engine
//! imports (wac-graph), so the guest sees `workbooks:engine/<word>` and only
//! the broker sees the `workbooks:host` primitive underneath.
//!
//! Each broker is plugged into the guest: its export is wired to the
//! guest's import of the same name, and the result re-exports everything
//! the guest exports. The guest's other imports, and the broker's, pass
//! through as imports of the composition for the linker to satisfy.

use wac_graph::{CompositionGraph, EncodeOptions, types::Package};

/// The composer, by name and version: part of every composition's cache
/// key, so compositions made by another composer are never read back.
pub(crate) const COMPOSER: &str = concat!("wac-graph ", env!("WAC_GRAPH_VERSION"));

/// A broker component to plug into a guest.
pub(crate) struct Plug<'a> {
    /// A package name unique within the composition.
    pub(crate) name: &'a str,
    /// The broker's component bytes.
    pub(crate) bytes: &'a [u8],
}

/// Plugs `plugs` into `guest` and encodes the composition.
pub(crate) fn plug(guest: &[u8], plugs: &[Plug<'_>]) -> Result<Vec<u8>, String> {
    let mut g = CompositionGraph::new();
    let socket = Package::from_bytes("workbooks:guest", None, guest.to_vec(), g.types_mut())
        .map_err(|e| format!("guest: {e:#}"))?;
    let socket = g.register_package(socket).map_err(|e| format!("{e:#}"))?;
    let mut plug_ids = Vec::with_capacity(plugs.len());
    for p in plugs {
        let pkg = Package::from_bytes(p.name, None, p.bytes.to_vec(), g.types_mut())
            .map_err(|e| format!("{}: {e:#}", p.name))?;
        plug_ids.push(g.register_package(pkg).map_err(|e| format!("{e:#}"))?);
    }
    wac_graph::plug(&mut g, plug_ids, socket).map_err(|e| format!("{e:#}"))?;
    g.encode(EncodeOptions::default())
        .map_err(|e| format!("{e:#}"))
}
