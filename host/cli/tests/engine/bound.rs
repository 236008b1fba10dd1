//! Secrets the host adds at egress, attacked: a guest whose tenant has a
//! token bound to one destination gets its answers from that destination
//! without ever holding the token, on the `net` path and on `wasi:http`;
//! an echoing server cannot reflect it (headers, a body in chunks, a
//! redirect's `Location`), a redirect to another origin and a downgrade to
//! `http` do not carry it, a server that bounces it into a redirect is
//! not followed, and a session under a grant that does not name the
//! secret does not send it.

use crate::common::{text, wbx, wbx_env};
use crate::scope::{run_scoped, served};
use guest_artifacts::NET_FETCH;
use std::sync::atomic::Ordering;
use workbooks::grants::{GRANTS_FILE, GrantBook, GrantRecord};
use workbooks::{Binding, Place, Secret, SecretKind};

const TOKEN: &str = "tok-9f8e7d6c5b4a3921";

/// Binds tenant `t`'s token `api` to `to` as a bearer token.
fn bind(e: &workbooks::Engine, to: &str) {
    let token = Secret::new(SecretKind::Token, TOKEN.as_bytes().to_vec()).unwrap();
    e.keyring().set("t", "api", token).unwrap();
    let binding = Binding {
        to: to.to_string(),
        place: Place::Header {
            header: "Authorization".into(),
            template: "Bearer {}".into(),
        },
    };
    e.keyring().bind("t", "api", binding).unwrap();
}

/// `auth=` and what the echoing server got, masked: one `*` per byte of
/// `Bearer <token>`.
fn masked_echo() -> String {
    format!("auth={};", "*".repeat("Bearer ".len() + TOKEN.len()))
}

#[tokio::test]
async fn a_bound_token_reaches_its_destination_and_never_the_guest_on_either_http_path() {
    let (srv, _home, e) = served().await;
    let api = format!("http://api.test:{}", srv.addr.port());
    bind(&e, &api);
    for mode in ["echo", "httpecho"] {
        let out = run_scoped(&e, NET_FETCH, None, &[mode, &format!("{api}/echo-auth")]).await;
        assert!(!out.contains(TOKEN), "{mode}: {out}");
        // The body came in chunks (5 000 bytes before it) and is masked
        // whole; the echoed header too.
        assert!(out.contains(&masked_echo()), "{mode}: {out}");
        let header = format!("x-echo: {}", "*".repeat("Bearer ".len() + TOKEN.len()));
        assert!(out.to_ascii_lowercase().contains(&header), "{mode}: {out}");
    }
}

#[tokio::test]
async fn a_bound_token_goes_to_no_other_origin_by_redirect_or_name_nor_over_a_downgrade() {
    let (srv, _home, e) = served().await;
    let port = srv.addr.port();
    bind(&e, &format!("https://api.test:{port}"));
    let plain = format!("http://api.test:{port}/echo-auth");
    let other = format!("http://other.test:{port}/echo-auth");
    let redirect = format!("http://api.test:{port}/redirect?to={other}");
    // (wasi:http leaves a redirect to the guest: `net` follows it.)
    for (mode, url) in [
        ("echo", &plain),
        ("httpecho", &plain),
        ("echo", &other),
        ("httpecho", &other),
        ("echo", &redirect),
    ] {
        let out = run_scoped(&e, NET_FETCH, None, &[mode, url]).await;
        assert!(out.contains("auth=;"), "{mode} {url}: {out}");
    }
    // Bound to http, a redirect from it to another origin is sent bare.
    bind(&e, &format!("http://api.test:{port}"));
    let out = run_scoped(&e, NET_FETCH, None, &["echo", &redirect]).await;
    assert!(out.contains("auth=;"), "{out}");
}

