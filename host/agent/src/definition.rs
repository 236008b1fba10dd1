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

/// Reads the first `:agent:` node of `org`, with the org parser the
/// toolkits' manifests are read with (orgize).
pub fn parse_org(org: &str) -> Result<AgentDef, DefError> {
    let org = orgize::Org::parse(org);
    let node = org
        .headlines()
        .find(|h| h.title(&org).tags.iter().any(|t| t == "agent"))
        .ok_or(DefError::NoAgentNode)?;
    let title = node.title(&org);
    let mut def = AgentDef {
        title: title.raw.trim().to_string(),
        ..AgentDef::default()
    };
    for (key, value) in title.properties.iter() {
        let value = Some(value.trim().to_string()).filter(|v| !v.is_empty());
        match key.to_ascii_uppercase().as_str() {
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
    let prompt = node
        .children(&org)
        .find(|c| {
            c.title(&org)
                .raw
                .trim()
                .eq_ignore_ascii_case("system prompt")
        })
        .unwrap_or(node);
    def.system = prompt
        .section_node()
        .map(|section| section_text(&org, section))
        .unwrap_or_default();
    if def.system.is_empty() {
        return Err(DefError::NoPrompt(def.title));
    }
    Ok(def)
}

/// The text of one section, written back as org.
fn section_text(org: &orgize::Org<'_>, section: orgize::indextree::NodeId) -> String {
    use orgize::export::{DefaultOrgHandler, OrgHandler};
    use orgize::indextree::NodeEdge;
    let mut out = Vec::new();
    let mut handler = DefaultOrgHandler;
    for edge in section.traverse(org.arena()) {
        // Writing into a Vec cannot fail.
        let _ = match edge {
            NodeEdge::Start(id) => handler.start(&mut out, &org[id]),
            NodeEdge::End(id) => handler.end(&mut out, &org[id]),
        };
    }
    String::from_utf8_lossy(&out).trim().to_string()
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
