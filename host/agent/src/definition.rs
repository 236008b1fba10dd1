//! Agent definitions written in org: the first node tagged `:agent:`, its
//! `:ID:`, `:MODEL:`, `:TOOLKITS:` and `:TAGLINE:` properties, and its
//! system prompt: the body of its `** System prompt` child if it has one,
//! else its own body.

/// An agent as its org file defines it.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct AgentDef {
    /// The node's headline, without stars or tags.
    pub title: String,
    /// `:ID:`.
    pub id: Option<String>,
    /// `:MODEL:`.
    pub model: Option<String>,
    /// `:TOOLKITS:`, split on spaces and commas.
    pub toolkits: Vec<String>,
    /// `:TAGLINE:`.
    pub tagline: Option<String>,
    /// The system prompt.
    pub system: String,
}

/// Why a definition could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DefError {
    /// No headline carries the `:agent:` tag.
    #[error("no :agent: node (a headline tagged :agent:)")]
    NoAgentNode,
    /// The node has neither a `System prompt` child nor a body.
    #[error("the :agent: node `{0}` has no system prompt")]
    NoPrompt(String),
}

/// A headline: its level, title and tags.
fn headline(line: &str) -> Option<(usize, &str, Vec<&str>)> {
    let level = line.bytes().take_while(|b| *b == b'*').count();
    let rest = line.get(level..)?;
    if level == 0 || !(rest.is_empty() || rest.starts_with(' ')) {
        return None;
    }
    let rest = rest.trim();
    // Tags close the headline: `:a:b:` after whitespace.
    if let Some(at) = rest.rfind(char::is_whitespace) {
        let last = &rest[at + 1..];
        if last.len() > 2 && last.starts_with(':') && last.ends_with(':') && !last.contains(' ') {
            let tags = last.trim_matches(':').split(':').collect();
            return Some((level, rest[..at].trim_end(), tags));
        }
    }
    if rest.len() > 2 && rest.starts_with(':') && rest.ends_with(':') && !rest.contains(' ') {
        return Some((level, "", rest.trim_matches(':').split(':').collect()));
    }
    Some((level, rest, Vec::new()))
}

fn text_of(lines: &[&str]) -> String {
    lines.join("\n").trim().to_string()
}

/// Reads the first `:agent:` node of `org`.
pub fn parse_org(org: &str) -> Result<AgentDef, DefError> {
    let lines: Vec<&str> = org.lines().collect();
    let (start, level, title) = lines
        .iter()
        .enumerate()
        .find_map(|(i, l)| {
            let (level, title, tags) = headline(l)?;
            tags.contains(&"agent").then_some((i, level, title))
        })
        .ok_or(DefError::NoAgentNode)?;
    let end = lines[start + 1..]
        .iter()
        .position(|l| headline(l).is_some_and(|(lv, _, _)| lv <= level))
        .map_or(lines.len(), |p| start + 1 + p);
    let mut def = AgentDef {
        title: title.to_string(),
        ..AgentDef::default()
    };
    let mut at = start + 1;
    if lines
        .get(at)
        .is_some_and(|l| l.trim().eq_ignore_ascii_case(":PROPERTIES:"))
    {
        at += 1;
        while at < end && !lines[at].trim().eq_ignore_ascii_case(":END:") {
            let line = lines[at].trim();
            if let Some((key, value)) = line
                .strip_prefix(':')
                .and_then(|l| l.split_once(':'))
                .map(|(k, v)| (k.to_ascii_uppercase(), v.trim().to_string()))
            {
                let value = Some(value).filter(|v| !v.is_empty());
                match key.as_str() {
                    "ID" => def.id = value,
                    "MODEL" => def.model = value,
                    "TAGLINE" => def.tagline = value,
                    "TOOLKITS" => {
                        def.toolkits = value
                            .unwrap_or_default()
                            .split([' ', ','])
                            .filter(|t| !t.is_empty())
                            .map(str::to_string)
                            .collect()
                    }
                    _ => {}
                }
            }
            at += 1;
        }
        at += 1;
    }
    let body = &lines[at.min(end)..end];
    let child = body.iter().position(|l| {
        headline(l)
            .is_some_and(|(lv, t, _)| lv == level + 1 && t.eq_ignore_ascii_case("system prompt"))
    });
    def.system = match child {
        Some(c) => {
            let rest = &body[c + 1..];
            let stop = rest
                .iter()
                .position(|l| headline(l).is_some_and(|(lv, _, _)| lv <= level + 1))
                .unwrap_or(rest.len());
            text_of(&rest[..stop])
        }
        None => {
            let stop = body
                .iter()
                .position(|l| headline(l).is_some())
                .unwrap_or(body.len());
            text_of(&body[..stop])
        }
    };
    if def.system.is_empty() {
        return Err(DefError::NoPrompt(def.title));
    }
    Ok(def)
}

#[cfg(test)]
mod tests {
    use super::*;

    const WALDO: &str = "#+TITLE: crew\n\
* Notes\n\
Not an agent.\n\
* Waldo                                                    :crew:agent:\n\
:PROPERTIES:\n\
:ID:       waldo\n\
:MODEL:    xiaomi/mimo-v2.5\n\
:TOOLKITS: roster, pages wiki\n\
:TAGLINE:  keeps the roster\n\
:END:\n\
Body text that is not the prompt.\n\
** System prompt\n\
You keep the roster.\n\
\n\
Publish it when done.\n\
** Later\n\
ignored\n\
* Second :agent:\n\
:PROPERTIES:\n\
:ID: second\n\
:END:\n";

    #[test]
    fn the_first_agent_node_gives_its_properties_and_its_system_prompt_child() {
        let def = parse_org(WALDO).unwrap();
        assert_eq!(def.title, "Waldo");
        assert_eq!(def.id.as_deref(), Some("waldo"));
        assert_eq!(def.model.as_deref(), Some("xiaomi/mimo-v2.5"));
        assert_eq!(def.toolkits, ["roster", "pages", "wiki"]);
        assert_eq!(def.tagline.as_deref(), Some("keeps the roster"));
        assert_eq!(def.system, "You keep the roster.\n\nPublish it when done.");
    }

    #[test]
    fn without_a_system_prompt_child_the_body_is_the_prompt() {
        let org = "* Helper :agent:\n:PROPERTIES:\n:ID: h\n:END:\nHelp with files.\n** Notes\nnot prompt\n* Other\n";
        let def = parse_org(org).unwrap();
        assert_eq!(def.system, "Help with files.");
        assert_eq!(def.model, None);
        let bare = "* Bare :agent:\nJust do it.\n";
        assert_eq!(parse_org(bare).unwrap().system, "Just do it.");
    }

    #[test]
    fn a_file_without_an_agent_node_or_prompt_is_refused_by_name() {
        assert_eq!(
            parse_org("* Notes :crew:\ntext\n"),
            Err(DefError::NoAgentNode)
        );
        assert_eq!(parse_org("*bold* :agent:\n"), Err(DefError::NoAgentNode));
        assert_eq!(
            parse_org("* Empty :agent:\n:PROPERTIES:\n:ID: e\n:END:\n** Other\nx\n"),
            Err(DefError::NoPrompt("Empty".into()))
        );
    }
}
