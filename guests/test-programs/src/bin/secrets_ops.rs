//! Signing operations, one line each (hex output): `hmac NAME DATA`,
//! `sign NAME DATA`, `pub NAME`.
use test_programs::workbooks::engine::secrets;

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn main() {
    let args = test_programs::args();
    let mut it = args.iter().map(String::as_str);
    while let Some(op) = it.next() {
        let name = it.next().expect("name");
        let out = match op {
            "hmac" => secrets::hmac_sha256(name, it.next().expect("data").as_bytes()),
            "sign" => secrets::ed25519_sign(name, it.next().expect("data").as_bytes()),
            "pub" => secrets::ed25519_public_key(name),
            other => panic!("unknown op {other}"),
        };
        match out {
            Ok(bytes) => println!("{}", hex(&bytes)),
            Err(e) => println!("error {e:?}"),
        }
    }
}
