//! Reads a callgrind output file (valgrind's cl-format.html) into a call graph: each function's
//! exclusive counts and, per caller and callee, the calls' count and inclusive counts, of every
//! event the file has (`Ir` first of all); with `--dump-instr=yes`, also each instruction's
//! counts and each function's entry address, which the sync measure needs (sync/). Jump lines
//! are skipped. `tlsbench profile` and the measures counted under callgrind read their files
//! here.

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
    /// Every event's count in the function itself, in the order of [`CallGraph::events`].
    pub exclusive_events: Vec<u64>,
    /// The address of its first instruction (relative to its object, as callgrind writes it),
    /// from the calls to it, with `--dump-instr=yes`.
    pub entry: Option<u64>,
}

impl Function {
    /// A function without counts.
    pub fn named(name: &str, object: &str, file: &str) -> Function {
        Function {
            name: name.into(),
            object: object.into(),
            file: file.into(),
            exclusive: 0,
            exclusive_events: Vec::new(),
            entry: None,
        }
    }

    /// Whether it is the allocator's: malloc and its internals, the runners' heap-measure
    /// interposer, jemalloc's and mimalloc's, and Rust's allocation shims.
    pub fn is_allocator(&self) -> bool {
        let name = self.name.as_str();
        ALLOCATOR_NAMES.contains(&name)
            || ALLOCATOR_PREFIXES.iter().any(|p| name.starts_with(p))
            || HEAP_INTERPOSER.iter().chain(ALLOCATOR_PATHS).any(|p| self.file.contains(p))
    }
}

/// The allocator's functions: glibc's malloc and its internals, and Rust's allocation shims.
const ALLOCATOR_NAMES: &[&str] = &[
    "malloc",
    "free",
    "realloc",
    "calloc",
    "posix_memalign",
    "aligned_alloc",
    "memalign",
    "malloc_usable_size",
    "cfree",
    "sysmalloc",
    "systrim",
    "malloc_consolidate",
    "unlink_chunk",
    "alloc_perturb",
    "tcache_init",
    "__rust_alloc",
    "__rust_dealloc",
    "__rust_realloc",
    "__rust_alloc_zeroed",
];
/// With `TLSBENCH_ALLOCATOR`: jemalloc's functions (prefixed `_rjem_`) and mimalloc's (`mi_`,
/// `_mi_`), built into the runner by tikv-jemalloc-sys and libmimalloc-sys.
const ALLOCATOR_PREFIXES: &[&str] = &[
    "_int_",
    "__libc_malloc",
    "__libc_free",
    "__libc_realloc",
    "__libc_calloc",
    "__libc_memalign",
    "tcache_",
    "_mid_memalign",
    "__rdl_",
    "__rg_",
    "_rjem_",
    "mi_",
    "_mi_",
];
/// Where the allocators' sources are built from (their static functions have no prefix).
const ALLOCATOR_PATHS: &[&str] = &["/tikv-jemalloc-sys-", "/libmimalloc-sys-"];
/// The harness's heap interposer (crates/harness), which forwards to the allocator.
const HEAP_INTERPOSER: &[&str] = &["/crates/harness/src/heap.rs", "/crates/harness/src/allocator.rs"];

/// The calls from one function to another, summed over call sites.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Calls {
    /// Every call, whether collection was on or not: callgrind counts calls while it collects
    /// no event, so this is not the calls made inside the measured calls (see
    /// [`CallGraph::entries`]).
    pub count: u64,
    /// Instructions executed inside these calls, the callee's own callees included.
    pub inclusive: u64,
    /// Every event's count inside these calls, in the order of [`CallGraph::events`].
    pub inclusive_events: Vec<u64>,
}

#[derive(Debug, Default)]
pub struct CallGraph {
    /// The events counted, as the `events:` line names them (`Ir`, `Ge`, `sysCount`, ...).
    pub events: Vec<String>,
    pub functions: Vec<Function>,
    /// (caller, callee) -> calls, by index into `functions`.
    pub calls: BTreeMap<(usize, usize), Calls>,
    /// The `summary:` or `totals:` line's instructions, when the file has one.
    pub summary: Option<u64>,
    /// With `--dump-instr=yes`: the counts of each instruction, by (function, address), of the
    /// function's own cost lines (a call's inclusive counts are in `calls`).
    pub instructions: HashMap<(usize, u64), Vec<u64>>,
}

impl CallGraph {
    /// Instructions counted in the file: the sum of every function's exclusive instructions.
    pub fn total(&self) -> u64 {
        self.functions.iter().map(|f| f.exclusive).sum()
    }

