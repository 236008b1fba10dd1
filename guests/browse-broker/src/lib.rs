//! The browse broker: serves `workbooks:engine/browse` by fetching through
//! the host's capped HTTP primitive (`workbooks:host/http`) and turning the
//! HTML into readable text here, inside the sandbox, so untrusted markup is
//! never parsed by the host. The host applies the floor, the pinning and
//! its own caps; this component adds the text cap.

mod html;

wit_bindgen::generate!({
    path: ["../../wit", "../../wit/host"],
    world: "workbooks:host/browse-broker",
    generate_all,
});

use exports::workbooks::engine::browse::{Guest, NetError, Page};
use workbooks::host::http;

/// Bytes of page requested from the host (the host may cap lower).
const MAX_PAGE_BYTES: u64 = 8 << 20;
/// Time asked for the fetch (the host caps it at 20 s).
const FETCH_TIMEOUT_MS: u32 = 20_000;
/// Bytes of text returned at most.
const MAX_TEXT_BYTES: usize = 1 << 20;

struct Browse;

impl Guest for Browse {
    fn fetch_text(url: String) -> Result<Page, NetError> {
        let doc = http::get(&url, MAX_PAGE_BYTES, FETCH_TIMEOUT_MS)?;
        let body = String::from_utf8_lossy(&doc.body);
        let is_html = doc.content_type.to_ascii_lowercase().contains("html")
            || (doc.content_type.is_empty() && body.trim_start().starts_with('<'));
        let (title, mut text) = if is_html {
            html::to_text(&body)
        } else {
            (String::new(), body.into_owned())
        };
        if text.len() > MAX_TEXT_BYTES {
            let mut cut = MAX_TEXT_BYTES;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text.truncate(cut);
        }
        Ok(Page {
            url: doc.url,
            status: doc.status,
            title,
            text,
        })
    }
}

export!(Browse);
