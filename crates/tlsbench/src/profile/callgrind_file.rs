//! Reads a callgrind output file (valgrind's cl-format.html) into a call graph: each function's
//! exclusive instructions and, per caller and callee, the calls' count and inclusive
//! instructions. Only the `Ir` event is kept; jump lines are skipped.

use std::collections::{BTreeMap, HashMap};

use anyhow::{bail, Context, Result};

/// A function as callgrind names it: its object (ELF file) and its name there. Two functions of
/// one name in different objects (a `memcpy` in ld.so and in libc) are different functions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Function {
    pub name: String,
    pub object: String,
    /// The source file of the function itself (`fl=`), not of code inlined into it.
    pub file: String,
    /// Instructions executed in the function itself, its inlined code included.
    pub exclusive: u64,
}

/// The calls from one function to another, summed over call sites.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Calls {
    pub count: u64,
    /// Instructions executed inside these calls, the callee's own callees included.
    pub inclusive: u64,
}

#[derive(Debug, Default)]
pub struct CallGraph {
    pub functions: Vec<Function>,
    /// (caller, callee) -> calls, by index into `functions`.
    pub calls: BTreeMap<(usize, usize), Calls>,
    /// The `summary:` or `totals:` line, when the file has one.
    pub summary: Option<u64>,
}

impl CallGraph {
    /// Instructions counted in the file: the sum of every function's exclusive instructions.
    pub fn total(&self) -> u64 {
        self.functions.iter().map(|f| f.exclusive).sum()
    }

    /// Each function's inclusive instructions: its own plus those of its calls, except calls
    /// to itself (recursion), whose instructions are already among its own and its calls'.
    pub fn inclusive(&self) -> Vec<u64> {
        let mut inclusive: Vec<u64> = self.functions.iter().map(|f| f.exclusive).collect();
        for (&(caller, callee), calls) in &self.calls {
            if caller != callee {
                inclusive[caller] += calls.inclusive;
            }
        }
        inclusive
    }

    /// Parses the text of a callgrind output file.
    pub fn parse(text: &str) -> Result<CallGraph> {
        let mut parser = Parser::default();
        for (at, line) in text.lines().enumerate() {
            parser.line(line).with_context(|| format!("callgrind file, line {}: `{}`", at + 1, line))?;
        }
        if parser.ir_column.is_none() {
            bail!("the callgrind file has no `events:` line naming Ir");
        }
        Ok(parser.graph)
    }
}

/// The parser's state: the current object, file and function, the callee named by the last
/// `cob=`/`cfi=`/`cfn=` lines, and the name compression tables.
#[derive(Default)]
struct Parser {
    graph: CallGraph,
    by_key: HashMap<(String, String), usize>,
    /// Name compression: `(id) name` defines an id, `(id)` refers to it. Functions (fn, cfn,
    /// jfn), files (fl, fi, fe, cfi, cfl, jfi) and objects (ob, cob) each have their own ids.
    fn_names: HashMap<u64, String>,
    file_names: HashMap<u64, String>,
    object_names: HashMap<u64, String>,
    /// How many position columns (`line`, or `instr line`) start a cost line.
    positions: usize,
    /// Which event column is Ir.
    ir_column: Option<usize>,
    /// The previous value of each position column, for `+n`, `-n` and `*`.
    previous: Vec<i64>,
    object: String,
    file: String,
    function: Option<usize>,
    callee_object: Option<String>,
    callee_file: Option<String>,
    callee: Option<usize>,
    /// Set by `calls=`: the next cost line is the inclusive cost of that call.
    pending_calls: Option<u64>,
}

