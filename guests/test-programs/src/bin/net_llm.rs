//! Asks the model one question through the llm interface (the first
//! argument, under the model named by the second if any) and prints the
//! answer's text, or the error.
use test_programs::workbooks::engine::llm;
use test_programs::workbooks::engine::llm_types::{ChatRequest, Message, Role};

fn main() {
    let args = test_programs::args();
    let request = ChatRequest {
        model: args.get(1).cloned(),
        messages: vec![Message {
            role: Role::User,
            content: args.first().cloned().unwrap_or_default(),
            tool_calls: Vec::new(),
            tool_call_id: None,
        }],
        tools: Vec::new(),
        temperature: None,
    };
    match llm::chat(&request) {
        Ok(reply) => println!("answer: {}", reply.message.content),
        Err(e) => println!("error {e:?}"),
    }
}
