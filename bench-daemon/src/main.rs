//! `bench`: the frictionbench command line.

fn main() {
    println!("bench: work in progress");
}
