//! Link settings for the `fpcheck` executable alone (not the library, the
//! tests or the Python extension, which must stay position-independent).
//!
//! The executable is a PIE by default, as Rust builds it. Setting
//! `FPCHECK_NO_PIE=1` when building links it without PIE on Linux with
//! glibc: its 25,000 relative relocations (vtables, string tables, clap's
//! and gix's static data) otherwise cost every start about 0.33 M
//! instructions in the dynamic loader and ~115 copy-on-write page faults
//! (259 faults for `fpcheck --version`, 143 without PIE, as many as `git
//! rev-parse`): about 0.3 ms of an everyday `fpcheck A..B` answered from
//! the cache (docs/performance.md). It is not the default because it gives
//! up the random load address of the executable's own code, and fpcheck
//! parses hostile input and links C code (zlib): exploit hardening is
//! worth more than 0.3 ms.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=FPCHECK_NO_PIE");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let linux_gnu = var("CARGO_CFG_TARGET_OS") == "linux" && var("CARGO_CFG_TARGET_ENV") == "gnu";
    if linux_gnu && !var("FPCHECK_NO_PIE").is_empty() {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
