/// Returns a greeting for name.
pub fn hello(name: &str) -> String {
    format!("Hello, {name}!")
}
