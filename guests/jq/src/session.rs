//! Run-time state shared with native filters: the input stream (for
//! `input`/`inputs`), the current file name (for `input_filename`) and the
//! diagnostic stream (for `debug`, `stderr` and `halt_error`).

use crate::output::{JsonWriter, Style};
use jaq_core::box_iter::box_once;
use jaq_core::data::HasLut;
use jaq_core::native::{Filter, Fun, run, v};
use jaq_core::{DataT, Lut, RunPtr};
use jaq_json::Val;
use jaq_std::input::{HasInputs, Inputs};
use std::cell::RefCell;
use std::io::Write;

/// The data kind jq filters run with.
pub struct Kind;

impl DataT for Kind {
    type V<'a> = Val;
    type Data<'a> = &'a Session<'a>;
}

/// Global data visible to native filters during one run.
pub struct Session<'a> {
    pub lut: &'a Lut<Kind>,
    pub inputs: Inputs<'a, Val>,
    pub filename: &'a RefCell<Val>,
    pub diagnostics: &'a RefCell<dyn Write + 'a>,
}

impl<'a> HasLut<'a, Kind> for &'a Session<'a> {
    fn lut(&self) -> &'a Lut<Kind> {
        self.lut
    }
}

impl<'a> HasInputs<'a, Val> for &'a Session<'a> {
    fn inputs(&self) -> Inputs<'a, Val> {
        self.inputs
    }
}

impl Session<'_> {
    /// Writes `value` to the diagnostic stream: strings raw, other values as
    /// compact JSON, optionally followed by a newline.
    fn report(&self, value: &Val, newline_after_json: bool) {
        let mut out = self.diagnostics.borrow_mut();
        let mut writer = JsonWriter::new(Style::compact());
        let is_text = matches!(value, Val::TStr(_) | Val::BStr(_));
        let _ = writer.write_raw_or_value(&mut *out, value);
        if newline_after_json && !is_text {
            let _ = out.write_all(b"\n");
        }
        let _ = out.flush();
    }

    fn debug(&self, value: &Val) {
        let mut out = self.diagnostics.borrow_mut();
        let mut writer = JsonWriter::new(Style::compact());
        let _ = out.write_all(b"[\"DEBUG:\",");
        let _ = writer.write_value(&mut *out, value);
        let _ = out.write_all(b"]\n");
        let _ = out.flush();
    }
}

/// Definitions layered over the standard library, using [`native_funs`].
pub const PRELUDE: &str = include_str!("prelude.jq");

/// Native filters that need the session; they take precedence over the
/// standard library's filters of the same name.
pub fn native_funs() -> impl Iterator<Item = Fun<Kind>> {
    let funs: [Filter<RunPtr<Kind>>; 4] = [
        ("input_filename", v(0), |cv| {
            box_once(Ok(cv.0.data().filename.borrow().clone()))
        }),
        ("debug_empty", v(0), |cv| {
            cv.0.data().debug(&cv.1);
            Box::new(std::iter::empty())
        }),
        ("stderr_empty", v(0), |cv| {
            cv.0.data().report(&cv.1, false);
            Box::new(std::iter::empty())
        }),
        ("halt_error_report", v(0), |cv| {
            cv.0.data().report(&cv.1, true);
            Box::new(std::iter::empty())
        }),
    ];
    funs.into_iter().map(run::<Kind>)
}

/// All native filters: the session's, then those of the jaq crates.
pub fn all_funs() -> impl Iterator<Item = Fun<Kind>> {
    native_funs()
        .chain(jaq_core::funs())
        .chain(jaq_std::funs())
        .chain(
            jaq_std::input::funs::<Kind>()
                .into_vec()
                .into_iter()
                .map(run::<Kind>),
        )
        .chain(jaq_json::funs())
}
