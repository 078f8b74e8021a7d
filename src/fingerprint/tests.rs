use super::*;

#[test]
fn short_fingerprints() {
    let fp = "3c43745c84d45b3a91549d9f364119f930f26b9b87ab5772fd95040bd8d043d6";
    assert_eq!(short(fp), Some("3c43745c84d4"));
    assert_eq!(short(""), None);
    assert_eq!(short("abc"), Some("abc"));
    // Byte 12 inside a character: the whole text, never a panic.
    assert_eq!(short("aééééééé"), Some("aééééééé"));
}
use crate::source::DirSource;

#[test]
fn detailed_matches_compute() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir(root.join("pkg")).unwrap();
    std::fs::write(root.join("a.py"), b"alpha\n").unwrap();
    std::fs::write(root.join("pkg/__init__.py"), b"").unwrap();
    std::fs::write(root.join("pkg/b.py"), b"beta").unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink("a.py", root.join("z.py")).unwrap();
    let source = DirSource::new(root);
    let rules = Rules::default();
    let plain = compute(&source, &rules).unwrap();
    let detailed = compute_detailed(&source, &rules).unwrap();
    assert_eq!(detailed.fingerprint, plain);
    let sha = |b: &[u8]| hex::encode(Sha256::digest(b));
    let mut want = vec![sha(b"alpha\n"), sha(b""), sha(b"beta")];
    if cfg!(unix) {
        want.push(sha(b"alpha\n"));
    }
    assert_eq!(detailed.file_digests, want);
}

/// Counts reads, to show each file is read once for both digests.
struct Counting<S>(S, std::cell::Cell<usize>);

impl<S: Source> Source for Counting<S> {
    fn root_display(&self) -> String {
        self.0.root_display()
    }
    fn root(&self) -> Result<crate::source::RootState, SourceError> {
        self.0.root()
    }
    fn read_dir(&self, dir: &Node, rel: &[u8]) -> Result<Vec<crate::source::Entry>, SourceError> {
        self.0.read_dir(dir, rel)
    }
    fn resolve(
        &self,
        rel: &[u8],
        entry: &crate::source::Entry,
    ) -> Result<crate::source::Target, SourceError> {
        self.0.resolve(rel, entry)
    }
    fn read(
        &self,
        rel: &str,
        content: &Node,
        sink: &mut dyn FnMut(&[u8]),
    ) -> Result<(), SourceError> {
        self.1.set(self.1.get() + 1);
        self.0.read(rel, content, sink)
    }
    fn read_meta(
        &self,
        name: &str,
        in_parent: bool,
    ) -> Result<Option<crate::source::MetaFile>, SourceError> {
        self.0.read_meta(name, in_parent)
    }
    fn origin(&self) -> crate::source::Origin {
        self.0.origin()
    }
    fn root_depth(&self) -> usize {
        self.0.root_depth()
    }
}

#[test]
fn detailed_reads_each_file_once() {
    let dir = tempfile::tempdir().unwrap();
    for (name, body) in [("a.py", "a"), ("b.py", "b"), ("c.py", "")] {
        std::fs::write(dir.path().join(name), body).unwrap();
    }
    let source = Counting(DirSource::new(dir.path()), Default::default());
    let d = compute_detailed(&source, &Rules::default()).unwrap();
    assert_eq!(d.file_digests.len(), 3);
    assert_eq!(source.1.get(), 3);
}

/// Streams longer than a chunk go through the hashing thread: pieces
/// that straddle chunks, a file larger than several chunks, and bytes
/// kept for a second path all land in order.
#[test]
fn long_streams_hash_as_one() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let sizes = [CHUNK - 3, 1, 0, 5 * CHUNK + 7, CHUNK, 2 * CHUNK + 1];
    let mut want = Sha256::new();
    for (i, size) in sizes.iter().enumerate() {
        let body: Vec<u8> = (0..*size).map(|j| (j * 31 + i) as u8).collect();
        let name = format!("f{i}.py");
        std::fs::write(root.join(&name), &body).unwrap();
        want.update(name.as_bytes());
        want.update([0]);
        want.update(&body);
        want.update([b'\n']);
    }
    #[cfg(unix)]
    {
        // A link to the big file: its bytes are kept for the second use.
        std::os::unix::fs::symlink("f3.py", root.join("g.py")).unwrap();
        let body = std::fs::read(root.join("f3.py")).unwrap();
        want.update(b"g.py\0");
        want.update(&body);
        want.update([b'\n']);
    }
    let fp = compute(&DirSource::new(root), &Rules::default()).unwrap();
    assert_eq!(fp.digest, Some(hex::encode(want.finalize())));
    let detailed = compute_detailed(&DirSource::new(root), &Rules::default()).unwrap();
    assert_eq!(detailed.fingerprint, fp);
}

