//! Folded stacks (`a;b;c count`, the flamegraph's input) from callgrind's call graph.
//!
//! Callgrind records calls between functions, not whole stacks, so the stacks are rebuilt: from
//! each root (a function no collected function calls) depth first along the calls, each callee
//! getting the share of its instructions that this call accounts for (the call's inclusive over
//! the callee's inclusive over all its callers). Giving each callee its whole inclusive at
//! every caller would count a function called from several places several times.

use std::collections::BTreeMap;

use crate::callgrind_file::CallGraph;

/// Calls whose share of the total is below this are not followed (they would be narrower than
/// a pixel, and their number multiplies along the paths): their instructions go to one frame,
/// [`PRUNED_FRAME`], under their caller, so that every frame keeps its width.
pub const PRUNE_BELOW: f64 = 0.001;
pub const PRUNED_FRAME: &str = "(calls below 0.1%)";

pub struct Folded {
    /// Stack (frames joined by `;`, root first) -> instructions spent in its last frame.
    pub stacks: BTreeMap<String, u64>,
    /// Instructions of the calls not followed (below [`PRUNE_BELOW`]), in [`PRUNED_FRAME`]s.
    pub pruned: u64,
}

impl Folded {
    pub fn from_graph(graph: &CallGraph) -> Folded {
        let inclusive = graph.inclusive();
        let total = graph.total();
        let mut callees: Vec<Vec<(usize, u64)>> = vec![Vec::new(); graph.functions.len()];
        let mut called = vec![false; graph.functions.len()];
        for (&(caller, callee), calls) in &graph.calls {
            // Calls to itself are inside its own cost already; empty calls (made while
            // collection was off) do not make a function a callee.
            if caller != callee && calls.inclusive > 0 {
                callees[caller].push((callee, calls.inclusive));
                called[callee] = true;
            }
        }
        let mut walk = Walk {
            graph,
            inclusive: &inclusive,
            callees: &callees,
            threshold: total as f64 * PRUNE_BELOW,
            stack: Vec::new(),
            on_stack: vec![false; graph.functions.len()],
            stacks: BTreeMap::new(),
            pruned: 0.0,
        };
        for root in (0..graph.functions.len()).filter(|&f| !called[f] && inclusive[f] > 0) {
            // A root is followed whatever its size: the pruned calls need a caller.
            walk.visit(root, inclusive[root] as f64);
        }
        let (stacks, pruned) = (walk.stacks, walk.pruned);
        let stacks = stacks
            .into_iter()
            .map(|(stack, count)| (stack, count.round() as u64))
            .filter(|(_, count)| *count > 0)
            .collect();
        Folded { stacks: without_common_frames(stacks), pruned: pruned.round() as u64 }
    }

    /// The lines inferno reads.
    pub fn lines(&self) -> Vec<String> {
        self.stacks.iter().map(|(stack, count)| format!("{stack} {count}")).collect()
    }

    #[cfg(test)]
    pub fn total(&self) -> u64 {
        self.stacks.values().sum()
    }
}

struct Walk<'a> {
    graph: &'a CallGraph,
    inclusive: &'a [u64],
    callees: &'a [Vec<(usize, u64)>],
    threshold: f64,
    stack: Vec<String>,
    /// Cuts cycles (mutual recursion): a function already on the stack is not entered again,
    /// its instructions being inside the outer call's already.
    on_stack: Vec<bool>,
    stacks: BTreeMap<String, f64>,
    pruned: f64,
}

impl Walk<'_> {
    /// Enters `function` with `amount` of its inclusive instructions to place below this stack.
    fn visit(&mut self, function: usize, amount: f64) {
        let share = amount / self.inclusive[function] as f64;
        self.stack.push(frame(&self.graph.functions[function].name));
        self.on_stack[function] = true;
        let own = self.graph.functions[function].exclusive as f64 * share;
        if own > 0.0 {
            *self.stacks.entry(self.stack.join(";")).or_default() += own;
        }
        let mut pruned = 0.0;
        for &(callee, inclusive) in &self.callees[function] {
            let amount = inclusive as f64 * share;
            match (self.on_stack[callee], amount < self.threshold) {
                (true, _) => {}
                (false, true) => pruned += amount,
                (false, false) => self.visit(callee, amount),
            }
        }
        if pruned > 0.0 {
            self.pruned += pruned;
            *self.stacks.entry(format!("{};{PRUNED_FRAME}", self.stack.join(";"))).or_default() += pruned;
        }
        self.on_stack[function] = false;
        self.stack.pop();
    }
}

