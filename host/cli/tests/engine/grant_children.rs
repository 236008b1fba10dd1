//! A grant's changes reach the children that cannot read the book the
//! grant is in: a `container` child (its home is private) and an
//! `os_process` child of a node worker (whose grant comes over the bus, fed
//! to it). Each guest fetches a destination the grant keeps, pauses, then
//! one a narrowing made after it started dropped: the second fetch is
//! refused naming the grant. Before the parent sent its children the
//! grant's changes, each child went on by the view it started with, and
//! the second fetch was not refused by the grant.

use crate::common::own_builder;
use guest_artifacts::NET_FETCH;
use std::time::Duration;
use workbooks::commands::{ArgMode, Tier};
use workbooks::grants::{Expiry, GrantRecord, Lists, Scope, ScopeFeed, ScopeSnapshot, Scoped};
use workbooks::{Engine, LineOptions};
use workbooks_fabric::{FabricOptions, Target, TaskInput};

const API: &str = "http://api.test";
const OTHER: &str = "http://other.test";

/// When the test changes the grant, after the child started: well before
/// the guest's second fetch, which comes [`PAUSE_MS`] after its first.
const CHANGE_AFTER: Duration = Duration::from_millis(100);
const PAUSE_MS: u64 = 2500;

/// An engine homed in `home` with [`NET_FETCH`] registered as `fetcher`.
fn engine_with_fetcher(home: &tempfile::TempDir) -> Engine {
    let e = own_builder(home.path())
        .child_binary(crate::CHILD)
        .build()
        .unwrap();
    let bytes = std::fs::read(NET_FETCH).unwrap();
    e.registry()
        .register("fetcher", bytes, ArgMode::Argv, Tier::Instance)
        .unwrap();
    e
}

/// Runs `fetcher paced` over [`OTHER`] then [`API`] at `tier` under
/// `scope`, with `change` made [`CHANGE_AFTER`] after its child starts; the two
/// lines it printed.
async fn fetch_twice(e: &Engine, tier: Tier, scope: Scope, change: impl FnOnce()) -> Vec<String> {
    let line = LineOptions {
        profile: "network".into(),
        tenant: "t".into(),
        scope: Some(scope),
        ..LineOptions::default()
    };
    let input = TaskInput {
        args: [
            "paced",
            &PAUSE_MS.to_string(),
            &format!("{OTHER}/"),
            &format!("{API}/"),
        ]
        .map(String::from)
        .to_vec(),
        stdin: String::new(),
    };
    let (fabric, target, opts) = (
        workbooks_fabric::Fabric::new(e.clone()),
        Target::Command("fetcher".into()),
        FabricOptions {
            tier: Some(tier),
            ..FabricOptions::default()
        },
    );
    let run = fabric.fan_out_as_host(line, &target, vec![input], &opts);
    // The change comes once a child is running (its view was taken
    // before it started), so it is one the child did not start with.
    let before = crate::container::framed_children_of(std::process::id());
    let changed = async {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while crate::container::framed_children_of(std::process::id()) <= before
            && tokio::time::Instant::now() < deadline
        {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        tokio::time::sleep(CHANGE_AFTER).await;
        change();
    };
    let (out, ()) = tokio::join!(run, changed);
    let out = out.unwrap().remove(0);
    let lines: Vec<String> = out.stdout.lines().map(str::to_string).collect();
    assert_eq!(lines.len(), 2, "{out:?}");
    lines
}

/// Asserts the first fetch was not refused by grant `id` and the second
/// was, by the narrowing.
fn second_refused_by_narrowing(lines: &[String], id: &str) {
    assert!(lines[0].starts_with(&format!("{OTHER}/: ")), "{lines:?}");
    assert!(!lines[0].contains("grant"), "{lines:?}");
    let refused = format!("grant {id}: net scope allows {OTHER}; refused {API}/");
    assert!(lines[1].contains(&refused), "{lines:?}");
}

#[tokio::test]
async fn a_container_child_judges_its_next_call_by_the_grant_narrowed_after_it_started() {
    let home = tempfile::tempdir().unwrap();
    let e = engine_with_fetcher(&home);
    let mut record = GrantRecord::new("t", "test");
    record.net = Some(vec![API.into(), OTHER.into()]);
    let id = e.grants().add(record).unwrap().id;
    let scope = e.granted_scope(&id, "t", "line").unwrap();
    let book = e.grants().clone();
    let lines = fetch_twice(&e, Tier::Container, scope, || {
        let drop = Lists {
            net: vec![API.into()],
            ..Lists::default()
        };
        book.narrow(&id, &Lists::default(), &drop, Expiry::Keep, "test")
            .unwrap();
    })
    .await;
    second_refused_by_narrowing(&lines, &id);
}

fn view(net: &[&str]) -> ScopeSnapshot {
    ScopeSnapshot::of_destinations(Some("g-fed"), Some(net))
}

#[tokio::test]
async fn an_os_process_child_of_a_fed_grant_judges_its_next_call_by_the_latest_change() {
    let home = tempfile::tempdir().unwrap();
    let e = engine_with_fetcher(&home);
    // As a node worker holds a task's grant: fed from elsewhere, in no
    // book the child could read.
    let feed = ScopeFeed::start(Scoped::read(view(&[API, OTHER])).unwrap());
    let lines = fetch_twice(&e, Tier::OsProcess, Scope::fed(feed.clone()), || {
        assert!(feed.offer(1, Ok(view(&[OTHER]))));
    })
    .await;
    second_refused_by_narrowing(&lines, "g-fed");
}
