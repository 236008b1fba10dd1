//! `fetch URL`: the page at URL as readable text (its title, a blank line,
//! the text), through `workbooks:engine/browse`. It needs the `browse`
//! cap, so it docks only under a grant that holds it; the host fetches
//! behind the SSRF floor and the browse broker turns the HTML into text,
//! both outside this command. Exit 1 with the error on stderr when the
//! page cannot be had.

wit_bindgen::generate!({
    inline: r#"
        package wb:fetch;
        world fetch {
            import workbooks:engine/browse@0.1.0;
        }
    "#,
    path: ["../../wit"],
    world: "wb:fetch/fetch",
    generate_all,
});

use std::io::Write;

fn run(args: &[String], _: &mut dyn std::io::Read, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let [url] = args else {
        let _ = err.write_all(b"usage: fetch URL\n");
        return 2;
    };
    match workbooks::engine::browse::fetch_text(url) {
        Ok(page) if page.status >= 400 => {
            let _ = writeln!(err, "fetch: {url}: status {}", page.status);
            1
        }
        Ok(page) => {
            if !page.title.is_empty() {
                let _ = writeln!(out, "{}\n", page.title);
            }
            let _ = writeln!(out, "{}", page.text.trim_end());
            0
        }
        Err(e) => {
            let _ = writeln!(err, "fetch: {url}: {e:?}");
            1
        }
    }
}

fn main() {
    wb_cmd::main(run);
}
