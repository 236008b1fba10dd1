//! Runs kv operations named on the command line and prints one line each:
//! `set K V`, `get K`, `del K`, `exists K`, `list PREFIX`, `setn K BYTES`,
//! `fill N PREFIX` (sets N keys, stops at the first error), `getn K N`
//! (gets K N times, prints how many found a value).
use test_programs::workbooks::engine::kv;

fn main() {
    let args = test_programs::args();
    let mut it = args.iter().map(String::as_str);
    while let Some(op) = it.next() {
        let mut arg = || it.next().expect("missing operand").to_string();
        let line = match op {
            "set" => {
                let (k, v) = (arg(), arg());
                format!("{:?}", kv::set(&k, v.as_bytes()))
            }
            "get" => match kv::get(&arg()) {
                Ok(Some(v)) => String::from_utf8_lossy(&v).into_owned(),
                other => format!("{other:?}"),
            },
            "del" => format!("{:?}", kv::delete(&arg())),
            "exists" => format!("{:?}", kv::exists(&arg())),
            "list" => match kv::list_keys(&arg()) {
                Ok(keys) => format!("{} keys: {}", keys.len(), keys.join(",")),
                Err(e) => format!("{e:?}"),
            },
            "setn" => {
                let k = arg();
                let n: usize = arg().parse().expect("size");
                format!("{:?}", kv::set(&k, &vec![b'x'; n]))
            }
            "getn" => {
                let k = arg();
                let n: usize = arg().parse().expect("count");
                let found = (0..n)
                    .filter(|_| matches!(kv::get(&k), Ok(Some(_))))
                    .count();
                format!("found {found}")
            }
            "fill" => {
                let n: usize = arg().parse().expect("count");
                let prefix = arg();
                let mut result = format!("filled {n}");
                for i in 0..n {
                    if let Err(e) = kv::set(&format!("{prefix}{i}"), b"1") {
                        result = format!("stopped at {i}: {e:?}");
                        break;
                    }
                }
                result
            }
            other => panic!("unknown op {other}"),
        };
        println!("{line}");
    }
}
