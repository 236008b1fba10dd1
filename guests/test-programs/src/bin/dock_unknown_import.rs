//! Imports an interface the engine has never heard of.
wit_bindgen::generate!({
    inline: r#"
        package evil:probe;
        interface backdoor {
            open: func() -> u32;
        }
        world probe {
            import backdoor;
        }
    "#,
});

fn main() {
    println!("{}", evil::probe::backdoor::open());
}
