//! `tlsbench list`: the stacks (with their library versions and what each supports) or the
//! scenarios.

use anyhow::{bail, Result};
use tlsbench_harness::Scenario;

use crate::cli::ListWhat;
use crate::output;
use crate::runners::Runners;

pub(super) fn list(what: ListWhat, stack: Option<&str>) -> Result<()> {
    match (what, stack) {
        (ListWhat::Scenarios, None) => {
            for scenario in Scenario::all() {
                output::print(format!("{scenario}\n"));
            }
        }
        (ListWhat::Scenarios, Some(id)) => {
            let info = Runners::find()?.infos(&[id.to_string()])?.remove(0);
            let defaults = Scenario::defaults();
            for scenario in Scenario::all() {
                let support = match info.capabilities.check(id, &scenario) {
                    Ok(()) if defaults.contains(&scenario) => "supported (in the default run)".to_string(),
                    Ok(()) => "supported".to_string(),
                    Err(reason) => format!("unsupported: {reason}"),
                };
                output::print(support_line(&scenario.name(), &support));
            }
        }
        (ListWhat::Stacks, Some(_)) => bail!("--stack goes with `tlsbench list scenarios`"),
        (ListWhat::Stacks, None) => {
            let runners = Runners::find()?;
            let ids = [runners.default_stacks(), runners.releases()].concat();
            // A runner whose stack is not what it says (a release runner replaced by another
            // build) costs that stack its line, with the reason, not the whole list.
            let (mut infos, mut refused) = (Vec::new(), Vec::new());
            for id in ids {
                match runners.infos(std::slice::from_ref(&id)) {
                    Ok(info) => infos.extend(info),
                    Err(e) => refused.push(format!("not listed: {e:#}")),
                }
            }
            refused.extend(
                runners.unusable().map(|(path, why)| format!("not listed: {} is unusable: {why}", path.display())),
            );
            output::print(output::stack_list::render(&infos));
            for line in refused {
                output::print(output::columns::wrap(&line, output::WIDTH, 2));
            }
        }
    }
    Ok(())
}

/// A scenario and what a stack does with it: on one line where that fits [`output::WIDTH`],
/// else the verdict on the next line, indented (and wrapped, should a reason be longer still).
fn support_line(name: &str, support: &str) -> String {
    let line = format!("{name:<72} {support}");
    match line.chars().count() <= output::WIDTH {
        true => line + "\n",
        false => format!("{name}\n{}", output::stderr::wrapped(&format!("    {support}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_verdict_that_does_not_fit_beside_its_scenario_goes_on_the_next_line() {
        let name = "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm";
        assert_eq!(support_line(name, "supported"), format!("{name:<72} supported\n"));
        let long = "unsupported: openssl: group x25519mlkem768 not supported";
        assert_eq!(support_line(name, long), format!("{name}\n    {long}\n"));
        let longer = format!("unsupported: {}", "why ".repeat(40));
        assert!(support_line(name, &longer).lines().all(|l| l.chars().count() <= output::WIDTH));
    }
}
