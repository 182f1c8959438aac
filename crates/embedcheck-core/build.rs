//! The catalogues this build ships: every `specs/<contract>/clauses.json`, by the
//! contract's folder name, so that adding a contract's catalogue is adding its file
//! and no list in the code names it.

use std::path::Path;
use std::{env, fs};

fn main() {
    let specs = Path::new(&env::var("CARGO_MANIFEST_DIR").expect("cargo sets it")).join("specs");
    println!("cargo:rerun-if-changed={}", specs.display());
    let mut files: Vec<String> = fs::read_dir(&specs)
        .expect("the specs folder is read")
        .filter_map(Result::ok)
        .map(|entry| entry.path().join("clauses.json"))
        .filter(|file| file.is_file())
        .map(|file| file.display().to_string())
        .collect();
    files.sort();
    let entries: String = files
        .iter()
        .map(|file| format!("    include_str!({file:?}),\n"))
        .collect();
    let code = format!(
        "/// Every shipped catalogue's text, by the contract's folder name.\nconst SHIPPED: [&str; {}] = [\n{entries}];\n",
        files.len()
    );
    let out = Path::new(&env::var("OUT_DIR").expect("cargo sets it")).join("shipped.rs");
    fs::write(out, code).expect("the list of catalogues is written");
}
