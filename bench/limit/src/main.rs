//! `limit inflate REPO LIST` inflates every blob of LIST (lines `<id> <path>`)
//! with gix and prints the bytes; `limit hash REPO LIST RUNS` loads the
//! fingerprint's byte stream (`path NUL bytes LF` per line of LIST) into
//! memory, then times SHA-256 over it RUNS times and prints the median in
//! seconds. Both are what fpcheck cannot avoid doing for a fingerprint.

use std::io::Write;
use std::time::Instant;

use gix::prelude::FindExt;
use sha2::{Digest, Sha256};

fn list(path: &str) -> Vec<(gix::ObjectId, String)> {
    std::fs::read_to_string(path)
        .expect("readable list")
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| {
            let (id, path) = l.split_once(' ').expect("`<id> <path>` lines");
            (gix::ObjectId::from_hex(id.as_bytes()).expect("hex id"), path.to_string())
        })
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 4 {
        eprintln!("usage: limit inflate|hash REPO LIST [RUNS]");
        std::process::exit(2);
    }
    let repo = gix::open_opts(&args[2], gix::open::Options::isolated()).expect("a repository");
    let files = list(&args[3]);
    let mut buf = Vec::new();
    match args[1].as_str() {
        "inflate" => {
            let mut total = 0usize;
            for (id, _) in &files {
                total += repo.objects.find_blob(id, &mut buf).expect("blob").data.len();
            }
            println!("{total}");
        }
        "hash" => {
            let runs: usize = args.get(4).map_or(5, |n| n.parse().expect("a number"));
            let mut stream = Vec::new();
            for (id, path) in &files {
                stream.extend_from_slice(path.as_bytes());
                stream.push(0);
                stream.extend_from_slice(repo.objects.find_blob(id, &mut buf).expect("blob").data);
                stream.push(b'\n');
            }
            let mut times = Vec::new();
            let mut digest = String::new();
            for _ in 0..runs {
                let t = Instant::now();
                let d = Sha256::digest(&stream);
                times.push(t.elapsed().as_secs_f64());
                digest = d.iter().map(|b| format!("{b:02x}")).collect();
            }
            times.sort_by(f64::total_cmp);
            let mut out = std::io::stdout();
            writeln!(out, "{} {digest} {}", times[times.len() / 2], stream.len()).unwrap();
        }
        other => {
            eprintln!("unknown mode {other}");
            std::process::exit(2);
        }
    }
}