/// Two threads reading a directory hash the stream one thread does:
/// many files (so the split is used), sizes around the chunk and over
/// the whole-file cap, and the first unreadable file in hash order
/// (read by either thread) makes the same unavailable answer.
#[test]
fn split_reading_hashes_as_one_thread() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let big = SPLIT_CAP + 17;
    for i in 0..41usize {
        let size = match i {
            5 => big,
            6 => 2 * CHUNK + 3,
            9 => 0,
            _ => (i * 977) % 20_000,
        };
        let body: Vec<u8> = (0..size).map(|j| (j * 13 + i) as u8).collect();
        let sub = root.join(format!("d{}", i % 3));
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(sub.join(format!("f{i:02}.py")), body).unwrap();
    }
    let src = DirSource::new(root);
    let rules = Rules::default();
    let selection = select(&src, &rules).unwrap();
    assert!(selection.files.len() >= SPLIT_MIN_FILES);
    // Called directly: `hash_stream` splits only when a core is idle.
    let split = |src: &DirSource, files: &[SelectedFile]| {
        let reader = || src.file_reader().expect("a directory has readers");
        hash_split(reader(), reader(), files)
    };
    let inline = compute_detailed(&src, &rules).unwrap().fingerprint;
    assert_eq!(split(&src, &selection.files).ok(), inline.digest);
    assert!(inline.digest.is_some());
    let mut one = src.file_reader().unwrap();
    assert_eq!(hash_inline(&mut *one, &selection.files).ok(), inline.digest);
    assert_eq!(
        from_selection(&src, &rules, selection.clone()).unwrap(),
        inline
    );
    // A file swapped for a FIFO after the walk, at an index either
    // thread reads, then one of each (either first in hash order): the
    // first in hash order is named.
    let plan = read_ahead(&selection.files);
    let theirs: Vec<usize> = (0..plan.len()).filter(|i| plan[*i]).collect();
    let mine: Vec<usize> = (0..plan.len()).filter(|i| !plan[*i]).collect();
    let (a, b) = (mine[1], theirs[2]);
    let later_mine = *mine.iter().find(|i| **i > b).expect("runs alternate");
    assert!(a < b && b < later_mine, "{plan:?}");
    for bad in [[a, a], [b, b], [a, b], [later_mine, b]] {
        let dir = tempfile::tempdir().unwrap();
        for f in &selection.files {
            let to = dir.path().join(&f.path);
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::copy(root.join(&f.path), &to).unwrap();
        }
        let src = DirSource::new(dir.path());
        let sel = select(&src, &rules).unwrap();
        for k in bad {
            let path = dir.path().join(&sel.files[k].path);
            std::fs::remove_file(&path).unwrap();
            let c = std::ffi::CString::new(path.into_os_string().into_encoded_bytes()).unwrap();
            // SAFETY: mkfifo with a valid NUL-terminated path in a temp dir.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        }
        let mut digests = Vec::new();
        let inline = finish(&src, &rules, sel.clone(), Hashing::Detailed(&mut digests)).unwrap();
        let first = bad.iter().min().unwrap();
        let reason = inline.unavailable_reason.clone().unwrap();
        assert!(
            reason.contains(&sel.files[*first].path),
            "{bad:?}: {reason}"
        );
        // Both threads' way and one thread's name the same file, the same way.
        let mut one = src.file_reader().unwrap();
        for got in [split(&src, &sel.files), hash_inline(&mut *one, &sel.files)] {
            match got {
                Err(SourceError::Unreadable { path, why }) => {
                    assert_eq!(format!("{path}: {why}"), reason, "{bad:?}")
                }
                other => panic!("{bad:?}: {other:?}"),
            }
        }
        assert_eq!(from_selection(&src, &rules, sel.clone()).unwrap(), inline);
    }
}

