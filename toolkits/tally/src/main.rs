//! `tally`: a component of the engine's typed `plugin` world. `run(input)`
//! takes `add WORD…` (count each word once more and answer the new
//! counts), `get WORD` (its count) or `top` (every counted word, most
//! first). The counts live in the `kv` cap, the tenant's durable store, so
//! they outlive the instance; the component never names the tenant and
//! can reach no other tenant's keys.

wit_bindgen::generate!({
    inline: r#"
        package example:tally;
        world tally {
            include workbooks:engine/plugin@0.1.0;
            import workbooks:engine/kv@0.1.0;
        }
    "#,
    path: ["../../wit", "../../wit/host"],
    world: "example:tally/tally",
    generate_all,
});

use workbooks::engine::kv;

const PREFIX: &str = "tally/";

fn count(word: &str) -> Result<u64, String> {
    let stored = kv::get(&format!("{PREFIX}{word}")).map_err(|e| format!("kv: {e:?}"))?;
    Ok(stored
        .and_then(|v| String::from_utf8(v).ok())
        .and_then(|s| s.parse().ok())
        .unwrap_or(0))
}

struct Tally;

impl Guest for Tally {
    fn run(input: String) -> Result<String, String> {
        let mut words = input.split_whitespace();
        match words.next() {
            Some("add") => {
                let mut out = Vec::new();
                for word in words {
                    let n = count(word)? + 1;
                    kv::set(&format!("{PREFIX}{word}"), n.to_string().as_bytes())
                        .map_err(|e| format!("kv: {e:?}"))?;
                    out.push(format!("{word}={n}"));
                }
                Ok(out.join(" "))
            }
            Some("get") => {
                let word = words.next().ok_or("get needs a word")?;
                Ok(count(word)?.to_string())
            }
            Some("top") => {
                let keys = kv::list_keys(PREFIX).map_err(|e| format!("kv: {e:?}"))?;
                let mut rows = Vec::new();
                for key in keys {
                    let word = key.trim_start_matches(PREFIX).to_string();
                    rows.push((count(&word)?, word));
                }
                rows.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
                Ok(rows
                    .iter()
                    .map(|(n, w)| format!("{n} {w}"))
                    .collect::<Vec<_>>()
                    .join("\n"))
            }
            other => Err(format!(
                "unknown verb {}: use add WORD…, get WORD or top",
                other.unwrap_or("(none)")
            )),
        }
    }
}

export!(Tally);

fn main() {}
