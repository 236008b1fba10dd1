//! The toolkit manifest parser: any bytes, as text, parse without a
//! panic, and a parsed manifest's canonical form is stable (parsing it
//! again gives the same canonical text).

#![no_main]

use libfuzzer_sys::fuzz_target;
use workbooks_toolkit::Manifest;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let m = Manifest::parse(&text);
    let _ = (m.cli_bin(), m.caps(), m.drawer("ID"), m.signed_bytes());
    assert_eq!(Manifest::parse(&m.canonical).canonical, m.canonical);
});