/// Recycled chunks carry nothing over: streams of every length around
/// the chunk size, one after the other and from several threads at
/// once, each hash as their bytes alone; the spare pool stays bounded.
#[test]
fn recycled_chunks_never_leak_bytes_between_streams() {
    let lengths = [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK + 5, 7 * CHUNK];
    let run = |seed: usize| {
        for (i, len) in lengths.iter().chain(lengths.iter().rev()).enumerate() {
            let body: Vec<u8> = (0..*len).map(|j| (j * 7 + i + seed) as u8).collect();
            let got = std::thread::scope(|scope| {
                let mut pipe = Pipe::new(scope);
                // Odd write sizes, so chunk edges fall mid-write.
                for piece in body.chunks(CHUNK / 3 + 11) {
                    pipe.write(piece);
                }
                pipe.finish()
            });
            assert_eq!(got, hex::encode(Sha256::digest(&body)), "length {len}");
        }
    };
    run(0);
    std::thread::scope(|scope| {
        for seed in 1..4 {
            scope.spawn(move || run(seed));
        }
    });
    let spare = CHUNKS.spare();
    assert!(spare.len() <= QUEUE + 2, "{}", spare.len());
    assert!(spare.iter().all(|&(len, cap)| len == 0 && cap == CHUNK));
}

/// The resumable hasher gives the digest hashing from scratch gives over
/// a series of selections of one directory whose files change under the
/// same paths (so it must not resume after a path: only a blob id names
/// bytes), and an error midway leaves it usable. Resuming after blobs is
/// checked against `fingerprint` in tests/it/history.rs.
#[test]
fn resumable_hashes_as_compute() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let rules = Rules::default();
    let mut hasher = Resumable::new();
    let states: [&[(&str, &str)]; 5] = [
        &[("a.py", "1"), ("b.py", "2"), ("c.py", "3")],
        &[("a.py", "1"), ("b.py", "2"), ("c.py", "4")],
        &[("a.py", "0"), ("b.py", "2"), ("c.py", "4")],
        &[("a.py", "0"), ("b.py", "2")],
        &[("a.py", "0"), ("b.py", "2"), ("c.py", "4"), ("d.py", "")],
    ];
    for files in states {
        for entry in std::fs::read_dir(root).unwrap() {
            std::fs::remove_file(entry.unwrap().path()).unwrap();
        }
        for (name, body) in files {
            std::fs::write(root.join(name), body).unwrap();
        }
        let source = DirSource::new(root);
        let plain = compute(&source, &rules).unwrap();
        let selection = select(&source, &rules).unwrap();
        let resumed = from_selection_resumed(&source, &rules, selection, &mut hasher).unwrap();
        assert_eq!(resumed.digest, plain.digest, "{files:?}");
    }
    // A file that vanished makes the hash fail; the next one is right.
    let source = DirSource::new(root);
    let selection = select(&source, &rules).unwrap();
    std::fs::remove_file(root.join("d.py")).unwrap();
    let gone = from_selection_resumed(&source, &rules, selection, &mut hasher).unwrap();
    assert_eq!(gone.digest, None);
    let plain = compute(&source, &rules).unwrap();
    let selection = select(&source, &rules).unwrap();
    let again = from_selection_resumed(&source, &rules, selection, &mut hasher).unwrap();
    assert_eq!(again.digest, plain.digest);
}

#[test]
fn detailed_has_no_digests_when_unavailable() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("x.py")).unwrap();
    let d = compute_detailed(&DirSource::new(dir.path()), &Rules::default()).unwrap();
    assert_eq!(d.fingerprint.digest, None);
    assert!(d.file_digests.is_empty());
}