    /// Which column of the counts holds `event`, if the file counts it.
    pub fn event(&self, event: &str) -> Option<usize> {
        self.events.iter().position(|e| e == event)
    }

    /// The file's total of `event`: the sum of every function's exclusive count.
    pub fn event_total(&self, event: usize) -> u64 {
        self.functions.iter().map(|f| f.exclusive_events.get(event).copied().unwrap_or(0)).sum()
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

    /// How many times the instruction at `address` of `function` ran while callgrind collected.
    pub fn executed(&self, function: usize, address: u64) -> u64 {
        let ir = self.event("Ir").expect("a parsed file counts Ir");
        self.instructions.get(&(function, address)).map_or(0, |costs| costs[ir])
    }

    /// How many times `function` was entered while callgrind collected: the runs of its first
    /// instruction (which no loop of a lock function jumps back to). Callgrind's call counts
    /// cannot say it, and neither can the runs of a call instruction (a call through the PLT
    /// counts the stub's instructions at the call). None without `--dump-instr=yes`, or for a
    /// function no call reached.
    pub fn entries(&self, function: usize) -> Option<u64> {
        Some(self.executed(function, self.functions[function].entry?))
    }

    /// The graph with each function's contexts (`--separate-callers`: `f'caller'caller...`)
    /// merged into the function, as if callgrind had not separated them: `function` names the
    /// function of a context (a Rust name may hold a `'` of its own).
    pub fn merge_contexts(&self, function: impl Fn(&str) -> &str) -> CallGraph {
        let mut merged = CallGraph { events: self.events.clone(), summary: self.summary, ..CallGraph::default() };
        let mut by_key: HashMap<(&str, &str), usize> = HashMap::new();
        let index: Vec<usize> = self
            .functions
            .iter()
            .map(|f| {
                let name = function(&f.name);
                *by_key.entry((f.object.as_str(), name)).or_insert_with(|| {
                    merged.functions.push(Function { exclusive: 0, exclusive_events: Vec::new(), ..f.clone() });
                    merged.functions.last_mut().expect("just pushed").name = name.to_string();
                    merged.functions.len() - 1
                })
            })
            .collect();
        for (f, function) in self.functions.iter().enumerate() {
            let into = &mut merged.functions[index[f]];
            into.exclusive += function.exclusive;
            add(&mut into.exclusive_events, &function.exclusive_events);
            into.entry = into.entry.or(function.entry);
        }
        for (&(caller, callee), calls) in &self.calls {
            let into = merged.calls.entry((index[caller], index[callee])).or_default();
            into.count += calls.count;
            into.inclusive += calls.inclusive;
            add(&mut into.inclusive_events, &calls.inclusive_events);
        }
        for (&(function, address), costs) in &self.instructions {
            add(merged.instructions.entry((index[function], address)).or_default(), costs);
        }
        merged
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
    /// Which position column is the instruction's address, with `--dump-instr=yes`.
    instr_column: Option<usize>,
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
    /// Set by `calls=`: the next cost line is the inclusive cost of that call; its count.
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
                self.instr_column = value.split_whitespace().position(|p| p == "instr");
                self.previous = vec![0; self.positions];
            }
            "events" => {
                self.graph.events = value.split_whitespace().map(String::from).collect();
                self.ir_column = self.graph.event("Ir");
            }
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
                let mut fields = value.split_whitespace();
                let count = fields.next().context("calls= without a count")?;
                self.pending_calls = Some(count.parse()?);
                // The callee's position, relative to the last cost line's (which it leaves as
                // it is): with instructions, its first instruction.
                if let Some(column) = self.instr_column {
                    let field = fields.nth(column).context("calls= without its target's address")?;
                    let entry = position(field, self.previous[column])?;
                    let callee = self.callee.context("calls= without a cfn=")?;
                    self.graph.functions[callee].entry = Some(entry as u64);
                }
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
        let mut costs = vec![0; self.graph.events.len()];
        for (cost, field) in costs.iter_mut().zip(fields) {
            *cost = field.parse()?;
        }
        let ir = costs[column];
        let address = self.instr_column.map(|c| self.previous[c] as u64);
        let caller = self.function.context("a cost line before any fn=")?;
        match self.pending_calls.take() {
            Some(count) => {
                let callee = self.callee.take().context("calls= without a cfn=")?;
                let calls = self.graph.calls.entry((caller, callee)).or_default();
                calls.count += count;
                calls.inclusive += ir;
                add(&mut calls.inclusive_events, &costs);
            }
            None => {
                let function = &mut self.graph.functions[caller];
                function.exclusive += ir;
                add(&mut function.exclusive_events, &costs);
                if let Some(address) = address {
                    add(self.graph.instructions.entry((caller, address)).or_default(), &costs);
                }
            }
        }
        Ok(())
    }

