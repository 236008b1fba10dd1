//! Imports a host primitive directly, which only first-party brokers may do.
wit_bindgen::generate!({
    path: ["../../wit", "../../wit/host"],
    world: "workbooks:host/primitives",
    generate_all,
});

fn main() {
    let stolen = workbooks::host::kv::get(b"any-tenant-key");
    println!("{:?}", stolen.is_ok());
}
