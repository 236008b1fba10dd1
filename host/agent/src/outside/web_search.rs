//! `web_search`: asks the operator's SearXNG-compatible endpoint
//! (`GET <base>/search?q=…&format=json`) and gives the model at most
//! [`AGENT_WEB_SEARCH_RESULTS`] results, each title, URL and snippet. The
//! model supplies the query only; the endpoint is the operator's (it may
//! be on loopback), no redirect is followed, the answer is capped.

use super::Outside;
use crate::limits::{
    AGENT_WEB_SEARCH_REPLY_BYTES, AGENT_WEB_SEARCH_RESULTS, AGENT_WEB_SEARCH_TIMEOUT,
};
use serde_json::Value;
use workbooks::egress::HttpRequest;

/// Characters of one result's snippet the model reads.
const SNIPPET_CHARS: usize = 300;

/// Searches for `query`: the results as text, or the error.
pub(crate) async fn web_search(outside: &Outside, query: &str) -> Result<String, String> {
    let base = outside.services.web_search.as_deref().ok_or_else(|| {
        "web_search error: no search endpoint is configured (the operator sets WB_SEARCH_URL)"
            .to_string()
    })?;
    if query.trim().is_empty() {
        return Err("web_search error: the query is empty".into());
    }
    let mut url = url::Url::parse(&format!("{}/search", base.trim_end_matches('/')))
        .map_err(|e| format!("web_search error: the search endpoint's URL: {e}"))?;
    url.query_pairs_mut()
        .append_pair("q", query)
        .append_pair("format", "json");
    let mut request = HttpRequest::get(url.as_str());
    request
        .headers
        .push(("accept".to_string(), "application/json".to_string()));
    let answer = outside
        .ask(
            "web_search",
            "search endpoint",
            request,
            AGENT_WEB_SEARCH_REPLY_BYTES,
            AGENT_WEB_SEARCH_TIMEOUT,
        )
        .await?;
    results(&answer)
}

/// The results of a SearXNG JSON answer, as the model reads them.
fn results(body: &[u8]) -> Result<String, String> {
    let bad = || "web_search error: the search endpoint's answer is not SearXNG JSON".to_string();
    let answer: Value = serde_json::from_slice(body).map_err(|_| bad())?;
    let results = answer["results"].as_array().ok_or_else(bad)?;
    let text = |r: &Value, k: &str| -> String {
        r[k].as_str()
            .unwrap_or("")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    let lines: Vec<String> = results
        .iter()
        .filter(|r| r["url"].is_string())
        .take(AGENT_WEB_SEARCH_RESULTS)
        .enumerate()
        .map(|(i, r)| {
            let snippet: String = text(r, "content").chars().take(SNIPPET_CHARS).collect();
            format!(
                "{}. {}\n   {}\n   {snippet}",
                i + 1,
                text(r, "title"),
                text(r, "url")
            )
        })
        .collect();
    if lines.is_empty() {
        return Ok("no results".into());
    }
    Ok(lines.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[tokio::test]
    async fn no_endpoint_or_an_empty_query_asks_nothing() {
        let (_home, engine) = workbooks::engine::for_tests();
        let client = || engine.operator_client();
        let none = Outside::new(super::super::AgentServices::default(), client());
        assert!(
            web_search(&none, "q")
                .await
                .unwrap_err()
                .contains("no search endpoint")
        );
        // Port 9 on loopback: a request sent would fail as a transport error.
        let services = super::super::AgentServices {
            web_search: Some("http://127.0.0.1:9".into()),
            ..Default::default()
        };
        let some = Outside::new(services, client());
        assert_eq!(
            web_search(&some, "   ").await,
            Err("web_search error: the query is empty".into())
        );
    }

    #[test]
    fn at_most_eight_results_each_title_url_and_snippet() {
        let many: Vec<Value> = (1..=12)
            .map(|i| json!({"title": format!("T{i}"), "url": format!("https://e.org/{i}"), "content": format!("s{i}\nmore")}))
            .collect();
        let got = results(json!({"results": many}).to_string().as_bytes()).unwrap();
        assert_eq!(got.lines().count(), 3 * AGENT_WEB_SEARCH_RESULTS);
        assert!(got.starts_with("1. T1\n   https://e.org/1\n   s1 more\n2. T2"));
        assert!(got.ends_with("8. T8\n   https://e.org/8\n   s8 more"));
        assert_eq!(
            results(b"{\"results\": []}").unwrap(),
            "no results".to_string()
        );
        assert!(results(b"<html>").unwrap_err().contains("not SearXNG JSON"));
    }
}