/// The stacks without the frames at their bottom that all share and that spend nothing
/// themselves: the process's start and the driver down to the side's library calls, which
/// would fill the flamegraph's lower half with bars at 100%.
fn without_common_frames(stacks: BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    let split: Vec<(Vec<&str>, u64)> =
        stacks.iter().map(|(stack, count)| (stack.split(';').collect(), *count)).collect();
    let Some((first, _)) = split.first() else { return stacks };
    // Every stack must go on past the common frames: one that ends there spends in them.
    let common = (0..first.len())
        .take_while(|&i| split.iter().all(|(frames, _)| frames.len() > i + 1 && frames[i] == first[i]))
        .count();
    split.into_iter().map(|(frames, count)| (frames[common..].join(";"), count)).collect()
}

/// A function name as a frame: the folded format separates frames with `;` and the count with
/// the last space, and Rust names hold `;` (`[u8; 32]`). A lock function's callgrind context
/// (`'caller'...`) is its place in the stack already.
fn frame(name: &str) -> String {
    crate::sync::without_context(name).replace(';', ",")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// main calls a and b, both call shared; shared calls leaf.
    const GRAPH: &str = "\
positions: line
events: Ir
fn=main
0 10
cfn=a
calls=1 0
0 300
cfn=b
calls=1 0
0 100
fn=a
0 100
cfn=shared
calls=3 0
0 200
fn=b
0 50
cfn=shared
calls=1 0
0 50
fn=shared
0 150
cfn=leaf
calls=4 0
0 100
fn=leaf
0 100
";

    #[test]
    fn a_callee_with_several_callers_is_split_between_them() {
        let folded = Folded::from_graph(&CallGraph::parse(GRAPH).unwrap());
        let expected = [
            ("main", 10),
            ("main;a", 100),
            ("main;a;shared", 120),
            ("main;a;shared;leaf", 80),
            ("main;b", 50),
            ("main;b;shared", 30),
            ("main;b;shared;leaf", 20),
        ];
        let expected: BTreeMap<String, u64> = expected.iter().map(|(s, c)| (s.to_string(), *c)).collect();
        assert_eq!(folded.stacks, expected);
        assert_eq!(folded.total(), 410);
        assert_eq!(folded.pruned, 0);
    }

    #[test]
    fn cycles_are_cut() {
        // main calls f; f and g call each other once (the calls' inclusive counts hold the
        // nested calls): the walk ends, with each function once per stack.
        let text = "positions: line\nevents: Ir\nfn=main\n0 1\ncfn=f\ncalls=1 0\n0 60\n\
                    fn=f\n0 15\ncfn=g\ncalls=2 0\n0 65\nfn=g\n0 45\ncfn=f\ncalls=1 0\n0 20\n";
        let folded = Folded::from_graph(&CallGraph::parse(text).unwrap());
        let stacks: Vec<&str> = folded.stacks.keys().map(String::as_str).collect();
        assert_eq!(stacks, ["main", "main;f", "main;f;g"]);
    }

    #[test]
    fn small_calls_are_gathered_under_their_caller() {
        let text = "positions: line\nevents: Ir\nfn=main\n0 100000\ncfn=tiny\ncalls=1 0\n0 50\nfn=tiny\n0 50\n";
        let folded = Folded::from_graph(&CallGraph::parse(text).unwrap());
        assert_eq!(folded.lines(), ["main 100000", "main;(calls below 0.1%) 50"]);
        assert_eq!(folded.pruned, 50);
    }

    #[test]
    fn the_frames_all_stacks_share_at_the_bottom_are_left_out() {
        let stacks =
            |list: &[(&str, u64)]| list.iter().map(|(s, c)| (s.to_string(), *c)).collect::<BTreeMap<String, u64>>();
        let shared = stacks(&[("start;main;run;a", 1), ("start;main;run;b;c", 2), ("start;main;x", 3)]);
        assert_eq!(without_common_frames(shared), stacks(&[("run;a", 1), ("run;b;c", 2), ("x", 3)]));
        // main spends something itself: it stays.
        let spending = stacks(&[("start;main", 1), ("start;main;a", 2)]);
        assert_eq!(without_common_frames(spending), stacks(&[("main", 1), ("main;a", 2)]));
    }

    #[test]
    fn semicolons_in_names_do_not_split_frames() {
        assert_eq!(frame("<[u8; 32] as core::fmt::Debug>::fmt"), "<[u8, 32] as core::fmt::Debug>::fmt");
    }
}
