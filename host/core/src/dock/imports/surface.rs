//! The outermost imports and exports of a component binary, read without
//! parsing what is nested in it. The engine reads guests with it, and the
//! build (`build.rs`) reads the shipped brokers with the very same code,
//! so this file needs nothing but `wasmparser`.

use wasmparser::{
    CanonicalFunction, CanonicalOption, Chunk, ComponentType, ComponentTypeDeclaration, Encoding,
    InstanceTypeDeclaration, Parser, Payload,
};

/// The top-level imports and exports of a component.
#[derive(Debug, Clone, Default)]
pub struct Surface {
    /// Import names, in binary order.
    pub imports: Vec<String>,
    /// Export names, in binary order.
    pub exports: Vec<String>,
    /// Whether it needs the component model's async ABI, as far as its
    /// outermost sections tell: a WASI 0.3 import or export, an async
    /// function type, or a canonical built-in beyond lifting, lowering
    /// and the resource ones (tasks, streams, futures, waitables).
    pub concurrent: bool,
}

/// Reads the top-level imports and exports of a component binary. Returns
/// `None` for a core module. Nested modules and components are stepped
/// over whole, not parsed: only the outermost sections are read.
pub fn surface(bytes: &[u8]) -> Result<Option<Surface>, String> {
    let mut surface = Surface::default();
    let mut parser = Parser::new(0);
    let mut rest = bytes;
    loop {
        let (consumed, payload) = match parser.parse(rest, true).map_err(|e| e.to_string())? {
            Chunk::Parsed { consumed, payload } => (consumed, payload),
            Chunk::NeedMoreData(_) => return Err("unexpected end of the binary".into()),
        };
        rest = &rest[consumed..];
        match payload {
            Payload::Version {
                encoding: Encoding::Module,
                ..
            } => return Ok(None),
            Payload::ModuleSection {
                unchecked_range, ..
            }
            | Payload::ComponentSection {
                unchecked_range, ..
            } => {
                let len = usize::try_from(unchecked_range.end - unchecked_range.start)
                    .map_err(|e| e.to_string())?;
                rest = rest
                    .get(len..)
                    .ok_or("a nested section runs past the end of the binary")?;
            }
            Payload::ComponentImportSection(reader) => {
                for import in reader {
                    let import = import.map_err(|e| e.to_string())?;
                    surface.concurrent |= is_wasi_03(import.name.name);
                    surface.imports.push(import.name.name.to_string());
                }
            }
            Payload::ComponentTypeSection(reader) => {
                for ty in reader {
                    surface.concurrent |= is_async(&ty.map_err(|e| e.to_string())?);
                }
            }
            Payload::ComponentCanonicalSection(reader) => {
                for canonical in reader {
                    surface.concurrent |= is_concurrent(&canonical.map_err(|e| e.to_string())?);
                }
            }
            Payload::ComponentExportSection(reader) => {
                for export in reader {
                    let export = export.map_err(|e| e.to_string())?;
                    surface.concurrent |= is_wasi_03(export.name.name);
                    surface.exports.push(export.name.name.to_string());
                }
            }
            Payload::End(_) => return Ok(Some(surface)),
            _ => {}
        }
    }
}

/// A WASI 0.3 interface name (`wasi:cli/run@0.3.0`, a release candidate).
fn is_wasi_03(name: &str) -> bool {
    name.starts_with("wasi:") && name.contains("@0.3.")
}

/// A type that declares an async function, itself or in the instance or
/// component type it describes.
fn is_async(ty: &ComponentType<'_>) -> bool {
    match ty {
        ComponentType::Func(f) => f.async_,
        ComponentType::Instance(decls) => decls.iter().any(|d| match d {
            InstanceTypeDeclaration::Type(t) => is_async(t),
            _ => false,
        }),
        ComponentType::Component(decls) => decls.iter().any(|d| match d {
            ComponentTypeDeclaration::Type(t) => is_async(t),
            _ => false,
        }),
        _ => false,
    }
}

/// A canonical function only the async ABI has, or a lift or lower with
/// the async option.
fn is_concurrent(canonical: &CanonicalFunction) -> bool {
    let async_option = |options: &[CanonicalOption]| {
        options
            .iter()
            .any(|o| matches!(o, CanonicalOption::Async | CanonicalOption::Callback(_)))
    };
    match canonical {
        CanonicalFunction::Lift { options, .. } | CanonicalFunction::Lower { options, .. } => {
            async_option(options)
        }
        CanonicalFunction::ResourceNew { .. }
        | CanonicalFunction::ResourceDrop { .. }
        | CanonicalFunction::ResourceRep { .. } => false,
        _ => true,
    }
}
