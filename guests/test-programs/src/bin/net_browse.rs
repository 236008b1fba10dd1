//! Fetches a page as text through the browse interface and prints title
//! and text, or the error.
use test_programs::workbooks::engine::browse;

fn main() {
    for url in test_programs::args() {
        match browse::fetch_text(&url) {
            Ok(page) => println!("title: {}\n{}", page.title, page.text),
            Err(e) => println!("error {e:?}"),
        }
    }
}
