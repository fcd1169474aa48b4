// Migrations, templates, static files and the Fluent messages (locales/) are built into the binary: rebuild when they change.
fn main() {
    println!("cargo:rerun-if-changed=migrations");
    println!("cargo:rerun-if-changed=templates");
    println!("cargo:rerun-if-changed=static");
    println!("cargo:rerun-if-changed=locales");
}
