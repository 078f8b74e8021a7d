//! The `fpcheck` executable: [`fpcheck::cli::run`] on the process's
//! arguments.
//!
//! Started as a C `main`, without Rust's runtime start-up: that start-up
//! finds the main thread's stack guard by reading and parsing
//! `/proc/self/maps` (about 0.2 M instructions and four system calls, a
//! tenth of an everyday `fpcheck A..B` answered from the cache), only to
//! name a stack overflow in its crash message. What it does that fpcheck
//! needs is done here: a closed standard descriptor reopened on
//! `/dev/null` (else the first file fpcheck opens would become its stdout
//! or stderr, and a report, a message or `-o /dev/stdout` would go into
//! it), SIGPIPE ignored (a closed pipe is a write error, reported, not a
//! silent kill), and stdout flushed before exit. The
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
    if !standard_descriptors_open() {
        return 6;
    }
    // SAFETY: setting a signal's disposition to "ignore" before any other
    // thread exists, as Rust's own start-up does.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
    let code = fpcheck::cli::run(std::env::args_os());
    let _ = std::io::stdout().flush();
    libc::c_int::from(code)
}

/// Reopens each of descriptors 0, 1 and 2 that is closed on `/dev/null`,
/// as Rust's start-up does (`open` takes the lowest free descriptor, and
/// the ones below are open by then); `false` when that fails.
#[cfg(all(target_os = "linux", target_env = "gnu", not(test)))]
fn standard_descriptors_open() -> bool {
    (0..=2).all(|fd| {
        // SAFETY: F_GETFD only asks whether the descriptor is open.
        if unsafe { libc::fcntl(fd, libc::F_GETFD) } != -1 {
            return true;
        }
        // SAFETY: open(2) on a NUL-terminated path; the descriptor is kept
        // for the life of the process, as the standard one it stands for.
        unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDWR) == fd }
    })
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(fpcheck::cli::run(std::env::args_os()))
}
