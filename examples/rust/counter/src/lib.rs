//! A `plugin` world component: counts how often each input was seen, in the
//! tenant's kv. The same program as `examples/python/counter` and
//! `examples/javascript/counter`.

wit_bindgen::generate!({
    path: "wit",
    world: "counter",
    generate_all,
});

use workbooks::engine::kv;

struct Counter;

impl Guest for Counter {
    fn run(input: String) -> Result<String, String> {
        let key = format!("seen:{input}");
        let seen = kv::get(&key)
            .map_err(|e| format!("kv: {e:?}"))?
            .and_then(|v| String::from_utf8(v).ok())
            .and_then(|s| s.parse::<u64>().ok())
            .unwrap_or(0);
        let count = seen + 1;
        kv::set(&key, count.to_string().as_bytes()).map_err(|e| format!("kv: {e:?}"))?;
        Ok(format!("{input} seen {count} time(s)"))
    }
}

export!(Counter);
