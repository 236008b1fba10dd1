//! Secrets the host adds at egress, so no guest ever holds them: a
//! tenant's token bound to a destination (`wbx secret bind NAME --to
//! https://api.example.com --header "Authorization: Bearer {}"`, or
//! `--basic USER`, or `--query PARAM`) is set on a request whose
//! destination the binding names, judged on the URL of each hop after the
//! scope and the floor; and its bytes are masked in what comes back.
//!
//! Threat: a guest that may call an API would otherwise be handed its
//! token, and could send it anywhere it may reach. So:
//! - the value is added only when the hop's scheme, host and port match
//!   the binding: never to another origin, never on a redirect to one
//!   (each hop asks again, and the guest's own headers never carry ours),
//!   never over `http://` when the binding says `https://` (a downgrade);
//! - a guest's header or query parameter of the same name is replaced, so
//!   the guest cannot make the host send the token under a name the
//!   server would echo, nor send two values;
//! - a query parameter is added to the request line of that hop only: the
//!   URL a redirect is resolved against, and the final URL the guest is
//!   told, are the guest's own;
//! - the raw value and each form it is sent in are masked (`*` for every
//!   byte, so a length stays right) in the response headers and body of
//!   every request it was added to, across body chunks, so a server that
//!   echoes the request cannot reflect it into the guest;
//! - the value is never in an error, a log line or the audit: an
//!   [`Injection`]'s `Debug` names the secret, not its bytes.

use bytes::{Bytes, BytesMut};
use std::fmt;

/// One secret set on one request: where it goes, and the byte strings
/// masked in what comes back.
pub struct Injection {
    /// The secret's name (for the audit).
    pub secret: String,
    /// Where the value goes.
    pub carrier: Carrier,
    /// What is masked in the response: the raw value and each encoding
    /// of it the request carried.
    pub masks: Vec<Vec<u8>>,
}

/// Where an injected value goes.
pub enum Carrier {
    /// A header: its name and value (marked sensitive when set).
    Header(http::HeaderName, http::HeaderValue),
    /// A query parameter: its name and value (encoded when set).
    Query(String, String),
}

impl fmt::Debug for Injection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let place = match &self.carrier {
            Carrier::Header(name, _) => format!("header {name}"),
            Carrier::Query(name, _) => format!("query parameter {name}"),
        };
        write!(f, "Injection({} as {place}, <redacted>)", self.secret)
    }
}

/// What adds secrets at egress, asked at every hop with the destination
/// the request is about to go to (after the scope and the floor).
pub trait SecretBindings: Send + Sync + fmt::Debug {
    /// The secrets bound to `scheme://host:port`, as they are now.
    fn injections(&self, scheme: &str, host: &str, port: u16) -> Vec<Injection>;
}

/// Sets the header `injections` on `headers`, each replacing any header of
/// its name.
pub fn inject(headers: &mut http::HeaderMap, injections: &[Injection]) {
    for i in injections {
        if let Carrier::Header(name, value) = &i.carrier {
            headers.remove(name);
            let mut value = value.clone();
            value.set_sensitive(true);
            headers.insert(name.clone(), value);
        }
    }
}

/// The name and value of each query parameter of `injections`.
fn query_pairs(injections: &[Injection]) -> Vec<(&str, &str)> {
    injections
        .iter()
        .filter_map(|i| match &i.carrier {
            Carrier::Query(name, value) => Some((name.as_str(), value.as_str())),
            Carrier::Header(..) => None,
        })
        .collect()
}

/// `url` with the query `injections` set, each replacing every parameter
/// of its name the guest wrote; `None` when there are none (send `url`).
pub fn with_query(url: &url::Url, injections: &[Injection]) -> Option<url::Url> {
    let params = query_pairs(injections);
    if params.is_empty() {
        return None;
    }
    // The guest's other parameters go on byte for byte (a signed URL, a
    // flag without `=`); only a segment whose decoded name is bound goes.
    let mut segments: Vec<String> = url
        .query()
        .unwrap_or_default()
        .split('&')
        .filter(|segment| !segment.is_empty())
        .filter(|segment| {
            let name = url::form_urlencoded::parse(segment.as_bytes())
                .next()
                .map(|(k, _)| k.into_owned())
                .unwrap_or_default();
            !params.iter().any(|(bound, _)| name == *bound)
        })
        .map(str::to_string)
        .collect();
    for (name, value) in params {
        let pair: String = url::form_urlencoded::Serializer::new(String::new())
            .append_pair(name, value)
            .finish();
        segments.push(pair);
    }
    let mut sent = url.clone();
    sent.set_query(Some(&segments.join("&")));
    Some(sent)
}

