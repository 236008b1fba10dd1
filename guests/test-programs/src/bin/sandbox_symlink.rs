//! In the first preopened directory, tries to make a symlink for each
//! argument pair `LINK TARGET`, printing `LINK: ok` or `LINK: error CODE`.
use test_programs::wasi::filesystem::preopens;

fn main() {
    let dirs = preopens::get_directories();
    let Some((dir, _)) = dirs.first() else {
        println!("no preopen");
        return;
    };
    let args = test_programs::args();
    for pair in args.chunks(2) {
        let [link, target] = pair else { break };
        match dir.symlink_at(target, link) {
            Ok(()) => println!("{link}: ok"),
            Err(e) => println!("{link}: error {e:?}"),
        }
    }
}