#[tokio::test]
async fn a_server_that_bounces_the_token_into_a_redirect_is_not_followed_and_its_location_is_masked()
 {
    let (srv, _home, e) = served().await;
    let port = srv.addr.port();
    let api = format!("http://api.test:{port}");
    bind(&e, &api);
    let bounce = format!("{api}/bounce?to=http://evil.test:{port}/echo-auth?t=");
    let before = srv.hits.load(Ordering::SeqCst);
    let out = run_scoped(&e, NET_FETCH, None, &["echo", &bounce]).await;
    assert!(out.contains("a redirect carried a secret"), "{out}");
    assert!(!out.contains(TOKEN), "{out}");
    assert_eq!(
        srv.hits.load(Ordering::SeqCst),
        before + 1,
        "evil was asked"
    );
    // wasi:http leaves redirects to the guest: it sees the Location masked.
    let out = run_scoped(&e, NET_FETCH, None, &["httpecho", &bounce]).await;
    assert!(out.contains(": 302"), "{out}");
    assert!(!out.contains(TOKEN), "{out}");
    assert!(
        out.contains(&format!("t=Bearer+{}", "*".repeat(TOKEN.len()))),
        "{out}"
    );
}

/// Bound as query parameter `api_key`: the host sets it on the request
/// line (replacing the guest's own guess), the echo of it comes back
/// masked on both paths, a server that reflects it into a redirect is not
/// followed, and another origin, or the same one over a downgrade, is sent
/// none.
#[tokio::test]
async fn a_token_bound_as_a_query_parameter_replaces_the_guests_and_never_comes_back() {
    let (srv, _home, e) = served().await;
    let port = srv.addr.port();
    let api = format!("https://api.test:{port}");
    let token = Secret::new(SecretKind::Token, TOKEN.as_bytes().to_vec()).unwrap();
    e.keyring().set("t", "api", token).unwrap();
    for to in [api.replace("https", "http"), api.clone()] {
        let place = Place::Query {
            param: "api_key".into(),
        };
        e.keyring().bind("t", "api", Binding { to, place }).unwrap();
    }
    let http = format!("http://api.test:{port}");
    let asked = format!("{http}/echo-uri?q=1&api_key=guess");
    let sent = format!("/echo-uri?q=1&api_key={}", "*".repeat(TOKEN.len()));
    for mode in ["echo", "httpecho"] {
        let out = run_scoped(&e, NET_FETCH, None, &[mode, &asked]).await;
        assert!(!out.contains(TOKEN), "{mode}: {out}");
        assert!(
            !out.split_once('\n')
                .map_or("", |(_, echoed)| echoed)
                .contains("guess"),
            "{mode}: the guest's own was sent: {out}"
        );
        assert!(out.contains(&format!("uri={sent};")), "{mode}: {out}");
        assert!(
            out.to_ascii_lowercase()
                .contains(&format!("x-echo: {sent}")),
            "{mode}: {out}"
        );
    }
    // A server that reflects its request line into a redirect (this
    // one's `/redirect` does: the parameter lands in its Location) is not
    // followed; another origin is sent only what the guest wrote. Bound to
    // https only, plain http carries none.
    let other = format!("http://other.test:{port}/echo-uri?z=2");
    let bounced = format!("{http}/redirect?to={other}");
    let out = run_scoped(&e, NET_FETCH, None, &["echo", &bounced]).await;
    assert!(
        out.contains("a redirect carried a secret the host added"),
        "{out}"
    );
    assert!(!out.contains(TOKEN), "{out}");
    let out = run_scoped(&e, NET_FETCH, None, &["echo", &other]).await;
    assert!(out.contains("uri=/echo-uri?z=2;"), "{out}");
    e.keyring().unbind("t", "api", Some(&http)).unwrap();
    let out = run_scoped(
        &e,
        NET_FETCH,
        None,
        &["echo", &format!("{http}/echo-uri?q=1")],
    )
    .await;
    assert!(out.contains("uri=/echo-uri?q=1;"), "{out}");
    // A parameter name that would break the query is refused.
    let place = Place::Query {
        param: "a&b".into(),
    };
    let refused = e.keyring().bind("t", "api", Binding { to: api, place });
    assert!(refused.unwrap_err().to_string().contains("--query \"a&b\""));
}

#[tokio::test]
async fn a_session_under_a_grant_that_does_not_name_the_secret_does_not_send_it() {
    let (srv, home, e) = served().await;
    let api = format!("http://api.test:{}", srv.addr.port());
    bind(&e, &api);
    let book = GrantBook::new(Some(home.path().join(GRANTS_FILE)));
    // Naming another secret: not sent. Naming it: sent (and masked).
    for (named, answer) in [("other", "auth=;".to_string()), ("api", masked_echo())] {
        let mut r = GrantRecord::new("t", "test");
        r.names.insert("secrets".into(), vec![named.into()]);
        let id = book.add(r).unwrap().id;
        let scope = e.granted_scope(&id, "t", "line").unwrap();
        let url = format!("{api}/echo-auth");
        let out = run_scoped(&e, NET_FETCH, Some(scope), &["echo", &url]).await;
        assert!(out.contains(&answer), "{named}: {out}");
    }
}