/// The forms a server may hand `token` back in besides its raw bytes: as
/// a form-encoded value (`+` for a space), percent-encoded with upper and
/// with lower case hex (every byte but RFC 3986's unreserved ones), and as
/// a JSON string's contents (with `/` escaped too, as some encoders do).
/// Each that differs from the raw bytes is one mask more.
pub fn token_forms(token: &[u8]) -> Vec<Vec<u8>> {
    const RESERVED: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
        .remove(b'-')
        .remove(b'.')
        .remove(b'_')
        .remove(b'~');
    let upper = percent_encoding::percent_encode(token, RESERVED).to_string();
    // The same with lower case hex: each `%` and the two digits after it.
    let mut lower = upper.clone().into_bytes();
    for at in (0..lower.len()).filter(|&i| upper.as_bytes()[i] == b'%') {
        lower[at + 1..at + 3].make_ascii_lowercase();
    }
    let mut forms = vec![
        token.to_vec(),
        url::form_urlencoded::byte_serialize(token)
            .collect::<String>()
            .into_bytes(),
        upper.into_bytes(),
        lower,
    ];
    if let Ok(text) = std::str::from_utf8(token)
        && let Ok(json) = serde_json::to_string(text)
    {
        let inner = json[1..json.len() - 1].to_string();
        forms.push(inner.replace('/', "\\/").into_bytes());
        forms.push(inner.into_bytes());
    }
    forms.sort();
    forms.dedup();
    forms
}

/// `next`, a redirect's target on the origin the request went to, without
/// the query parameters `injections` set on it (a server that sends the
/// guest on with the request's own query, the bound token in it): the
/// binding adds them again at the next hop, and the guest never reads
/// them in the URL it is told.
pub fn without_injected(next: &url::Url, injections: &[Injection]) -> url::Url {
    let bound = query_pairs(injections);
    let Some(query) = next.query().filter(|_| !bound.is_empty()) else {
        return next.clone();
    };
    let kept: Vec<&str> = query
        .split('&')
        .filter(|segment| {
            let pair = url::form_urlencoded::parse(segment.as_bytes()).next();
            !pair.is_some_and(|(k, v)| bound.iter().any(|(n, t)| k == *n && v == *t))
        })
        .collect();
    let mut stripped = next.clone();
    stripped.set_query((!kept.is_empty()).then(|| kept.join("&")).as_deref());
    stripped
}

/// The masks of `injections`, longest first (so a value inside another
/// form of it is masked whole).
pub fn masks_of(injections: &[Injection]) -> Vec<Vec<u8>> {
    let mut masks: Vec<Vec<u8>> = injections
        .iter()
        .flat_map(|i| i.masks.iter().cloned())
        .filter(|m| !m.is_empty())
        .collect();
    masks.sort_by_key(|m| std::cmp::Reverse(m.len()));
    masks.dedup();
    masks
}

/// Masks every occurrence of each of `masks` in `data` with `*`.
pub fn mask_in(data: &mut [u8], masks: &[Vec<u8>]) {
    for m in masks {
        let mut at = 0;
        while at + m.len() <= data.len() {
            if data[at..].starts_with(m) {
                data[at..at + m.len()].fill(b'*');
                at += m.len();
            } else {
                at += 1;
            }
        }
    }
}

/// Masks each header value of `headers` in place.
pub fn mask_headers(headers: &mut http::HeaderMap, masks: &[Vec<u8>]) {
    if masks.is_empty() {
        return;
    }
    for value in headers.values_mut() {
        let mut bytes = value.as_bytes().to_vec();
        mask_in(&mut bytes, masks);
        if bytes != value.as_bytes()
            && let Ok(masked) = http::HeaderValue::from_bytes(&bytes)
        {
            *value = masked;
        }
    }
}

/// Masks a body that arrives in chunks: an occurrence split across two
/// chunks is masked too, by holding back the last bytes of each chunk
/// that could start one (fewer than the longest mask).
#[derive(Debug)]
pub struct Masker {
    masks: Vec<Vec<u8>>,
    held: BytesMut,
    keep: usize,
}

impl Masker {
    /// A masker of `masks`; `None` when there is nothing to mask.
    pub fn new(masks: Vec<Vec<u8>>) -> Option<Self> {
        let longest = masks.iter().map(Vec::len).max()?;
        Some(Masker {
            masks,
            held: BytesMut::new(),
            keep: longest.saturating_sub(1),
        })
    }

