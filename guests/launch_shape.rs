// The shape the commands and exec brokers give their guests, included by
// each: a request no command could take is refused here, with the limit,
// before its bytes cross. The host runs the whole deny ladder and holds
// the same limits whatever a broker asks. Expects `Error` (the
// command-types error) in scope.

/// The most bytes of argv, counting a separator per entry.
const MAX_ARGV_BYTES: usize = 256 << 10;
/// The most bytes of stdin.
const MAX_STDIN_BYTES: usize = 64 << 20;

/// Refuses a request over the argv or stdin limit, or without a name.
fn shaped(name: &str, argv: &[String], stdin: &[u8]) -> Result<(), Error> {
    if name.is_empty() {
        return Err(Error::UnknownCommand(String::new()));
    }
    let argv_bytes: usize = name.len() + 1 + argv.iter().map(|a| a.len() + 1).sum::<usize>();
    if argv_bytes > MAX_ARGV_BYTES {
        return Err(Error::ArgvTooLarge(MAX_ARGV_BYTES as u64));
    }
    if stdin.len() > MAX_STDIN_BYTES {
        return Err(Error::StdinTooLarge(MAX_STDIN_BYTES as u64));
    }
    Ok(())
}