    /// The index of the function `name` in `object`, added the first time it is seen. Its file
    /// is the one it was first seen with: its own `fl=` when it is seen by `fn=`, which is
    /// corrected if it was first seen as a callee.
    fn function_index(&mut self, name: String, object: String, file: String) -> usize {
        let functions = &mut self.graph.functions;
        let index = *self.by_key.entry((object.clone(), name.clone())).or_insert_with(|| {
            functions.push(Function::named(&name, &object, &file));
            functions.len() - 1
        });
        if functions[index].file == "???" && file != "???" {
            functions[index].file = file;
        }
        index
    }
}

/// Adds `costs` to `total`, which grows to their length.
fn add(total: &mut Vec<u64>, costs: &[u64]) {
    if total.len() < costs.len() {
        total.resize(costs.len(), 0);
    }
    for (t, c) in total.iter_mut().zip(costs) {
        *t += c;
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
        let calls = &graph.calls[&(main, work)];
        assert_eq!((calls.count, calls.inclusive, calls.inclusive_events.as_slice()), (3, 900, [900].as_slice()));
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

    /// With `--dump-instr=yes --collect-bus=yes`, as callgrind 3.19 writes it: main calls lock
    /// (a library function) 160 times, of which 10 while collecting. The call instruction's own
    /// count (here 2 + 2 + 8) is no count of calls: a call through the PLT counts its stub's
    /// instructions there too.
    const BY_INSTRUCTION: &str = "\
positions: instr line
events: Ir Ge sysCount
ob=(1) /bin/t
fl=(1) t.c
fn=(1) main
0x11aa 17 2
+3 18 2
cob=(2) /lib/libc.so.6
cfi=(2) lock.c
cfn=(2) lock
calls=4 0x8c370 +62
* * 64 0
* * 2
cob=(2)
cfi=(2)
cfn=(2)
calls=156 0x8c370 +62
* * 256 8
* * 8
+5 * 10 10 1
ob=(2)
fl=(2)
fn=(2)
0x8c370 80 10
+3 * 310 8
";

    #[test]
    fn instructions_and_entries_while_collecting() {
        let graph = CallGraph::parse(BY_INSTRUCTION).unwrap();
        assert_eq!(graph.events, ["Ir", "Ge", "sysCount"]);
        let (main, main_fn) = find(&graph, "main");
        let (lock, lock_fn) = find(&graph, "lock");
        assert_eq!(lock_fn.entry, Some(0x8c370), "the calls' target, relative to nothing");
        assert_eq!(graph.entries(lock), Some(10));
        assert_eq!(graph.entries(main), None, "nothing calls main");
        let calls = &graph.calls[&(main, lock)];
        // Callgrind counts every call, collected or not.
        assert_eq!(calls.count, 160);
        assert_eq!((graph.executed(main, 0x11ad), graph.executed(main, 0x11b2)), (12, 10));
        assert_eq!(main_fn.exclusive_events, [24, 10, 1]);
        assert_eq!(calls.inclusive_events, [320, 8, 0]);
        let ge = graph.event("Ge").unwrap();
        assert_eq!((graph.event_total(ge), graph.event("Dr")), (18, None));
        assert_eq!(graph.total(), 24 + 320);
    }

    #[test]
    fn contexts_merge_into_their_function() {
        let text = "\
positions: line
events: Ir
fn=main
1 1
cfn=lock'a
calls=2 1
1 10
cfn=lock'b
calls=3 1
1 15
fn=lock'a
1 10
fn=lock'b
1 15
";
        let graph = CallGraph::parse(text).unwrap();
        assert_eq!(graph.functions.len(), 3);
        let merged = graph.merge_contexts(|name| name.split('\'').next().unwrap_or(name));
        let (main, _) = find(&merged, "main");
        let (lock, lock_fn) = find(&merged, "lock");
        assert_eq!((merged.functions.len(), lock_fn.exclusive), (2, 25));
        let calls = &merged.calls[&(main, lock)];
        assert_eq!((calls.count, calls.inclusive), (5, 25));
        assert_eq!(merged.total(), graph.total());
    }

    #[test]
    fn malformed_files_say_where() {
        let error = CallGraph::parse("events: Ir\npositions: line\nfn=(7)\n").unwrap_err();
        assert_eq!(format!("{error:#}"), "callgrind file, line 3: `fn=(7)`: name id (7) used before it is defined");
        assert!(CallGraph::parse("positions: line\nfn=f\n1 1\n").is_err());
    }
}