    /// `chunk` added; returns the bytes that can go on, masked.
    pub fn feed(&mut self, chunk: &[u8]) -> Bytes {
        self.held.extend_from_slice(chunk);
        mask_in(&mut self.held, &self.masks);
        let ready = self.held.len().saturating_sub(self.keep);
        self.held.split_to(ready).freeze()
    }

    /// The bytes held back, at the end of the body.
    pub fn finish(&mut self) -> Bytes {
        mask_in(&mut self.held, &self.masks);
        self.held.split().freeze()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_split_across_chunks_is_masked_and_the_length_kept() {
        let mut m = Masker::new(vec![b"s3cr3t-token".to_vec()]).unwrap();
        let mut out = Vec::new();
        for chunk in [
            &b"{\"auth\": \"Bearer s3c"[..],
            b"r3t-to",
            b"ken\", \"n\": 1}",
        ] {
            out.extend_from_slice(&m.feed(chunk));
        }
        out.extend_from_slice(&m.finish());
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "{\"auth\": \"Bearer ************\", \"n\": 1}"
        );
    }

    #[test]
    fn every_form_of_the_value_is_masked_in_headers_longest_first() {
        let masks = vec![b"tok".to_vec(), b"Bearer tok".to_vec()];
        let i = Injection {
            secret: "api".into(),
            carrier: Carrier::Header(
                http::header::AUTHORIZATION,
                http::HeaderValue::from_static("Bearer tok"),
            ),
            masks,
        };
        assert!(!format!("{i:?}").contains("tok"));
        let masks = masks_of(std::slice::from_ref(&i));
        assert_eq!(masks[0], b"Bearer tok");
        let mut h = http::HeaderMap::new();
        h.insert(
            "x-echo",
            http::HeaderValue::from_static("got Bearer tok; tok"),
        );
        mask_headers(&mut h, &masks);
        assert_eq!(h["x-echo"], "got **********; ***");
        let mut sent = http::HeaderMap::new();
        sent.insert(http::header::AUTHORIZATION, "guest's own".parse().unwrap());
        inject(&mut sent, &[i]);
        assert_eq!(sent.get_all(http::header::AUTHORIZATION).iter().count(), 1);
        assert!(sent[http::header::AUTHORIZATION].is_sensitive());
    }

    #[test]
    fn a_query_parameter_replaces_the_guests_own_of_that_name_and_keeps_the_rest() {
        let i = Injection {
            secret: "api".into(),
            carrier: Carrier::Query("api_key".into(), "t k&n".into()),
            masks: Vec::new(),
        };
        assert!(format!("{i:?}").ends_with("query parameter api_key, <redacted>)"));
        let url = url::Url::parse(
            "https://a.example/p?q=1&api_key=guess&flag&api%5Fkey=again&sig=%FF%2F&z=%20",
        )
        .unwrap();
        let sent = with_query(&url, std::slice::from_ref(&i)).unwrap();
        assert_eq!(
            sent.query(),
            Some("q=1&flag&sig=%FF%2F&z=%20&api_key=t+k%26n")
        );
        assert_eq!(sent.path(), "/p");
        assert!(with_query(&url, &[]).is_none());
    }

    #[test]
    fn a_token_is_masked_in_every_form_a_server_may_re_encode_it_in() {
        let forms = token_forms(b"a/b+c d");
        for form in [
            "a/b+c d",
            "a%2Fb%2Bc+d",
            "a%2Fb%2Bc%20d",
            "a%2fb%2bc%20d",
            r"a\/b+c d",
        ] {
            assert!(
                forms.contains(&form.as_bytes().to_vec()),
                "{form}: {forms:?}"
            );
        }
        // A token a URL carries as it is has one form, and JSON's own.
        assert_eq!(token_forms(b"tok-1"), vec![b"tok-1".to_vec()]);
    }

    #[test]
    fn a_same_origin_target_loses_only_the_injected_pair() {
        let i = Injection {
            secret: "api".into(),
            carrier: Carrier::Query("key".into(), "t k".into()),
            masks: Vec::new(),
        };
        let next = url::Url::parse("https://api.example/p?a=1&key=t+k&key=other&b").unwrap();
        let kept = without_injected(&next, std::slice::from_ref(&i));
        assert_eq!(kept.as_str(), "https://api.example/p?a=1&key=other&b");
        let only = url::Url::parse("https://api.example/p?key=t%20k").unwrap();
        assert_eq!(
            without_injected(&only, &[i]).as_str(),
            "https://api.example/p"
        );
    }
}
