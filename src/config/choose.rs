//! Choosing among the declared runtimes (`--runtime`, repeatable): shared
//! by the range and history analyses, so that both refuse the same choices
//! with the same words.

use crate::setting::{Message, Setting, Value};
use std::collections::BTreeSet;

use super::ConfigError;

/// The chosen runtime names, each once, in the order first given.
pub fn dedupe(chosen: &[String]) -> Vec<String> {
    let mut seen = BTreeSet::new();
    chosen
        .iter()
        .filter(|n| seen.insert(n.as_str()))
        .cloned()
        .collect()
}

/// Refuses a chosen runtime that nothing declares, listing the declared
/// ones, then a root set for several runtimes at once (a root belongs to
/// one runtime). `scope` says where the runtimes were looked for
/// ("in any release", "at either end").
pub fn check(
    chosen: &[String],
    declared: &BTreeSet<String>,
    scope: &str,
    root_set: bool,
) -> Result<(), ConfigError> {
    if let Some(bad) = chosen.iter().find(|n| !declared.contains(*n)) {
        return Err(unknown(bad, declared, scope));
    }
    if chosen.len() != 1 && root_set {
        return Err(ConfigError::Invalid(
            Message::new()
                .setting(Setting::Root, Value::None)
                .text(
                    " names one runtime's root, but several runtimes are analysed: pick one with ",
                )
                .setting(Setting::Runtime, Value::Placeholder("NAME"))
                .text(", or set `root` under each [runtimes.NAME]"),
        ));
    }
    Ok(())
}

/// `--runtime NAME` that is not declared `scope`.
pub fn unknown(name: &str, declared: &BTreeSet<String>, scope: &str) -> ConfigError {
    let list: Vec<&str> = declared.iter().map(String::as_str).collect();
    ConfigError::Invalid(
        Message::new()
            .setting(Setting::Runtime, Value::Given(name.to_string()))
            .text(format!(
                ": no such runtime {scope} (declared: {})",
                if list.is_empty() {
                    "none".into()
                } else {
                    list.join(", ")
                }
            )),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    fn strings(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    #[test]
    fn dedupe_keeps_the_first_of_each_in_order() {
        assert_eq!(
            dedupe(&strings(&["w", "s", "w", "a", "s"])),
            strings(&["w", "s", "a"])
        );
        assert!(dedupe(&[]).is_empty());
    }

    #[test]
    fn an_undeclared_runtime_is_refused_listing_the_declared() {
        let err = check(
            &strings(&["s", "x\u{1b}"]),
            &set(&["w", "s"]),
            "at either end",
            false,
        )
        .unwrap_err()
        .to_string();
        // Raw: the name is escaped once, where the message is shown.
        assert_eq!(
            err,
            "--runtime x\u{1b}: no such runtime at either end (declared: s, w)"
        );
        let none = unknown("x", &BTreeSet::new(), "in any release").to_string();
        assert_eq!(
            none,
            "--runtime x: no such runtime in any release (declared: none)"
        );
    }

    #[test]
    fn a_root_is_refused_unless_exactly_one_runtime_is_chosen() {
        let declared = set(&["s", "w"]);
        assert!(check(&strings(&["s"]), &declared, "at either end", true).is_ok());
        assert!(check(&strings(&["s", "w"]), &declared, "at either end", false).is_ok());
        for chosen in [strings(&[]), strings(&["s", "w"])] {
            let err = check(&chosen, &declared, "at either end", true).unwrap_err();
            assert!(
                err.to_string()
                    .starts_with("--root names one runtime's root"),
                "{err}"
            );
        }
    }
}