impl Parser {
    fn line(&mut self, line: &str) -> Result<()> {
        let line = line.trim_end();
        if line.is_empty() || line.starts_with('#') {
            return Ok(());
        }
        let Some((key, value)) = split_spec(line) else {
            return self.cost_line(line);
        };
        match key {
            "positions" => {
                self.positions = value.split_whitespace().count();
                self.previous = vec![0; self.positions];
            }
            "events" => self.ir_column = value.split_whitespace().position(|e| e == "Ir"),
            "summary" | "totals" => {
                if let Some(column) = self.ir_column {
                    self.graph.summary = Some(value.split_whitespace().nth(column).unwrap_or("0").parse()?);
                }
            }
            "ob" => self.object = name(&mut self.object_names, value)?,
            "fl" => self.file = name(&mut self.file_names, value)?,
            // Inlined code: its cost stays with the current function; only the id is recorded.
            "fi" | "fe" | "jfi" => {
                name(&mut self.file_names, value)?;
            }
            "fn" => {
                let function = name(&mut self.fn_names, value)?;
                let (object, file) = (self.object.clone(), self.file.clone());
                self.function = Some(self.function_index(function, object, file));
            }
            "cob" => self.callee_object = Some(name(&mut self.object_names, value)?),
            "cfi" | "cfl" => self.callee_file = Some(name(&mut self.file_names, value)?),
            "cfn" => {
                let function = name(&mut self.fn_names, value)?;
                // Without cob=/cfi=, the callee is in the caller's object and file.
                let object = self.callee_object.take().unwrap_or_else(|| self.object.clone());
                let file = self.callee_file.take().unwrap_or_else(|| self.file.clone());
                self.callee = Some(self.function_index(function, object, file));
            }
            "jfn" => {
                name(&mut self.fn_names, value)?;
            }
            "calls" => {
                let count = value.split_whitespace().next().context("calls= without a count")?;
                self.pending_calls = Some(count.parse()?);
            }
            // Jumps, and header lines that do not change the instruction counts.
            _ => {}
        }
        Ok(())
    }

    /// A cost line: positions, then event counts (missing trailing counts are zero).
    fn cost_line(&mut self, line: &str) -> Result<()> {
        let mut fields = line.split_whitespace();
        for previous in self.previous.iter_mut() {
            let field = fields.next().context("a cost line without its positions")?;
            *previous = position(field, *previous)?;
        }
        let column = self.ir_column.context("a cost line before the `events:` line")?;
        let ir: u64 = fields.nth(column).map_or(Ok(0), str::parse)?;
        let caller = self.function.context("a cost line before any fn=")?;
        match self.pending_calls.take() {
            Some(count) => {
                let callee = self.callee.take().context("calls= without a cfn=")?;
                let calls = self.graph.calls.entry((caller, callee)).or_default();
                calls.count += count;
                calls.inclusive += ir;
            }
            None => self.graph.functions[caller].exclusive += ir,
        }
        Ok(())
    }

    /// The index of the function `name` in `object`, added the first time it is seen. Its file
    /// is the one it was first seen with: its own `fl=` when it is seen by `fn=`, which is
    /// corrected if it was first seen as a callee.
    fn function_index(&mut self, name: String, object: String, file: String) -> usize {
        let functions = &mut self.graph.functions;
        let index = *self.by_key.entry((object.clone(), name.clone())).or_insert_with(|| {
            functions.push(Function { name, object, file: file.clone(), exclusive: 0 });
            functions.len() - 1
        });
        if functions[index].file == "???" && file != "???" {
            functions[index].file = file;
        }
        index
    }
}

/// `key=value` (a name or call line) or `key: value` (a header line); None for a cost line.
fn split_spec(line: &str) -> Option<(&str, &str)> {
    let starts_cost = |c: char| c.is_ascii_digit() || matches!(c, '+' | '-' | '*');
    if line.starts_with(starts_cost) {
        return None;
    }
    let at = line.find(['=', ':'])?;
    Some((&line[..at], line[at + 1..].trim_start()))
}

/// A name with compression: `(id) name` defines id, `(id)` refers to it, `name` is plain.
fn name(table: &mut HashMap<u64, String>, value: &str) -> Result<String> {
    let Some(rest) = value.strip_prefix('(') else {
        return Ok(value.to_string());
    };
    let (id, rest) = rest.split_once(')').context("a name id without its `)`")?;
    let id: u64 = id.parse().context("a name id that is not a number")?;
    let rest = rest.trim_start();
    if rest.is_empty() {
        return table.get(&id).cloned().with_context(|| format!("name id ({id}) used before it is defined"));
    }
    table.insert(id, rest.to_string());
    Ok(rest.to_string())
}

/// A position: absolute (decimal or 0x hex), relative to the previous one (`+n`, `-n`), or
/// the same (`*`).
fn position(field: &str, previous: i64) -> Result<i64> {
    let value = if field == "*" {
        previous
    } else if let Some(n) = field.strip_prefix('+') {
        previous + parse_number(n)?
    } else if let Some(n) = field.strip_prefix('-') {
        previous - parse_number(n)?
    } else {
        parse_number(field)?
    };
    Ok(value)
}

