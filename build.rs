//! Embeds `catalog/` (the packed recipes of this repo) into the binary, so that a fresh
//! machine with no network can `hookpack install tool-gate`.

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("catalog");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    let mut out = String::from("/// Files of the built-in catalog: (name, bytes).\npub static FILES: &[(&str, &[u8])] = &[\n");
    for n in &names {
        println!("cargo:rerun-if-changed={}", dir.join(n).display());
        let _ = writeln!(
            out,
            "    ({n:?}, include_bytes!({:?})),",
            dir.join(n).display().to_string()
        );
    }
    out.push_str("];\n");
    let dest = Path::new(&std::env::var("OUT_DIR").expect("OUT_DIR")).join("builtin_catalog.rs");
    std::fs::write(dest, out).expect("write builtin_catalog.rs");
}
