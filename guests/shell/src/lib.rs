//! The pipe shell broker: serves `workbooks:engine/shell` by parsing a
//! command line inside the sandbox and running each stage as a registered
//! command through `workbooks:engine/commands`.
//!
//! There is no shell process and no string is ever handed to one: the line
//! is parsed here into words, each stage's name and argv go to the host's
//! exec broker as structured values, and the host runs a pipeline's stages
//! at once, stdout streaming stage to stage through bounded pipes as bytes,
//! untouched. Redirections read and write only inside the preopened
//! directories (checked here lexically, and enforced again by wasi).

mod exec;
mod lex;
mod parse;

mod bindings {
    wit_bindgen::generate!({
        path: ["../../wit", "../../wit/host"],
        world: "workbooks:host/shell-broker",
        generate_all,
    });

    use super::Shell;
    export!(Shell);
}

use bindings::exports::workbooks::engine::shell::{Error, Guest, Outcome};
use lex::LexError;

struct Shell;

impl Guest for Shell {
    fn run(line: String) -> Result<Outcome, Error> {
        let script = lex::lex(&line)
            .and_then(parse::parse)
            .map_err(|e| match e {
                LexError::Syntax(s) => Error::Syntax(s),
                LexError::Unsupported(s) => Error::Unsupported(s),
            })?;
        let preopens = bindings::wasi::filesystem::preopens::get_directories()
            .into_iter()
            .map(|(_, name)| name)
            .collect();
        exec::Session::new(preopens).run(script)
    }
}
