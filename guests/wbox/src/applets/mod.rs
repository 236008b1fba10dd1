//! The applet table and helpers every applet shares (usage errors).

mod basename;
mod cat;
mod cut;
mod dirname;
mod echo;
mod head;
mod nl;
mod rev;
mod seq;
mod sort;
mod tail;
mod tr;
mod truth;
mod uniq;
mod wc;

use std::ffi::{OsStr, OsString};
use std::io;

use crate::EXIT_USAGE;
use crate::args::UsageError;
use crate::streams::Io;

/// An applet's entry point. `Err` means writing the output failed; read
/// errors are reported by the applet itself and turned into exit code 1.
pub type RunFn = fn(&[OsString], &mut Io) -> io::Result<u8>;

/// One entry of the applet table.
pub struct Applet {
    /// The name it is invoked by.
    pub name: &'static str,
    /// Its entry point.
    pub run: RunFn,
}

const APPLETS: &[Applet] = &[
    Applet {
        name: "basename",
        run: basename::run,
    },
    Applet {
        name: "cat",
        run: cat::run,
    },
    Applet {
        name: "cut",
        run: cut::run,
    },
    Applet {
        name: "dirname",
        run: dirname::run,
    },
    Applet {
        name: "echo",
        run: echo::run,
    },
    Applet {
        name: "false",
        run: truth::run_false,
    },
    Applet {
        name: "head",
        run: head::run,
    },
    Applet {
        name: "nl",
        run: nl::run,
    },
    Applet {
        name: "rev",
        run: rev::run,
    },
    Applet {
        name: "seq",
        run: seq::run,
    },
    Applet {
        name: "sort",
        run: sort::run,
    },
    Applet {
        name: "tail",
        run: tail::run,
    },
    Applet {
        name: "tr",
        run: tr::run,
    },
    Applet {
        name: "true",
        run: truth::run_true,
    },
    Applet {
        name: "uniq",
        run: uniq::run,
    },
    Applet {
        name: "wc",
        run: wc::run,
    },
];

/// The applet called `name`, if any.
pub fn find(name: &OsStr) -> Option<&'static Applet> {
    APPLETS.iter().find(|applet| name == applet.name)
}

/// All applet names, sorted.
pub fn names() -> Vec<&'static str> {
    APPLETS.iter().map(|applet| applet.name).collect()
}

/// Handles a rejected command line: `--help` prints the synopsis to stdout
/// and succeeds; anything else is reported on stderr with exit code 2.
pub fn usage_failure(io: &mut Io, name: &str, synopsis: &str, err: &UsageError) -> io::Result<u8> {
    if *err == UsageError::Help {
        writeln!(io.stdout, "usage: {name} {synopsis}")?;
        return Ok(0);
    }
    let _ = writeln!(io.stderr, "{name}: {err}\nusage: {name} {synopsis}");
    Ok(EXIT_USAGE)
}
