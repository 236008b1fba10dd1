//! The node tier under a grant, attacked: a task on a `wbx worker` (another
//! process, with a home of its own that holds no grant) is held to the
//! grant its submitter runs under, and to every change of it made while
//! the task runs: a narrowing, a forged widening put on the bus by someone
//! else, a revocation.

use crate::node::{Nats, SUBMITTER_SEED, Worker, identity, node_opts};
use crate::servers;
use guest_artifacts::NET_FETCH;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use workbooks::LineOptions;
use workbooks::grants::{Expiry, GrantBook, GrantRecord, Lists, ScopeSnapshot};
use workbooks_fabric::node::{Envelope, GrantUpdate, NODE_GRANTS_BUCKET};
use workbooks_fabric::{Target, TaskInput};

/// A key no worker pins.
const STRANGER_SEED: &str = "BAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQ=";

/// Long enough for a change to go from the book through the submitter and
/// the bus to the worker (the submitter looks every 20 ms).
const SETTLE: Duration = Duration::from_millis(1500);

/// What the steering server does when a route is fetched, before it
/// answers.
async fn steer(path: &str, book: &GrantBook, id: &str, drop: &str, nats: &str) {
    match path {
        "/narrow" => {
            let drop = Lists {
                net: vec![drop.to_string()],
                ..Lists::default()
            };
            book.narrow(id, &Lists::default(), &drop, Expiry::Keep, "test")
                .unwrap();
        }
        "/forge" => forge_widening(nats, id).await,
        "/revoke" => {
            book.revoke(id).unwrap();
        }
        _ => return,
    }
    tokio::time::sleep(SETTLE).await;
}

/// Puts a view of grant `id` with no network scope at all in every run's
/// key, signed by a key no one pins, numbered far past any real change.
async fn forge_widening(nats: &str, id: &str) {
    let js = async_nats::jetstream::new(async_nats::connect(nats).await.unwrap());
    let kv = js.get_key_value(NODE_GRANTS_BUCKET).await.unwrap();
    let mut keys = kv.keys().await.unwrap();
    let mut forged = 0;
    while let Some(Ok(key)) = futures::StreamExt::next(&mut keys).await {
        let update = GrantUpdate {
            run: key.clone(),
            seq: 1_000_000,
            view: Ok(ScopeSnapshot::of_destinations(Some(id), None)),
            valid_until_ms: workbooks::grants::now_ms() + 3_600_000,
        };
        let signed = Envelope::sign(&identity(STRANGER_SEED), &update).unwrap();
        kv.put(key, serde_json::to_vec(&signed).unwrap().into())
            .await
            .unwrap();
        forged += 1;
    }
    assert_eq!(forged, 1, "the run's key is in the bucket");
}

/// A server on loopback whose `/narrow`, `/forge` and `/revoke` change the
/// grant (or forge a change) and then answer `ok`, as every other path.
async fn steering(book: Arc<GrantBook>, id: String, drop: String, nats: String) -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let (book, id, drop, nats) = (book.clone(), id.clone(), drop.clone(), nats.clone());
            tokio::spawn(async move {
                let Some((path, _)) = crate::model_server::read_head(&mut stream).await else {
                    return;
                };
                steer(&path, &book, &id, &drop, &nats).await;
                let _ = stream
                    .write_all(
                        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok",
                    )
                    .await;
            });
        }
    });
    port
}

/// One task fetches, in order: the steering server's `/narrow` (which
/// drops the other server from the grant), the other server (refused by
/// the narrowed grant, naming it), `/forge` (a widening signed by a
/// stranger put on the bus), the other server again (still refused: the
/// forgery is ignored), `/revoke` (whose answer, sent once the revocation
/// reached the worker, is cut off by it), and the steering server itself
/// (refused: the grant was revoked). The other server is never reached. Before the
/// task carried its grant, the node tier refused it outright; a worker that
/// took the bus's latest view whoever signed it would let the fourth fetch
/// through.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_task_is_held_to_its_grant_as_it_changes_while_the_task_runs() {
    let nats = Nats::start();
    let trust = format!("{}@*/*", identity(SUBMITTER_SEED).did);
    let mut worker = Worker::start_with_env(
        &nats.url,
        &["--trust", &trust],
        &[("WB_NET_ALLOW", "127.0.0.0/8")],
    );
    let (_home, engine) = crate::common::engine_with_commands(&[("net-probe", NET_FETCH)]);
    let other = servers::http().await;
    let other_origin = format!("http://127.0.0.1:{}", other.addr.port());
    let mut record = GrantRecord::new("t", "test");
    // Both servers, by the port each listens on; the steering server
    // needs the grant's id, so the grant is added with the other server
    // and widened to the steering one once it listens.
    record.net = Some(vec![other_origin.clone()]);
    let id = engine.grants().add(record).unwrap().id;
    let port = steering(
        engine.grants().clone(),
        id.clone(),
        other_origin.clone(),
        nats.url.clone(),
    )
    .await;
    let steer_origin = format!("http://127.0.0.1:{port}");
    let widen = Lists {
        net: vec![steer_origin.clone()],
        ..Lists::default()
    };
    engine
        .grants()
        .widen(&id, &widen, Expiry::Keep, "test")
        .unwrap();
    let scope = engine.granted_scope(&id, "t", "line").unwrap();
    let line = LineOptions {
        profile: "network".into(),
        tenant: "t".into(),
        scope: Some(scope),
        ..LineOptions::default()
    };
    let urls = [
        format!("{steer_origin}/narrow"),
        format!("{other_origin}/bytes/3"),
        format!("{steer_origin}/forge"),
        format!("{other_origin}/bytes/3"),
        format!("{steer_origin}/revoke"),
        format!("{steer_origin}/bytes/3"),
    ];
    let input = TaskInput {
        args: ["fetch".to_string()].into_iter().chain(urls).collect(),
        stdin: String::new(),
    };
    let (fabric, target, opts) = (
        workbooks_fabric::Fabric::new(engine.clone()),
        Target::Command("net-probe".into()),
        node_opts(&nats.url),
    );
    let fan = fabric.fan_out_as_host(line, &target, vec![input], &opts);
    let results = tokio::time::timeout(Duration::from_secs(120), fan)
        .await
        .unwrap_or_else(|_| panic!("no results; {}", worker.report()))
        .unwrap();
    let said = &results[0].stdout;
    let lines: Vec<&str> = said.lines().collect();
    assert_eq!(
        lines.len(),
        6,
        "{said}; {:?}; {}",
        results[0],
        worker.report()
    );
    assert!(lines[0].ends_with("/narrow: 200 2 bytes ok"), "{said}");
    let narrowed =
        format!("grant {id}: net scope allows {steer_origin}; refused {other_origin}/bytes/3");
    assert!(lines[1].contains(&narrowed), "{said}");
    assert!(lines[2].ends_with("/forge: 200 2 bytes ok"), "{said}");
    assert!(lines[3].contains(&narrowed), "{said}");
    // The answer to `/revoke` comes after the revocation reached the
    // worker: the request in flight is cut off by it.
    let revoked = format!("grant {id} was revoked");
    assert!(lines[4].contains(&revoked), "{said}");
    assert!(lines[5].contains(&revoked), "{said}");
    assert_eq!(other.hits.load(Ordering::SeqCst), 0);
}
