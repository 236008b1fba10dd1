//! `wbx profiles`: the policy table.

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(args: Args) -> u8 {
    println!("{}", workbooks::policy::profiles_text(args.json));
    0
}