fn parse_number(text: &str) -> Result<i64> {
    match text.strip_prefix("0x") {
        Some(hex) => Ok(i64::from_str_radix(hex, 16)?),
        None => Ok(text.parse()?),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find<'a>(graph: &'a CallGraph, name: &str) -> (usize, &'a Function) {
        graph.functions.iter().enumerate().find(|(_, f)| f.name == name).unwrap_or_else(|| panic!("no function {name}"))
    }

    #[test]
    fn compressed_names_relative_positions_and_calls() {
        let text = "\
# callgrind format
version: 1
positions: line
events: Ir
summary: 1000

ob=(1) /bin/runner
fl=(1) src/main.rs
fn=(1) main
10 5
+2 7
* 1
-3 2
cfn=(2) work
calls=3 20
12 900

fn=(2)
20 60
fi=(2) src/inlined.rs
5 20
fe=(1)
21 5
";
        let graph = CallGraph::parse(text).unwrap();
        let (main, main_fn) = find(&graph, "main");
        let (work, work_fn) = find(&graph, "work");
        assert_eq!(main_fn.exclusive, 15);
        // Inlined lines (fi=/fe=) stay with the function they are inlined into.
        assert_eq!(work_fn.exclusive, 85);
        assert_eq!((work_fn.object.as_str(), work_fn.file.as_str()), ("/bin/runner", "src/main.rs"));
        assert_eq!(graph.calls[&(main, work)], Calls { count: 3, inclusive: 900 });
        assert_eq!(graph.summary, Some(1000));
        let inclusive = graph.inclusive();
        assert_eq!((inclusive[main], inclusive[work]), (915, 85));
    }

    #[test]
    fn a_callee_in_another_object_is_named_by_cob_and_cfi() {
        let text = "\
positions: line
events: Ir
ob=(1) /bin/runner
fl=(1) src/main.rs
fn=(1) main
1 1
cob=(2) /lib/libc.so.6
cfi=(2) memcpy.S
cfn=(2) memcpy
calls=1 0
1 40
cfn=(3) helper
calls=2 0
2 10
ob=(2)
fl=(2)
fn=(2)
0 40
ob=(1)
fl=(1)
fn=(3)
0 10
fn=(4) memcpy
0 3
";
        let graph = CallGraph::parse(text).unwrap();
        let memcpys: Vec<&Function> = graph.functions.iter().filter(|f| f.name == "memcpy").collect();
        // A memcpy in each object: two functions.
        assert_eq!(memcpys.len(), 2);
        assert_eq!((memcpys[0].object.as_str(), memcpys[0].exclusive), ("/lib/libc.so.6", 40));
        assert_eq!((memcpys[1].object.as_str(), memcpys[1].exclusive), ("/bin/runner", 3));
        let (main, _) = find(&graph, "main");
        let (helper, helper_fn) = find(&graph, "helper");
        // cob/cfi named the previous callee only.
        assert_eq!(helper_fn.object, "/bin/runner");
        assert_eq!(graph.calls[&(main, helper)].inclusive, 10);
        assert_eq!(graph.inclusive()[main], 51);
        assert_eq!(graph.total(), 54);
    }

    #[test]
    fn recursion_is_not_counted_twice() {
        let text = "\
positions: line
events: Ir
fl=a.c
fn=f
1 10
cfn=f
calls=4 1
1 30
cfn=g
calls=1 1
1 5
fn=g
1 5
";
        let graph = CallGraph::parse(text).unwrap();
        let (f, _) = find(&graph, "f");
        assert_eq!(graph.inclusive()[f], 15);
    }

    #[test]
    fn several_event_columns_and_missing_trailing_counts() {
        let text = "positions: instr line\nevents: Dr Ir\nfn=f\n0x10 3 7 11\n+4 * 2\n";
        let graph = CallGraph::parse(text).unwrap();
        assert_eq!(graph.functions[0].exclusive, 11);
    }

    #[test]
    fn malformed_files_say_where() {
        let error = CallGraph::parse("events: Ir\npositions: line\nfn=(7)\n").unwrap_err();
        assert_eq!(format!("{error:#}"), "callgrind file, line 3: `fn=(7)`: name id (7) used before it is defined");
        assert!(CallGraph::parse("positions: line\nfn=f\n1 1\n").is_err());
    }
}
