//! `.gitattributes` that make a checkout's bytes differ from the stored
//! blobs fpcheck hashes (`text`, `eol`, `filter=lfs`...): warned about,
//! never applied, as the gate reads the checkout's bytes.

use std::collections::BTreeMap;

use gix::objs::tree::EntryKind as GitKind;
use gix::ObjectId;

use super::GitSource;
use crate::select::SelectedFile;
use crate::source::SourceError;
use crate::warning::{Code, Warning};

/// Attributes that make a checkout's bytes differ from the stored blob.
const CONVERTING_ATTRIBUTES: [&str; 5] = ["text", "eol", "crlf", "filter", "working-tree-encoding"];

/// The largest `.gitattributes` read: gix reads the file whole.
const MAX_ATTRIBUTES: u64 = crate::safe_io::JSON_LIMIT;

impl GitSource {
    /// The `.gitattributes` files that can apply to runtime files: in the
    /// directories above the root and in those the selection walked (path
    /// from the top, blob id).
    fn attribute_files(&self) -> Result<Vec<(String, ObjectId)>, SourceError> {
        let mut found = Vec::new();
        if let Some(stack) = &self.root_stack {
            // The real path of each tree, found from its parent: the root's
            // path may pass through links and `..`, so its own segments do
            // not name the trees above it.
            let mut dir: Vec<String> = Vec::new();
            for (depth, tree) in stack[..stack.len() - 1].iter().enumerate() {
                let entries = self.tree_entries(*tree, "a directory above the runtime root")?;
                if let Some((_, _, id)) = entries.iter().find(|(name, kind, _)| {
                    name == b".gitattributes"
                        && matches!(kind, GitKind::Blob | GitKind::BlobExecutable)
                }) {
                    let path = if dir.is_empty() {
                        ".gitattributes".to_string()
                    } else {
                        format!("{}/.gitattributes", dir.join("/"))
                    };
                    found.push((path, *id));
                }
                let next = stack[depth + 1];
                match entries
                    .iter()
                    .find(|(_, kind, id)| *kind == GitKind::Tree && *id == next)
                {
                    Some((name, _, _)) => dir.push(String::from_utf8_lossy(name).into_owned()),
                    // The walk went from each tree to one of its subtrees.
                    None => break,
                }
            }
        }
        found.extend(self.gitattributes.borrow().iter().cloned());
        Ok(found)
    }

    /// Whether any `.gitattributes` can apply.
    pub(crate) fn may_have_attributes(&self) -> Result<bool, SourceError> {
        let info = self.repo.common_dir().join("info").join("attributes");
        Ok(info.is_file() || !self.attribute_files()?.is_empty())
    }

    pub(super) fn attribute_warnings(
        &self,
        files: &[SelectedFile],
    ) -> Result<Vec<Warning>, SourceError> {
        let fail = |e: gix::Error| SourceError::Git {
            message: format!("cannot read .gitattributes at `{}`", self.rev.spec).into(),
            source: Box::new(e),
        };
        // An index of the `.gitattributes` files alone, not of the whole
        // tree: gix maps attribute files to blobs through an index, and one
        // of the whole tree costs a walk of every directory (half a
        // gigabyte for a tree nested 20,000 deep outside the root).
        let mut index = gix::index::State::new(self.repo.object_hash());
        let mut too_large = Vec::new();
        for (path, id) in self.attribute_files()? {
            let size = gix::odb::Header::try_header(&self.repo.objects, &id)
                .ok()
                .flatten()
                .map_or(0, |h| h.size());
            if size > MAX_ATTRIBUTES {
                too_large.push(Warning::new(
                    Code::GitattributesConversion,
                    format!(
                        "{path} at `{}` is {size} bytes, more than the {MAX_ATTRIBUTES} fpcheck \
                     reads: the conversions it may set are not reported",
                        self.rev.spec
                    ),
                ));
                continue;
            }
            index.dangerously_push_entry(
                Default::default(),
                id,
                gix::index::entry::Flags::empty(),
                gix::index::entry::Mode::FILE,
                path.as_str().into(),
            );
        }
        index.sort_entries();
        let mut stack = self
            .repo
            .attributes_only(
                &index,
                gix::worktree::stack::state::attributes::Source::IdMapping,
            )
            .map_err(fail)?;
        let mut out = stack.selected_attribute_matches(CONVERTING_ATTRIBUTES);
        // "filter=lfs" -> the runtime files it applies to
        let mut hits: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for file in files {
            let full = if self.root.is_empty() {
                file.path.clone()
            } else {
                format!("{}/{}", self.root, file.path)
            };
            let platform = stack.at_entry(full.as_str(), None).map_err(fail)?;
            platform.matching_attributes(&mut out);
            for m in out.iter_selected() {
                let name = m.assignment.name.as_str();
                let setting = match m.assignment.state {
                    gix::attrs::StateRef::Set => name.to_string(),
                    gix::attrs::StateRef::Value(v) => format!("{name}={}", v.as_bstr()),
                    gix::attrs::StateRef::Unset | gix::attrs::StateRef::Unspecified => continue,
                };
                hits.entry(setting).or_default().push(full.clone());
            }
        }
        let mut warnings = too_large;
        warnings.extend(hits.into_iter().map(|(setting, paths)| {
            let n = paths.len();
            let shown: Vec<&str> = paths.iter().take(3).map(String::as_str).collect();
            let more = if n > 3 {
                format!(" and {} more", n - 3)
            } else {
                String::new()
            };
            Warning::new(
                Code::GitattributesConversion,
                format!(
                    ".gitattributes at `{}` sets {setting} on {n} runtime file{} ({}{more}): \
                     a checkout may hold other bytes than the stored blobs fpcheck hashes",
                    self.rev.spec,
                    if n == 1 { "" } else { "s" },
                    shown.join(", ")
                ),
            )
        }));
        Ok(warnings)
    }
}

#[cfg(test)]
mod tests {
    use crate::source::git::test_git as git;
    use crate::source::git::{open_repo, GitSource, Revision};

    /// A root that is a link deeper than its own path: the trees above it
    /// outnumber its segments (this sliced past them and panicked).
    #[test]
    fn attributes_above_a_linked_root_are_named_by_their_real_path() {
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path();
        git(top, &["init", "-q"]);
        std::fs::create_dir_all(top.join("a/b/c")).unwrap();
        std::fs::write(top.join("a/b/c/x.py"), b"x = 1\n").unwrap();
        std::fs::write(top.join("a/b/.gitattributes"), b"*.py text\n").unwrap();
        std::os::unix::fs::symlink("a/b/c", top.join("src")).unwrap();
        git(top, &["add", "-A"]);
        git(top, &["commit", "-qm", "linked root"]);
        let repo = open_repo(Some(top)).unwrap();
        let rev = Revision::parse(&repo, "HEAD").unwrap();
        let src = GitSource::new(repo, rev, "src").unwrap();
        let found = src.attribute_files().unwrap();
        let paths: Vec<&str> = found.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(paths, ["a/b/.gitattributes"]);
    }
}
