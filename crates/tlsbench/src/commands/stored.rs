//! The commands on stored runs: `runs`, `show`, `compare` and `report`.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};

use super::run::resume_command;
use super::write_exports;
use crate::cli::{CompareArgs, ReportArgs, ShowArgs};
use crate::results::RunDocument;
use crate::store::{Store, StoreError, StoredRun};
use crate::{compare, export, output, profile, report, sampling};

pub(super) fn runs(db: &Path) -> Result<()> {
    let store = Store::open_existing(db)?;
    output::print(output::run_list::render(&store.runs()?, &store.cold_runs()?, db));
    Ok(())
}

pub(super) fn show(args: ShowArgs) -> Result<ExitCode> {
    let loaded = load(args.run.as_deref(), &args.db.db)?;
    output::print(output::table::render_grouped(&loaded.doc, args.group_by));
    warn_if_interrupted(&loaded, &args.db.db);
    write_exports(&args.exports, &loaded.doc)?;
    Ok(ExitCode::SUCCESS)
}

pub(super) fn compare(args: CompareArgs) -> Result<ExitCode> {
    let (mut a, mut b) = (load(Some(&args.a), &args.db.db)?, load(Some(&args.b), &args.db.db)?);
    for (loaded, build) in [(&mut a, args.build_a), (&mut b, args.build_b)] {
        if let Some(build) = build {
            compare::select_build(&mut loaded.doc, build.name())?;
            loaded.name = format!("{} [{build}]", loaded.name);
        }
    }
    for (loaded, compiler) in [(&mut a, args.compiler_a), (&mut b, args.compiler_b)] {
        if let Some(compiler) = compiler {
            compare::select_compiler(&mut loaded.doc, compiler.name())?;
            loaded.name = format!("{} [{compiler}]", loaded.name);
        }
    }
    if let (Some(stack_a), Some(stack_b)) = (&args.stack_a, &args.stack_b) {
        compare::select_stack(&mut a.doc, stack_a, stack_a)?;
        compare::select_stack(&mut b.doc, stack_b, stack_a)?;
        a.name = format!("{} ({stack_a})", a.name);
        b.name = format!("{} ({stack_b})", b.name);
    }
    let history = match args.no_history || args.threshold.is_some() {
        true => compare::History::default(),
        false => history(&args.db.db, &b.doc.run.id)?,
    };
    let mut comparison = compare::compare_with_history(&a.doc, &b.doc, args.threshold, &history);
    if args.beside_shift {
        compare::judge_beside_shift(&mut comparison).map_err(anyhow::Error::msg)?;
    }
    let named_a = output::comparison::Named { name: &a.name, doc: &a.doc };
    let named_b = output::comparison::Named { name: &b.name, doc: &b.doc };
    output::print(output::comparison::render(&named_a, &named_b, &comparison, args.threshold));
    warn_if_interrupted(&a, &args.db.db);
    warn_if_interrupted(&b, &args.db.db);
    let worse = comparison.count(compare::Verdict::Worse);
    if args.fail_on_regression && worse > 0 {
        crate::output::stderr::line(format!("{worse} cell(s) worse in B than in A (--fail-on-regression)"));
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

pub(super) fn report(args: ReportArgs) -> Result<ExitCode> {
    let loaded = load(args.run.as_deref(), &args.db.db)?;
    let profiles = args.profiles.iter().map(|path| profile::Profile::read(path)).collect::<Result<Vec<_>>>()?;
    let report = report::Report::grouped(&loaded.doc, args.baseline.as_deref(), args.group_by)?.with_profiles(profiles);
    output::print(report.terminal());
    warn_if_interrupted(&loaded, &args.db.db);
    if let Some(path) = &args.markdown {
        export::write_to(
            path,
            &export::MarkdownExporter { baseline: args.baseline.clone(), group_by: args.group_by },
            &loaded.doc,
        )?;
    }
    if let Some(dir) = &args.html {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let path = dir.join("index.html");
        std::fs::write(&path, report.html()).with_context(|| format!("cannot write {}", path.display()))?;
        crate::output::stderr::line(format!("wrote {}", path.display()));
    }
    Ok(ExitCode::SUCCESS)
}

/// The medians of every stored run but `except` (B, the run judged), oldest first: what
/// each cell's threshold is taken from. None without a database.
fn history(db: &Path, except: &str) -> Result<compare::History> {
    let mut history = compare::History::default();
    if !db.exists() {
        return Ok(history);
    }
    let store = Store::open_existing(db)?;
    for run in store.runs()?.iter().filter(|r| r.id != except) {
        // A run this tlsbench cannot read back adds nothing to the history.
        if let Ok((doc, _)) = store.load(&run.id).map_err(anyhow::Error::from).and_then(document_of) {
            history.add(&doc);
        }
    }
    Ok(history)
}

/// A run named on the command line, as its results document.
struct Loaded {
    /// How the user named it: a run id or a file.
    name: String,
    doc: RunDocument,
    /// Samples a stored run still lacks (it was interrupted).
    missing: u64,
}

/// An exported JSON file when `name` is one, else a run in the database (the latest when
/// `name` is `None`), turned into its document by the same code as a run's.
fn load(name: Option<&str>, db: &Path) -> Result<Loaded> {
    if let Some(name) = name.filter(|n| Path::new(n).is_file()) {
        return Ok(Loaded { name: name.to_string(), doc: RunDocument::read(Path::new(name))?, missing: 0 });
    }
    let store = match (Store::open_existing(db), name) {
        (Err(StoreError::Missing(_)), Some(name)) => {
            bail!(
                "`{name}` is neither a file nor a run: there is no results database at {} (--db PATH chooses one)",
                db.display()
            )
        }
        (store, _) => store?,
    };
    let id = match name {
        Some(name) => name.to_string(),
        None => store.latest()?,
    };
    let stored = match store.load(&id) {
        Err(StoreError::UnknownRun { .. }) if store.has_run(&id, true)? => {
            bail!(
                "`{id}` is a cold run (`tlsbench cold`), not a run of `tlsbench run`: `tlsbench cold --show {id}` \
                   prints it"
            )
        }
        Err(e @ StoreError::UnknownRun { .. }) => bail!("{e}, and there is no file `{id}`"),
        stored => stored?,
    };
    let (doc, missing) = document_of(stored)?;
    Ok(Loaded { name: id, doc, missing })
}

/// A stored run as its results document (by the same code as a run's), with the samples it
/// still lacks.
fn document_of(stored: StoredRun) -> Result<(RunDocument, u64)> {
    let states = sampling::restore(&stored)?;
    let missing = states.iter().map(|s| s.missing(stored.info.samples)).sum::<usize>() as u64;
    Ok((sampling::document(stored.info, &states), missing))
}

fn warn_if_interrupted(loaded: &Loaded, db: &Path) {
    if loaded.missing > 0 {
        crate::output::stderr::line(format!(
            "note: run {} was interrupted: {} sample(s) are missing; `{}` takes them",
            loaded.name,
            loaded.missing,
            resume_command(&loaded.name, db)
        ));
    }
}
