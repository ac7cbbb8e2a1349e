//! End-to-end: the HTML report of a real run, opened in headless Chromium (Debian's `chromium`,
//! installed by scripts/setup.sh): it loads nothing else, logs no console message, and draws the
//! charts' bars in the stacks' colours.

use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::Command;

/// The bar colours of the first two stacks (report/svg.rs's palette).
const STACK_COLOURS: [[u8; 3]; 2] = [[0x00, 0x72, 0xb2], [0xe6, 0x9f, 0x00]];

fn chromium() -> PathBuf {
    let found = std::env::var_os("PATH")
        .and_then(|paths| std::env::split_paths(&paths).map(|dir| dir.join("chromium")).find(|path| path.is_file()));
    found.expect("chromium is not installed; run scripts/setup.sh, which installs Debian's chromium package")
}

/// Headless Chromium on `page` with `args`, with a profile of its own and nothing in the
/// background that would reach the network.
fn headless(chromium: &Path, page: &Path, profile: &Path, args: &[&str]) -> Output {
    std::process::Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
        ])
        .args(["--disable-sync", "--no-first-run", "--hide-scrollbars", "--force-color-profile=srgb"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium runs")
}

fn tlsbench(dir: &Path) -> Command {
    let mut cmd = Command::cargo_bin("tlsbench").unwrap();
    cmd.env("TLSBENCH_DATA_DIR", dir.join("data")).current_dir(dir);
    cmd
}

#[test]
fn the_html_report_loads_in_chromium_and_shows_the_charts() {
    let chromium = chromium(); // before the run: a missing browser should fail at once
    let dir = tempfile::tempdir().unwrap();
    let run = tlsbench(dir.path())
        .args(["run", "--stack", "rustls-ring", "--stack", "openssl"])
        .args(crate::common::QUICK)
        .args([
            "--scenario",
            "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm",
            "--scenario",
            "transfer_1.3_x25519_ecdsa-p256_aes-128-gcm",
        ])
        .args(["--measure", "time", "--measure", "io"])
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let report = tlsbench(dir.path()).args(["report", "--baseline", "openssl", "--html", "html"]).output().unwrap();
    assert!(report.status.success(), "{}", String::from_utf8_lossy(&report.stderr));
    let page = dir.path().join("html").join("index.html");
    assert_eq!(
        String::from_utf8_lossy(&report.stderr),
        format!("wrote {}\n", Path::new("html").join("index.html").display())
    );

    // The DOM as Chromium parsed it, with every file it loaded and every console message logged.
    let dom = headless(
        &chromium,
        &page,
        &dir.path().join("profile-dom"),
        &["--enable-logging=stderr", "--v=1", "--dump-dom"],
    );
    assert!(dom.status.success(), "{}", String::from_utf8_lossy(&dom.stderr));
    let (html, log) = (String::from_utf8_lossy(&dom.stdout), String::from_utf8_lossy(&dom.stderr));
    let console: Vec<&str> = log.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(console.is_empty(), "console messages: {console:#?}");
    let loads: Vec<&str> = log.lines().filter(|l| l.contains("FileURLLoader::Start")).collect();
    assert_eq!(loads.len(), 1, "the page must load nothing but itself: {loads:#?}");
    assert!(loads[0].ends_with(&format!("file://{}", page.display())), "{loads:?}");
    // Charts per group and side: handshake-full has handshakes_per_s by wall and CPU time and
    // the io counts for each side, transfer has mb_per_s by wall and CPU time for each; one bar
    // per stack in each.
    let io_counts =
        tlsbench_harness::protocol::Metric::of(tlsbench_harness::Measure::Io, tlsbench_harness::Kind::HandshakeFull)
            .len();
    assert!(html.contains("<h1>tlsbench run <code>"), "{html}");
    assert!(html.contains("<th>calibration loop</th>"), "{html}");
    assert_eq!(html.matches("<section class=\"group\"").count(), 2);
    assert_eq!(html.matches("<svg").count(), 2 * (2 + io_counts) + 4);
    assert_eq!(html.matches("<rect class=\"bar\"").count(), 2 * (2 * (2 + io_counts) + 4));
    assert_eq!(html.matches("<path class=\"ci\"").count(), 2 * (2 * (2 + io_counts) + 4));
    assert!(html.contains("<th class=\"num\">rustls-ring/openssl</th>"), "{html}");
    // Every bar names its stack beside its value, as colours repeat past the palette's sixteen.
    let labels: Vec<&str> =
        html.split("<text class=\"value\"").skip(1).map(|t| &t[..t.find("</text>").unwrap()]).collect();
    assert_eq!(labels.len(), 2 * (2 * (2 + io_counts) + 4), "{labels:?}");
    assert!(labels.iter().all(|l| l.ends_with(" rustls-ring") || l.ends_with(" openssl")), "{labels:?}");
    // Each stack's bars are in one colour, no other stack's: a bar's fill, the stack its
    // tooltip names and the stack its label names, bar by bar.
    let mut fills: Vec<(String, String)> = Vec::new();
    for bar in html.split("<rect class=\"bar\"").skip(1) {
        let fill = bar.split("fill=\"").nth(1).and_then(|f| f.split('"').next()).expect("a bar has a fill");
        let tooltip = bar.split("<title>").nth(1).and_then(|t| t.split(':').next()).expect("a bar has a tooltip");
        let label = bar.split("<text class=\"value\"").nth(1).and_then(|t| t.split("</text>").next()).unwrap();
        assert!(label.ends_with(&format!(" {tooltip}")), "a bar of {tooltip} labelled {label}");
        fills.push((tooltip.to_string(), fill.to_lowercase()));
    }
    fills.sort();
    fills.dedup();
    let stacks: Vec<&str> = fills.iter().map(|(stack, _)| stack.as_str()).collect();
    assert_eq!(stacks, ["openssl", "rustls-ring"], "each stack's bars in one colour: {fills:?}");
    assert_ne!(fills[0].1, fills[1].1, "two stacks share a colour: {fills:?}");

    // What a person sees: a screenshot, with each stack's bars drawn in its colour.
    let shot = dir.path().join("report.png");
    let screenshot = headless(
        &chromium,
        &page,
        &dir.path().join("profile-shot"),
        &["--window-size=1200,2400", &format!("--screenshot={}", shot.display())],
    );
    assert!(screenshot.status.success(), "{}", String::from_utf8_lossy(&screenshot.stderr));
    let counts = colour_counts(&shot);
    for (colour, count) in STACK_COLOURS.iter().zip(counts) {
        // Six bars of 14 px by at least a few dozen px each, plus the legends' swatches.
        assert!(count > 2000, "{count} pixels of {colour:02x?}: the bars are not drawn");
    }
}

/// How many pixels of the screenshot have each of [`STACK_COLOURS`].
fn colour_counts(png_path: &Path) -> [usize; 2] {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(png_path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size().expect("a screenshot fits in memory")];
    let info = reader.next_frame(&mut pixels).unwrap();
    let channels = info.color_type.samples();
    let mut counts = [0; 2];
    for pixel in pixels[..info.buffer_size()].chunks(channels) {
        for (count, colour) in counts.iter_mut().zip(STACK_COLOURS) {
            *count += usize::from(pixel[..3] == colour);
        }
    }
    counts
}

#[test]
fn a_run_with_threads_prints_its_scaling_and_its_report_charts_it_per_stack_and_contexts_mode() {
    let chromium = chromium();
    let dir = tempfile::tempdir().unwrap();
    let run = tlsbench(dir.path())
        .args(["run", "--stack", "rustls-ring", "--stack", "openssl"])
        .args(crate::common::QUICK)
        .args(["--threads", "2", "--contexts", "both"])
        .args(["--scenario", "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm", "--measure", "time"])
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    // After the run's table, its scaling: a row per stack, side and contexts mode, a column per N.
    let table = String::from_utf8_lossy(&run.stdout);
    let scaling = table.split("\nscaling of handshakes_per_s_per_thread").nth(1).expect("a scaling table");
    assert!(scaling.contains("\nscaling of cpu_handshakes_per_s_per_thread"), "{scaling}");
    let (scaling, legend) = scaling.split_once("\n\n").expect("the CPU time's table follows");
    let rows: Vec<&str> =
        scaling.lines().filter(|l| l.starts_with("rustls-ring ") || l.starts_with("openssl ")).collect();
    assert_eq!(rows.len(), 2 * 2 * 2, "{scaling}");
    let labels = ["rustls-ring", "openssl"]
        .into_iter()
        .flat_map(|stack| ["client", "server"].map(|side| (stack, side)))
        .flat_map(|(stack, side)| ["own", "shared"].map(|contexts| [stack, side, contexts]));
    for (row, label) in rows.iter().zip(labels) {
        let words: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(words[..3], label, "{scaling}");
        // The efficiency at 2 threads, a percentage with its interval.
        assert!(words[4].parse::<u32>().is_ok() && words[5].starts_with('±') && words[5].ends_with('%'), "{row}");
    }
    assert!(legend.contains("--measure sync in the same run puts each row's lock and atomic counts"), "{legend}");
    assert!(table.lines().all(|l| l.chars().count() <= 120), "{table}");

    let report = tlsbench(dir.path()).args(["report", "--html", "html"]).output().unwrap();
    assert!(report.status.success(), "{}", String::from_utf8_lossy(&report.stderr));
    let page = dir.path().join("html").join("index.html");
    let dom = headless(&chromium, &page, &dir.path().join("profile-dom"), &["--enable-logging=stderr", "--dump-dom"]);
    assert!(dom.status.success(), "{}", String::from_utf8_lossy(&dom.stderr));
    let html = String::from_utf8_lossy(&dom.stdout);
    let log = String::from_utf8_lossy(&dom.stderr);
    assert!(!log.contains(":CONSOLE"), "{log}");
    let section = html.split("<section id=\"scaling\">").nth(1).expect("a scaling section");
    let section = &section[..section.find("<section id=\"tables\">").unwrap_or(section.len())];
    // Per side, wall and CPU rates per thread: four charts, each a line per stack and contexts
    // mode through one thread's point and two threads', and a dotted level per stack.
    let charts: Vec<&str> = section.split("<svg").skip(1).map(|c| &c[..c.find("</svg>").unwrap()]).collect();
    assert_eq!(charts.len(), 4, "{section}");
    for chart in &charts {
        let label = &chart[chart.find("aria-label=\"").unwrap() + 12..];
        let label = &label[..label.find('"').unwrap()];
        assert!(label.ends_with("handshakes_per_s_per_thread (higher is better)"), "{label}");
        for series in ["rustls-ring (own contexts)", "openssl (own contexts)", "openssl (shared context)"] {
            assert!(chart.contains(&format!(">{series}</text>")), "{series} in {label}");
        }
        assert_eq!(chart.matches("<path class=\"line\"").count(), 4, "{label}");
        assert_eq!(chart.matches("<circle class=\"point\"").count(), 8, "{label}");
        assert_eq!(chart.matches("<path class=\"reference\"").count(), 2, "{label}");
        assert!(chart.contains("text-anchor=\"middle\">1</text>") && chart.contains("text-anchor=\"middle\">2</text>"));
    }
    // Under the charts, the terminal's table.
    assert!(section.contains("<th>efficiency</th>") && section.contains("<th class=\"num\">2 threads</th>"));
}
