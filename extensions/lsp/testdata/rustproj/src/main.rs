mod greet;

fn main() {
    println!("{}", greet::hello("world"));
}
