//! `math-cli A B...`: prints the sum of its integer arguments, computed by
//! whatever component serves its `example:math/ops@0.1.0` import. Alone it
//! does not dock (nothing in the engine serves that interface); composed
//! with the `math-ops` toolkit by the `math` toolkit's `.wac` file, it runs.

wit_bindgen::generate!({ path: "wit", world: "example:math/cli@0.1.0" });

use example::math::ops;

fn main() {
    let mut sum: i64 = 0;
    for arg in std::env::args().skip(1) {
        match arg.parse::<i64>() {
            Ok(n) => sum = ops::add(sum, n),
            Err(_) => {
                eprintln!("math-cli: `{arg}` is not an integer");
                std::process::exit(2);
            }
        }
    }
    println!("{sum}");
}
