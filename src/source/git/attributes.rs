//! `.gitattributes` that make a checkout's bytes differ from the stored
//! blobs fpcheck hashes (`text`, `eol`, `filter=lfs`...): warned about,
//! never applied, as the gate reads the checkout's bytes.

use std::collections::BTreeMap;

use super::GitSource;
use crate::select::SelectedFile;
use crate::source::SourceError;

/// Attributes that make a checkout's bytes differ from the stored blob.
const CONVERTING_ATTRIBUTES: [&str; 5] = ["text", "eol", "crlf", "filter", "working-tree-encoding"];

impl GitSource {
    /// Whether any `.gitattributes` can apply: building the attribute stack
    /// costs an index of the whole tree, so look for the files first.
    pub(super) fn may_have_attributes(&self) -> Result<bool, SourceError> {
        if self.saw_gitattributes.get() {
            return Ok(true);
        }
        let info = self.repo.common_dir().join("info").join("attributes");
        if info.is_file() {
            return Ok(true);
        }
        let Some(stack) = &self.root_stack else {
            return Ok(false);
        };
        for tree in &stack[..stack.len() - 1] {
            if self
                .tree_entries(*tree, "a directory above the runtime root")?
                .iter()
                .any(|(name, _, _)| name == b".gitattributes")
            {
                return Ok(true);
            }
        }
        Ok(false)
    }

    pub(super) fn attribute_warnings(
        &self,
        files: &[SelectedFile],
    ) -> Result<Vec<String>, SourceError> {
        let fail = |e: gix::Error| SourceError::Git {
            message: format!("cannot read .gitattributes at `{}`", self.rev.spec),
            source: Box::new(e),
        };
        let index = self.repo.index_from_tree(&self.rev.tree).map_err(fail)?;
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
        Ok(hits
            .into_iter()
            .map(|(setting, paths)| {
                let n = paths.len();
                let shown: Vec<&str> = paths.iter().take(3).map(String::as_str).collect();
                let more = if n > 3 {
                    format!(" and {} more", n - 3)
                } else {
                    String::new()
                };
                format!(
                    ".gitattributes at `{}` sets {setting} on {n} runtime file{} ({}{more}): \
                     a checkout may hold other bytes than the stored blobs fpcheck hashes",
                    self.rev.spec,
                    if n == 1 { "" } else { "s" },
                    shown.join(", ")
                )
            })
            .collect())
    }
}
