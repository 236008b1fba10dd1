//! `wbx profiles`: the policy table.

#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

pub(crate) fn run(_args: Args) -> u8 {
    outln!("{}", workbooks::policy::profiles_text(crate::out::json()));
    0
}
