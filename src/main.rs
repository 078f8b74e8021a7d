//! The `fpcheck` executable: [`fpcheck::cli::run`] on the process's
//! arguments.
//!
//! Started as a C `main`, without Rust's runtime start-up: that start-up
//! finds the main thread's stack guard by reading and parsing
//! `/proc/self/maps` (about 0.2 M instructions and four system calls, a
//! tenth of an everyday `fpcheck A..B` answered from the cache), only to
//! name a stack overflow in its crash message. What it does that fpcheck
//! needs is done here: SIGPIPE ignored (a closed pipe is a write error,
//! reported, not a silent kill), and stdout flushed before exit. The
//! arguments are std's as ever (glibc hands them to std at load time), and
//! panics are caught by `cli::run` (exit 6).
// (Under `cargo test` the harness brings its own `main`.) Only with glibc,
// where this was measured and which hands the arguments to std at
// load time (musl does not: the release binaries are musl); elsewhere the
// ordinary Rust `main` below.
#![cfg_attr(all(target_os = "linux", target_env = "gnu", not(test)), no_main)]

#[cfg(all(target_os = "linux", target_env = "gnu", not(test)))]
use std::io::Write as _;

#[cfg(all(target_os = "linux", target_env = "gnu", not(test)))]
#[unsafe(no_mangle)]
extern "C" fn main(_argc: libc::c_int, _argv: *const *const libc::c_char) -> libc::c_int {
    // SAFETY: setting a signal's disposition to "ignore" before any other
    // thread exists, as Rust's own start-up does.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
    let code = fpcheck::cli::run(std::env::args_os());
    let _ = std::io::stdout().flush();
    libc::c_int::from(code)
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(fpcheck::cli::run(std::env::args_os()))
}
