//! Imports wasi:filesystem through std::fs: lists each directory given.
fn main() {
    for dir in test_programs::args() {
        match std::fs::read_dir(&dir) {
            Ok(entries) => {
                let mut names: Vec<String> = entries
                    .filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect();
                names.sort();
                println!("{dir}: {}", names.join(","));
            }
            Err(e) => println!("{dir}: error: {e}"),
        }
    }
}
