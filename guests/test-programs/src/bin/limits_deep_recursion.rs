//! Recurses without bound.
#[expect(unconditional_recursion, reason = "the probe exists to overflow the stack")]
fn dive(depth: u64, pad: [u64; 8]) -> u64 {
    let next = std::hint::black_box(pad);
    std::hint::black_box(dive(depth + 1, next)) + next[0]
}

fn main() {
    println!("{}", dive(0, [1; 8]));
}
