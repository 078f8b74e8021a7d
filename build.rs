//! Link settings for the `fpcheck` executable alone (not the library, the
//! tests or the Python extension, which must stay position-independent).
//!
//! On Linux with glibc the executable is linked without PIE: its 25,000
//! relative relocations (vtables, string tables, clap's and gix's static
//! data) otherwise cost every start about 0.33 M instructions in the
//! dynamic loader and ~115 copy-on-write page faults (259 faults for
//! `fpcheck --version`, 143 without PIE, as many as `git rev-parse`):
//! a third of an everyday `fpcheck A..B` answered from the cache
//! (docs/performance.md). What is given up is the random load address of
//! the executable's own code; the libraries, stack and heap stay
//! randomised. Set `FPCHECK_PIE=1` when building to keep a PIE.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=FPCHECK_PIE");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let linux_gnu = var("CARGO_CFG_TARGET_OS") == "linux" && var("CARGO_CFG_TARGET_ENV") == "gnu";
    if linux_gnu && var("FPCHECK_PIE").is_empty() {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
