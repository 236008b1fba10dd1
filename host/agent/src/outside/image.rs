//! `image` (exec only): asks the operator's OpenAI-compatible images
//! endpoint for one picture and writes it inside the workdir. The key is
//! added here; the model supplies a prompt and a path, and the path is
//! confined like `vfs_write`'s. A run gets [`AGENT_IMAGES_PER_RUN`]
//! attempts, counted when the request is about to be sent, so a failed
//! generation spends its slot too. Only a PNG, JPEG or WebP is written.

use super::Outside;
use crate::limits::{AGENT_IMAGE_REPLY_BYTES, AGENT_IMAGE_TIMEOUT, AGENT_IMAGES_PER_RUN};
use crate::workdir::{ESCAPES, confine};
use base64::Engine as _;
use bytes::Bytes;
use serde_json::{Value, json};
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};
use workbooks::egress::HttpRequest;

/// The attempts a run has made.
#[derive(Debug, Default)]
pub(crate) struct ImageBudget(AtomicU32);

impl ImageBudget {
    /// Takes one attempt; `false` once the run has spent them all.
    fn take(&self) -> bool {
        self.0
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n < AGENT_IMAGES_PER_RUN).then_some(n + 1)
            })
            .is_ok()
    }
}

/// What the model reads when its attempts are spent.
pub(crate) fn exhausted() -> String {
    format!("image budget exhausted ({AGENT_IMAGES_PER_RUN}/run) — plan banners, don't spray")
}

/// Makes an image of `prompt` at `path` inside `workdir`: the text the
/// model reads and the bytes written, or the error.
pub(crate) async fn image(
    outside: &Outside,
    budget: &ImageBudget,
    workdir: &Path,
    prompt: &str,
    path: &str,
) -> Result<(String, Vec<u8>), String> {
    let endpoint = outside.services.image.as_ref().ok_or_else(|| {
        "image error: no image endpoint is configured (the operator sets WB_IMAGE_BASE_URL)"
            .to_string()
    })?;
    confine(workdir, path).ok_or_else(|| ESCAPES.to_string())?;
    if !budget.take() {
        return Err(exhausted());
    }
    let mut body = json!({"prompt": prompt, "n": 1, "size": endpoint.size});
    if let Some(model) = &endpoint.model {
        body["model"] = json!(model);
    }
    let mut headers = vec![("content-type".to_string(), "application/json".to_string())];
    if let Some(key) = &endpoint.api_key {
        headers.push(("authorization".to_string(), format!("Bearer {key}")));
    }
    let request = HttpRequest {
        method: http::Method::POST,
        url: endpoint.url.clone(),
        headers,
        body: Bytes::from(body.to_string()),
    };
    let answer = outside
        .ask(
            "image",
            "image endpoint",
            request,
            AGENT_IMAGE_REPLY_BYTES,
            AGENT_IMAGE_TIMEOUT,
        )
        .await?;
    let bytes = decoded(&answer)?;
    write_image(workdir, path, &bytes)?;
    Ok((
        format!("image written to {path} ({} bytes)", bytes.len()),
        bytes,
    ))
}

/// The first image of an images answer, checked to be one.
fn decoded(body: &[u8]) -> Result<Vec<u8>, String> {
    let answer: Value = serde_json::from_slice(body)
        .map_err(|_| "image error: the image endpoint's answer is not JSON".to_string())?;
    let b64 = answer["data"][0]["b64_json"].as_str().ok_or_else(|| {
        "image error: the answer has no data[0].b64_json (ask the endpoint for base64)".to_string()
    })?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(b64.trim())
        .map_err(|_| "image error: data[0].b64_json is not base64".to_string())?;
    let is_image = bytes.starts_with(b"\x89PNG\r\n\x1a\n")
        || bytes.starts_with(b"\xff\xd8\xff")
        || (bytes.len() > 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP");
    if !is_image {
        return Err("image error: the answer is not a PNG, JPEG or WebP image".into());
    }
    Ok(bytes)
}

/// Writes `bytes` at `path` inside `workdir`, through no link (also how a
/// replay puts a recorded image back).
pub(crate) fn write_image(workdir: &Path, path: &str, bytes: &[u8]) -> Result<(), String> {
    let at = confine(workdir, path).ok_or_else(|| ESCAPES.to_string())?;
    if let Some(dir) = at.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("image error: {path}: {e}"))?;
    }
    confine(workdir, path).ok_or_else(|| ESCAPES.to_string())?;
    workbooks::files::write_atomic(&at, bytes).map_err(|e| format!("image error: {path}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attempts_stop_at_the_budget_however_many_callers_race() {
        let budget = std::sync::Arc::new(ImageBudget::default());
        let taken: u32 = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8)
                .map(|_| s.spawn(|| u32::from(budget.take())))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).sum()
        });
        assert_eq!(taken, AGENT_IMAGES_PER_RUN);
        assert!(!budget.take());
    }

    #[test]
    fn only_a_base64_png_jpeg_or_webp_is_taken() {
        let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
        let answer = |b: &[u8]| json!({"data": [{"b64_json": b64(b)}]}).to_string();
        let png = b"\x89PNG\r\n\x1a\nrest";
        assert_eq!(decoded(answer(png).as_bytes()).unwrap(), png);
        let html = b"<html>not an image</html>";
        assert_eq!(
            decoded(answer(html).as_bytes()).unwrap_err(),
            "image error: the answer is not a PNG, JPEG or WebP image"
        );
        let url_only = json!({"data": [{"url": "https://x/y.png"}]}).to_string();
        assert!(
            decoded(url_only.as_bytes())
                .unwrap_err()
                .contains("b64_json")
        );
        assert!(decoded(b"nope").unwrap_err().contains("not JSON"));
    }
}
