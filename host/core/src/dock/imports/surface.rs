//! The outermost imports and exports of a component binary, read without
//! parsing what is nested in it. The engine reads guests with it, and the
//! build (`build.rs`) reads the shipped brokers with the very same code,
//! so this file needs nothing but `wasmparser`.

use wasmparser::{Chunk, Encoding, Parser, Payload};

/// The top-level imports and exports of a component.
#[derive(Debug, Clone, Default)]
pub struct Surface {
    /// Import names, in binary order.
    pub imports: Vec<String>,
    /// Export names, in binary order.
    pub exports: Vec<String>,
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
                    surface.imports.push(import.name.name.to_string());
                }
            }
            Payload::ComponentExportSection(reader) => {
                for export in reader {
                    let export = export.map_err(|e| e.to_string())?;
                    surface.exports.push(export.name.name.to_string());
                }
            }
            Payload::End(_) => return Ok(Some(surface)),
            _ => {}
        }
    }
}
