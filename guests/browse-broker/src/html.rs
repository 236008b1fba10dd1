//! HTML to readable text: tags dropped, `script`/`style`/`noscript`/
//! `template`/`svg` dropped with their contents, block elements on their own
//! lines, list items marked, entities decoded, whitespace collapsed. A
//! single pass over the input; malformed markup degrades to text, never to
//! an error.

/// Elements whose content is not text.
const SKIP: [&str; 5] = ["script", "style", "noscript", "template", "svg"];

/// Elements that start and end a line.
const BLOCK: [&str; 30] = [
    "p",
    "div",
    "br",
    "li",
    "ul",
    "ol",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "tr",
    "table",
    "section",
    "article",
    "header",
    "footer",
    "nav",
    "main",
    "aside",
    "pre",
    "blockquote",
    "hr",
    "dt",
    "dd",
    "figure",
    "figcaption",
    "form",
    "title",
];

fn entity(name: &str) -> Option<char> {
    if let Some(num) = name.strip_prefix('#') {
        let code = match num.strip_prefix(['x', 'X']) {
            Some(hex) => u32::from_str_radix(hex, 16).ok()?,
            None => num.parse().ok()?,
        };
        return char::from_u32(code).filter(|c| *c != '\0');
    }
    Some(match name {
        "amp" => '&',
        "lt" => '<',
        "gt" => '>',
        "quot" => '"',
        "apos" => '\'',
        "nbsp" => ' ',
        "mdash" => '—',
        "ndash" => '–',
        "hellip" => '…',
        "copy" => '©',
        "reg" => '®',
        "trade" => '™',
        "lsquo" => '‘',
        "rsquo" => '’',
        "ldquo" => '“',
        "rdquo" => '”',
        "middot" => '·',
        "bull" => '•',
        _ => return None,
    })
}

/// Decodes the entities of `text`.
fn decode(text: &str, out: &mut String) {
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let end = rest[1..].find(';').map(|i| i + 1).filter(|i| *i <= 10);
        match end.and_then(|e| entity(&rest[1..e]).map(|c| (c, e))) {
            Some((c, e)) => {
                out.push(c);
                rest = &rest[e + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
}

/// The tag name of `<...>` contents (`/p` → (`p`, closing)).
fn tag_name(inner: &str) -> (String, bool) {
    let closing = inner.starts_with('/');
    let name: String = inner
        .trim_start_matches('/')
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric())
        .collect::<String>()
        .to_ascii_lowercase();
    (name, closing)
}

/// Returns (title, text) of an HTML document.
pub fn to_text(html: &str) -> (String, String) {
    let mut raw = String::new();
    let mut title = String::new();
    let mut skipping: Option<String> = None;
    let mut in_title = false;
    let mut in_pre = false;
    let mut rest = html;
    while !rest.is_empty() {
        let Some(lt) = rest.find('<') else {
            if skipping.is_none() {
                raw.push_str(rest);
            }
            break;
        };
        let (text, tail) = rest.split_at(lt);
        if in_title {
            decode(text, &mut title);
        } else if skipping.is_none() {
            if in_pre {
                raw.push_str(&text.replace('\n', "\u{1}"));
            } else {
                raw.push_str(&text.replace('\n', " "));
            }
        }
        if let Some(comment) = tail.strip_prefix("<!--") {
            rest = comment.find("-->").map_or("", |e| &comment[e + 3..]);
            continue;
        }
        let Some(gt) = tail.find('>') else {
            break;
        };
        let inner = &tail[1..gt];
        rest = &tail[gt + 1..];
        let (name, closing) = tag_name(inner);
        if let Some(skipped) = &skipping {
            if closing && *skipped == name {
                skipping = None;
            }
            continue;
        }
        if name == "title" {
            in_title = !closing;
            continue;
        }
        if SKIP.contains(&name.as_str()) && !closing && !inner.ends_with('/') {
            skipping = Some(name);
            continue;
        }
        if name == "pre" {
            in_pre = !closing;
        }
        if BLOCK.contains(&name.as_str()) {
            raw.push('\n');
            if name == "li" && !closing {
                raw.push_str("- ");
            }
        } else if matches!(name.as_str(), "td" | "th") && !closing {
            raw.push(' ');
        }
    }
    let mut decoded = String::with_capacity(raw.len());
    decode(&raw, &mut decoded);
    // `\n` now only marks block boundaries (source newlines became spaces,
    // `pre` newlines `\u{1}`); empty lines between blocks are dropped.
    let lines: Vec<String> = decoded
        .split('\n')
        .map(|line| {
            if line.contains('\u{1}') {
                line.replace('\u{1}', "\n")
            } else {
                line.split_whitespace().collect::<Vec<_>>().join(" ")
            }
        })
        .filter(|line| !line.trim().is_empty())
        .collect();
    let text = lines.join("\n");
    (title.split_whitespace().collect::<Vec<_>>().join(" "), text)
}

#[cfg(test)]
mod tests {
    use super::to_text;

    #[test]
    fn markup_becomes_readable_lines() {
        let html = "<html><head><title> The  Page </title><style>p{}</style></head>\
            <body><h1>Hello&nbsp;&amp; welcome</h1><p>First <b>bold</b>\n para.</p>\
            <script>alert('x <p>')</script><ul><li>one</li><li>two &#x2014; &#8212;</li></ul>\
            <!-- hidden <p> --><p>Last &lt;tag&gt; &bogus;</p></body></html>";
        let (title, text) = to_text(html);
        assert_eq!(title, "The Page");
        assert_eq!(
            text,
            "Hello & welcome\nFirst bold para.\n- one\n- two — —\nLast <tag> &bogus;"
        );
    }

    #[test]
    fn malformed_markup_degrades_to_text() {
        assert_eq!(to_text("a < b and c").1, "a");
        assert_eq!(to_text("<p>unclosed <b>bold").1, "unclosed bold");
        assert_eq!(to_text("<pre>  keep\n  lines</pre>").1, "  keep\n  lines");
    }
}
