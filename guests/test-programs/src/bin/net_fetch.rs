//! Fetches URLs through the engine's net interface and through
//! wasi:http/outgoing-handler, printing one line per URL:
//! `fetch URL..`, `len URL..` (status and length only), `many URL..`,
//! `auth URL` (sends a credential header), `http URL..` (wasi:http),
//! `echo URL..` and `httpecho URL..` (the whole answer: status, every
//! header, the body; through net and through wasi:http), `paced MS URL..`
//! (fetch, pausing MS between URLs).
use test_programs::wasi::http::{outgoing_handler, types};
use test_programs::workbooks::engine::net;

fn show(url: &str, r: Result<net::Response, net::NetError>) {
    match r {
        Ok(resp) => {
            let body = String::from_utf8_lossy(&resp.body);
            let shown: String = body.chars().take(60).collect();
            println!(
                "{url}: {} {} bytes {}",
                resp.status,
                resp.body.len(),
                shown.trim_end()
            );
        }
        Err(e) => println!("{url}: error {e:?}"),
    }
}

/// Status, headers and body of a wasi:http GET.
type Answer = (u16, Vec<(String, Vec<u8>)>, Vec<u8>);

fn wasi_http_get(url: &str) -> Result<Answer, String> {
    let parsed: Vec<&str> = url.splitn(4, '/').collect();
    let (scheme, authority, path) = match parsed.as_slice() {
        [s, "", a, p] => (*s, *a, format!("/{p}")),
        [s, "", a] => (*s, *a, "/".to_string()),
        _ => return Err("bad url".into()),
    };
    let req = types::OutgoingRequest::new(types::Fields::new());
    req.set_scheme(Some(&if scheme == "https:" {
        types::Scheme::Https
    } else {
        types::Scheme::Http
    }))
    .map_err(|_| "scheme")?;
    req.set_authority(Some(authority))
        .map_err(|_| "authority")?;
    req.set_path_with_query(Some(&path)).map_err(|_| "path")?;
    let future = outgoing_handler::handle(req, None).map_err(|e| format!("{e:?}"))?;
    future.subscribe().block();
    let resp = future
        .get()
        .ok_or("no response")?
        .map_err(|_| "taken twice")?
        .map_err(|e| format!("{e:?}"))?;
    let status = resp.status();
    let headers = resp.headers().entries();
    let body = resp.consume().map_err(|_| "body")?;
    let stream = body.stream().map_err(|_| "stream")?;
    let mut bytes = Vec::new();
    loop {
        match stream.blocking_read(65_536) {
            Ok(chunk) => bytes.extend_from_slice(&chunk),
            Err(test_programs::wasi::io::streams::StreamError::Closed) => break,
            Err(test_programs::wasi::io::streams::StreamError::LastOperationFailed(e)) => {
                return Err(match types::http_error_code(&e) {
                    Some(code) => format!("body: {code:?}"),
                    // Its first line: a host built with backtraces adds one.
                    None => {
                        let why = e.to_debug_string();
                        format!("body: {}", why.lines().next().unwrap_or_default())
                    }
                });
            }
        }
    }
    Ok((status, headers, bytes))
}

/// Prints an answer whole: `URL: STATUS`, `  K: V` per header, `  body B`.
fn echo(url: &str, (status, headers, body): Answer) {
    println!("{url}: {status}");
    for (k, v) in headers {
        println!("  {k}: {}", String::from_utf8_lossy(&v));
    }
    println!("  body {}", String::from_utf8_lossy(&body));
}

fn main() {
    let args = test_programs::args();
    let (mode, urls) = args.split_first().expect("mode");
    match mode.as_str() {
        "fetch" => urls.iter().for_each(|u| show(u, net::fetch(u))),
        "len" => urls.iter().for_each(|u| match net::fetch(u) {
            Ok(resp) => println!("{u}: {} {}", resp.status, resp.body.len()),
            Err(e) => println!("{u}: error {e:?}"),
        }),
        "many" => match net::fetch_many(urls) {
            Ok(results) => urls.iter().zip(results).for_each(|(u, r)| show(u, r)),
            Err(e) => println!("many: error {e:?}"),
        },
        "auth" => {
            let r = net::send(&net::Request {
                method: "GET".into(),
                url: urls[0].clone(),
                headers: vec![
                    ("Authorization".into(), "Bearer s3cret".into()),
                    ("X-Plain".into(), "kept".into()),
                ],
                body: Vec::new(),
            });
            show(&urls[0], r);
        }
        "http" => urls.iter().for_each(|u| match wasi_http_get(u) {
            Ok((status, _, body)) => println!("{u}: {status} {} bytes", body.len()),
            Err(e) => println!("{u}: error {e}"),
        }),
        "echo" => urls.iter().for_each(|u| match net::fetch(u) {
            Ok(r) => echo(
                u,
                (
                    r.status,
                    r.headers
                        .into_iter()
                        .map(|(k, v)| (k, v.into_bytes()))
                        .collect(),
                    r.body,
                ),
            ),
            Err(e) => println!("{u}: error {e:?}"),
        }),
        "httpecho" => urls.iter().for_each(|u| match wasi_http_get(u) {
            Ok(answer) => echo(u, answer),
            Err(e) => println!("{u}: error {e}"),
        }),
        "paced" => {
            let (pause, urls) = urls.split_first().expect("a pause in ms");
            let pause = std::time::Duration::from_millis(pause.parse().expect("ms"));
            for (i, u) in urls.iter().enumerate() {
                if i > 0 {
                    std::thread::sleep(pause);
                }
                show(u, net::fetch(u));
            }
        }
        other => panic!("unknown mode {other}"),
    }
}