#[test]
fn wbx_secret_binds_a_token_and_lists_where_never_its_value() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let set = ["secret", "set", "t", "api", "--kind", "token"];
    let out = wbx(h, &set, format!("{TOKEN}\n").as_bytes());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let bind = [
        "secret",
        "bind",
        "t",
        "api",
        "--to",
        "https://api.example.com",
        "--header",
        "Authorization: Bearer {}",
    ];
    let out = wbx(h, &bind, b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let listed = wbx(h, &["secret", "list", "t"], b"");
    let said = text(&listed.stdout);
    assert!(
        said.contains("-> https://api.example.com (Authorization: Bearer {})"),
        "{said}"
    );
    assert!(!said.contains(TOKEN), "{said}");
    // A template without its `{}`, a key that signs, a destination that
    // is not http: refused by name.
    let mut no_slot = bind;
    no_slot[7] = "Authorization: Bearer";
    let out = wbx(h, &no_slot, b"");
    assert_eq!(out.status.code(), Some(64), "{}", text(&out.stderr));
    let out = wbx_env(h, &["secret", "set", "t", "mac", "--generate"], b"", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let mut signing = bind;
    signing[3] = "mac";
    let out = wbx(h, &signing, b"");
    assert!(
        text(&out.stderr).contains("only a token"),
        "{}",
        text(&out.stderr)
    );
    let mut tcp = bind;
    tcp[5] = "tcp://db.example.com:5432";
    let out = wbx(h, &tcp, b"");
    assert_eq!(out.status.code(), Some(64), "{}", text(&out.stderr));
    let out = wbx(h, &["secret", "unbind", "t", "api"], b"");
    assert!(
        text(&out.stdout).contains("removed 1 binding"),
        "{}",
        text(&out.stdout)
    );
}

/// A token with bytes a URL encodes, bound as query parameter `key`:
/// a server that hands it back re-encoded (decoded, percent-encoded in
/// lower case hex, JSON-escaped) gets every form masked, and one that
/// sends the guest on to its own origin with the request's query (the
/// token in it) is followed, the token taken out of the target and set
/// again by the binding. Before, the re-encoded forms came back in clear
/// and the same-origin redirect was refused.
#[tokio::test]
async fn a_query_token_re_encoded_by_the_server_is_masked_and_a_same_origin_redirect_keeps_working()
{
    const ODD: &str = "tok/9f+8e=7d&6c";
    let (srv, _home, e) = served().await;
    let port = srv.addr.port();
    let http = format!("http://api.test:{port}");
    let token = Secret::new(SecretKind::Token, ODD.as_bytes().to_vec()).unwrap();
    e.keyring().set("t", "api", token).unwrap();
    let place = Place::Query {
        param: "key".into(),
    };
    let binding = Binding {
        to: http.clone(),
        place,
    };
    e.keyring().bind("t", "api", binding).unwrap();
    let out = run_scoped(
        &e,
        NET_FETCH,
        None,
        &["echo", &format!("{http}/reencode?q=1")],
    )
    .await;
    for form in [
        ODD.to_string(),
        "tok%2f9f%2b8e%3d7d%266c".to_string(),
        r"tok\/9f+8e=7d&6c".to_string(),
    ] {
        assert!(!out.contains(&form), "{form} came back: {out}");
    }
    assert!(out.contains("key: raw=***************;"), "{out}");
    // Same origin, the request's own query: followed, and the token sent
    // again by the binding (its echo masked), never shown in clear.
    let out = run_scoped(&e, NET_FETCH, None, &["echo", &format!("{http}/again?q=1")]).await;
    assert!(!out.contains("not followed"), "{out}");
    assert!(
        out.contains("uri=/echo-uri?q=1&key=***********************;"),
        "{out}"
    );
    assert!(!out.contains("tok"), "{out}");
}