/// The two threads of `hash_split` take runs of one directory's files:
/// a run ends where the directory changes or after `RUN` files, and the
/// hashing thread reads every `SPLIT_OF`th run.
#[test]
fn read_ahead_cuts_runs_by_directory() {
    let files = |paths: &[String]| -> Vec<SelectedFile> {
        paths
            .iter()
            .map(|p| SelectedFile {
                path: p.clone(),
                content: Node::Path(p.into()),
            })
            .collect()
    };
    // One flat directory: runs of RUN files.
    let flat: Vec<String> = (0..5 * RUN).map(|i| format!("f{i:03}.py")).collect();
    let plan = read_ahead(&files(&flat));
    let runs: Vec<bool> = plan.chunks(RUN).map(|c| c[0]).collect();
    assert!(plan.chunks(RUN).all(|c| c.iter().all(|x| *x == c[0])));
    assert_eq!(runs, [false, true, true, true, false]);
    // Directories of 2 files: one run each, whatever RUN is.
    let dirs: Vec<String> = (0..10)
        .map(|i| format!("d{}/f{}.py", i / 2, i % 2))
        .collect();
    assert_eq!(
        read_ahead(&files(&dirs)),
        [false, false, true, true, true, true, true, true, false, false]
    );
}

/// The hostile tree: many large blobs that compress to nothing, each
/// selected at two paths (identical blobs, and a link to one). [`feed`]
/// keeps at most [`KEEP_TOTAL`] at once: the contents that find no room are
/// read again for their second path, a content kept is let go at its last
/// use (so room comes back), and the digest is the stream's.
#[cfg(unix)]
#[test]
fn kept_bytes_are_bounded_in_total() {
    use crate::source::git::test_git;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    test_git(root, &["init", "-q"]);
    // Bodies of exactly KEEP_LIMIT bytes: each fits alone; n of them do not.
    let n = KEEP_TOTAL / KEEP_LIMIT + 1;
    let body = |tag: u8| {
        let mut b = vec![b'#'; KEEP_LIMIT];
        b[0] = tag;
        b
    };
    for i in 0..n {
        std::fs::write(root.join(format!("a{i}.py")), body(i as u8)).unwrap();
        if i == 0 {
            // A link shares its target's blob id too.
            std::os::unix::fs::symlink("a0.py", root.join("z0.py")).unwrap();
        } else {
            std::fs::write(root.join(format!("z{i}.py")), body(i as u8)).unwrap();
        }
    }
    // After every `a`/`z` pair is done, one more shared content: kept.
    for name in ["zz0.py", "zz1.py"] {
        std::fs::write(root.join(name), body(b'C')).unwrap();
    }
    test_git(root, &["add", "-A"]);
    test_git(root, &["commit", "-qm", "blobs"]);
    let repo = crate::source::git::Session::open(Some(root)).unwrap();
    let rev = crate::source::Revision::parse(&repo, "HEAD").unwrap();
    let source = Counting(
        crate::source::GitSource::new(repo, rev, "").unwrap(),
        Default::default(),
    );
    let selection = select(&source, &Rules::default()).unwrap();
    let paths: Vec<&str> = selection.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths.len(), 2 * n + 2, "{paths:?}");

    let mut want = Sha256::new();
    for path in &paths {
        let tag = match path.as_bytes() {
            [b'z', b'z', ..] => b'C',
            [_, digit @ ..] => std::str::from_utf8(&digit[..digit.len() - 3])
                .unwrap()
                .parse::<u8>()
                .unwrap(),
            _ => unreachable!(),
        };
        want.update(path.as_bytes());
        want.update([0]);
        want.update(body(tag));
        want.update([b'\n']);
    }
    let mut got = Sha256::new();
    let peak = feed(&source, &selection.files, &mut |piece| match piece {
        Piece::Path(p) => {
            got.update(p);
            got.update([0]);
        }
        Piece::Bytes(b) => got.update(b),
        Piece::End => got.update([b'\n']),
    })
    .unwrap();
    assert_eq!(got.finalize(), want.finalize());
    // The first KEEP_TOTAL / KEEP_LIMIT `a` contents fill the room exactly;
    // the last `a` finds none and is read again for its `z`; the `zz` pair
    // comes after every `a`/`z` pair let its bytes go, so it is kept.
    assert_eq!(peak, KEEP_TOTAL);
    assert_eq!(source.1.get(), n + 1 + 1);
}
