//! Recurses without bound.
#[expect(
    unconditional_recursion,
    reason = "the probe exists to overflow the stack"
)]
fn dive(pad: [u64; 8]) -> u64 {
    let next = std::hint::black_box(pad);
    std::hint::black_box(dive(next)) + next[0]
}

fn main() {
    println!("{}", dive([1; 8]));
}
