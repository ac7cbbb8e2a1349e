//! The stacks a run (`run`, `interop`, `io`) measures when it names none: every stack some
//! runner holds, but those whose library is licensed under the GPL only. Building one is a
//! choice (`scripts/build.sh --wolfssl`, which scripts/test.sh makes for its tests); measuring
//! it is another, made by naming it, so that no later default run on that checkout carries GPL
//! code the user did not ask for.

use crate::runners::Runners;

/// The stacks licensed under the GPL only (docs/stacks.md): measured only when named.
pub const GPL_ONLY: &[&str] = &["wolfssl"];

/// The stacks a run that names none measures ([`Runners::default_stacks`], which notes on
/// stderr the stacks no runner holds), without the GPL-only ones; a note on stderr names those
/// it left out and how to measure them.
pub fn of_a_run(runners: &Runners) -> Vec<String> {
    let (ids, note) = without_gpl_only(runners.default_stacks());
    if let Some(note) = note {
        crate::output::stderr::line(note);
    }
    ids
}

/// `ids` without the GPL-only stacks, and a note naming those it took out, if any.
fn without_gpl_only(ids: Vec<String>) -> (Vec<String>, Option<String>) {
    let (gpl, ids): (Vec<String>, Vec<String>) = ids.into_iter().partition(|id| GPL_ONLY.contains(&id.as_str()));
    let note = (!gpl.is_empty()).then(|| {
        let named: Vec<String> = gpl.iter().map(|id| format!("--stack {id}")).collect();
        format!(
            "note: GPL-only, so measured only when named: {} ({}, and --stack for each other stack)",
            gpl.join(", "),
            named.join(" ")
        )
    });
    (ids, note)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(ids: &[&str]) -> Vec<String> {
        ids.iter().map(|id| id.to_string()).collect()
    }

    #[test]
    fn a_gpl_only_stack_that_is_built_is_left_out_saying_how_to_measure_it() {
        let (kept, note) = without_gpl_only(ids(&["openssl", "wolfssl", "go"]));
        assert_eq!(kept, ids(&["openssl", "go"]));
        let note = note.expect("a note on what was left out");
        assert_eq!(
            note,
            "note: GPL-only, so measured only when named: wolfssl (--stack wolfssl, and --stack for each other stack)"
        );
        // Without one built, every stack is kept, and there is nothing to say.
        assert_eq!(without_gpl_only(ids(&["openssl", "go"])), (ids(&["openssl", "go"]), None));
    }

    #[test]
    fn the_gpl_only_stacks_are_known_stacks() {
        for id in GPL_ONLY {
            assert!(crate::stacks::known(id).is_some(), "{id}");
        }
    }
}
