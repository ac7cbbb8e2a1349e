//! The example Kubernetes manifests of deploy/kubernetes, checked without a cluster: rendered as
//! their README says, parsed, and each pod's command run here as Kubernetes would run it (the
//! server on loopback), then the generators' partials gathered from their output and merged.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use tlsbench_harness::net::NetReport;
use wait_timeout::ChildExt;
use yaml_rust2::{Yaml, YamlLoader};

use crate::net_common;

const GENERATORS: usize = 3;
const RUN_ID: &str = "k8s-test";
const SCENARIO: &str = "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm";
const KEY: &str = "ecdsa-p256";
/// The Secret of the README's `kubectl create secret generic`.
const PKI_SECRET: &str = "tlsbench-pki";
/// What marks a generator's partial in its log.
const PARTIAL_MARK: &str = "tlsbench-partial ";

/// The values a user exports before rendering; `server` is where the generators connect.
fn values(server: &str) -> Vec<(&'static str, String)> {
    [
        ("IMAGE", "tlsbench:test"),
        ("SERVER_STACK", "rustls-ring"),
        ("CLIENT_STACK", "openssl"),
        ("SCENARIO", SCENARIO),
        ("KEY", KEY),
        ("RESPONSE", "1KiB"),
        ("SERVER", server),
        ("RUN_ID", RUN_ID),
        ("GENERATORS", &GENERATORS.to_string()),
        ("CONNECTIONS", "15"),
        ("DURATION", "30"),
        ("CONCURRENCY", "2"),
        ("DEADLINE", "600"),
    ]
    .into_iter()
    .map(|(name, value)| (name, value.to_string()))
    .collect()
}

fn value(values: &[(&str, String)], name: &str) -> String {
    values.iter().find(|(n, _)| *n == name).unwrap_or_else(|| panic!("no test value for {name}")).1.clone()
}

fn deploy_file(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy/kubernetes").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The names in the README's `vars='...'`, the list it gives envsubst.
fn envsubst_list() -> String {
    let readme = deploy_file("README.md");
    let line = readme.lines().find_map(|l| l.strip_prefix("vars='")).expect("the README sets vars='...' for envsubst");
    line.trim_end_matches('\'').to_string()
}

/// What `envsubst "$vars"` makes of a manifest: each listed `${NAME}` becomes its value. When
/// envsubst is installed, it must render the same.
fn render(file: &str, values: &[(&str, String)]) -> String {
    let template = deploy_file(file);
    let mut text = template.clone();
    for name in envsubst_list().split_whitespace().map(|n| n.trim_start_matches('$')) {
        let placeholder = format!("${{{name}}}");
        if text.contains(&placeholder) {
            text = text.replace(&placeholder, &value(values, name));
        }
    }
    assert!(!text.contains("${"), "{file}: a placeholder the README's envsubst list leaves as it is:\n{text}");
    match Command::new("envsubst")
        .arg(envsubst_list())
        .envs(values.iter().cloned())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
    {
        Ok(mut child) => {
            child.stdin.take().unwrap().write_all(template.as_bytes()).unwrap();
            let out = child.wait_with_output().unwrap();
            assert!(out.status.success());
            assert_eq!(String::from_utf8(out.stdout).unwrap(), text, "envsubst renders {file} otherwise");
        }
        Err(_) => eprintln!("note: envsubst is not installed; {file} rendered by the test alone"),
    }
    text
}

fn parse(text: &str) -> Vec<Yaml> {
    YamlLoader::load_from_str(text).unwrap_or_else(|e| panic!("not YAML: {e}\n{text}"))
}

fn str_of<'a>(yaml: &'a Yaml, what: &str) -> &'a str {
    yaml.as_str().unwrap_or_else(|| panic!("{what}: not a string: {yaml:?}"))
}

/// A pod template's one container, as Kubernetes would start it.
struct Pod<'a> {
    spec: &'a Yaml,
    container: &'a Yaml,
}

impl<'a> Pod<'a> {
    /// The pod template of a Job or a Deployment.
    fn of(doc: &'a Yaml) -> Pod<'a> {
        let spec = &doc["spec"]["template"]["spec"];
        let containers = spec["containers"].as_vec().expect("containers");
        assert_eq!(containers.len(), 1, "one container per pod");
        Pod { spec, container: &containers[0] }
    }

    /// The container's variables given as values.
    fn env(&self) -> HashMap<String, String> {
        let entries = self.container["env"].as_vec().map(Vec::as_slice).unwrap_or_default();
        entries
            .iter()
            .map(|e| (str_of(&e["name"], "env name").to_string(), str_of(&e["value"], "env value").to_string()))
            .collect()
    }

    /// Command then args, with `$(NAME)` expanded from the container's variables and `more`.
    fn argv(&self, more: &[(&str, String)]) -> Vec<String> {
        let mut env = self.env();
        env.extend(more.iter().map(|(n, v)| (n.to_string(), v.clone())));
        let list = |key: &str| self.container[key].as_vec().map(Vec::as_slice).unwrap_or_default();
        list("command").iter().chain(list("args")).map(|a| expand(str_of(a, "command or arg"), &env)).collect()
    }

    fn volume(&self, name: &str) -> &'a Yaml {
        let volumes = self.spec["volumes"].as_vec().expect("volumes");
        volumes.iter().find(|v| v["name"].as_str() == Some(name)).unwrap_or_else(|| panic!("no volume {name}"))
    }

    /// (mount path, mount, volume) of each volume mount.
    fn mounts(&self) -> Vec<(&'a str, &'a Yaml, &'a Yaml)> {
        let mounts = self.container["volumeMounts"].as_vec().expect("volumeMounts");
        mounts
            .iter()
            .map(|m| (str_of(&m["mountPath"], "mountPath"), m, self.volume(str_of(&m["name"], "mount name"))))
            .collect()
    }

    /// Where the Secret is mounted, read-only.
    fn secret_mount(&self, secret: &str) -> &'a str {
        let mounts = self.mounts();
        let (path, mount, _) = mounts
            .iter()
            .find(|(_, _, volume)| volume["secret"]["secretName"].as_str() == Some(secret))
            .unwrap_or_else(|| panic!("Secret {secret} is not mounted"));
        assert_eq!(mount["readOnly"].as_bool(), Some(true), "the certificates are only read");
        path
    }

    /// `argv` as a process here, standing for the container: its filesystem paths (working
    /// directory, mounts, variables that name a path) under `root`, each mounted Secret's files
    /// from `secrets` as Kubernetes would project them, an environment of its own variables and
    /// `more`, and tlsbench's binaries on the PATH as the image has them.
    fn command(
        &self,
        argv: &[String],
        root: &Path,
        secrets: &HashMap<&str, PathBuf>,
        more: &[(&str, String)],
    ) -> Command {
        let local = |path: &str| match path.strip_prefix('/') {
            Some(relative) => root.join(relative),
            None => PathBuf::from(path),
        };
        for (path, _, volume) in self.mounts() {
            let dir = local(path);
            std::fs::create_dir_all(&dir).unwrap();
            if let Some(secret) = volume["secret"]["secretName"].as_str() {
                let from = secrets.get(secret).unwrap_or_else(|| panic!("no Secret {secret} in this cluster"));
                for file in std::fs::read_dir(from).unwrap().map(|f| f.unwrap().path()) {
                    std::fs::copy(&file, dir.join(file.file_name().unwrap())).unwrap();
                }
            } else {
                assert!(volume["emptyDir"].as_hash().is_some(), "a volume this test can stand for: {volume:?}");
            }
        }
        let bin = Path::new(env!("CARGO_BIN_EXE_tlsbench")).parent().unwrap();
        let workdir = self.container["workingDir"].as_str().map_or_else(|| root.to_path_buf(), local);
        let mut cmd = Command::new(&argv[0]);
        cmd.args(&argv[1..]).current_dir(workdir).env_clear().env("PATH", format!("{}:/usr/bin:/bin", bin.display()));
        for (name, value) in self.env() {
            let value = match value.starts_with('/') {
                true => local(&value).display().to_string(),
                false => value,
            };
            cmd.env(name, value);
        }
        cmd.envs(more.iter().cloned());
        cmd
    }
}

/// Kubernetes's expansion of command and args: `$(NAME)` of a variable the container has becomes
/// its value, `$$` becomes `$`, and everything else, an unknown `$(NAME)` too, stays as written.
fn expand(text: &str, env: &HashMap<String, String>) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        if let Some(after) = rest.strip_prefix("$$") {
            out.push('$');
            rest = after;
        } else if let Some((name, after)) = rest.strip_prefix("$(").and_then(|r| r.split_once(')')) {
            match env.get(name) {
                Some(value) => out.push_str(value),
                None => out.push_str(&rest[..rest.len() - after.len()]),
            }
            rest = after;
        } else {
            out.push('$');
            rest = &rest[1..];
        }
    }
    out + rest
}

/// The word after `option` in a command line or a shell script.
fn option<'a>(words: &'a str, option: &str) -> Option<&'a str> {
    let mut words = words.split_whitespace();
    words.find(|w| *w == option)?;
    words.next()
}

/// The load command of generator `index`, as its shell gets it.
fn load_script(job: &Pod, index: usize) -> String {
    let argv = job.argv(&[("JOB_COMPLETION_INDEX", index.to_string())]);
    assert_eq!(argv[..2], ["/bin/sh", "-c"], "{argv:?}");
    assert_eq!(argv.len(), 3, "one script: {argv:?}");
    argv[2].clone()
}

/// `kubectl`'s typed decoding of one object, offline (`set serviceaccount --local` decodes it
/// into the API's Go types and prints it back); None when kubectl is not installed.
fn kubectl_decoded(yaml: &str) -> Option<serde_json::Value> {
    let child = Command::new("kubectl")
        .args(["set", "serviceaccount", "--local", "-f", "-", "-o", "json", "default"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let Ok(mut child) = child else {
        eprintln!("note: kubectl is not installed: the manifests are not decoded into Kubernetes's own types");
        return None;
    };
    child.stdin.take().unwrap().write_all(yaml.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "kubectl cannot read it: {}", String::from_utf8_lossy(&out.stderr));
    Some(serde_json::from_slice(&out.stdout).unwrap())
}

/// Every field of ours is in kubectl's decoding with the same value: it drops the fields the API
/// does not have, so a misspelt or misplaced field shows here.
fn assert_kept(ours: &Yaml, decoded: &serde_json::Value, at: &str) {
    use serde_json::Value;
    match (ours, decoded) {
        (Yaml::Hash(fields), Value::Object(theirs)) => {
            for (key, value) in fields {
                let key = str_of(key, at);
                let theirs =
                    theirs.get(key).unwrap_or_else(|| panic!("kubectl dropped {at}.{key}: not a field of the API"));
                assert_kept(value, theirs, &format!("{at}.{key}"));
            }
        }
        (Yaml::Array(items), Value::Array(theirs)) if items.len() == theirs.len() => {
            for (i, (item, their)) in items.iter().zip(theirs).enumerate() {
                assert_kept(item, their, &format!("{at}[{i}]"));
            }
        }
        (Yaml::String(s), Value::String(t)) if s == t => {}
        (Yaml::Integer(i), Value::Number(n)) if n.as_i64() == Some(*i) => {}
        (Yaml::Boolean(b), Value::Bool(c)) if b == c => {}
        _ => panic!("{at}: ours {ours:?}, kubectl's {decoded}"),
    }
}

#[test]
fn the_manifests_are_an_indexed_job_of_bounded_generators_and_a_server_with_the_same_ca() {
    let values = values("127.0.0.1:8443");
    let value = |name: &str| value(&values, name);
    let job_text = render("load-job.yaml", &values);
    let docs = parse(&job_text);
    assert_eq!(docs.len(), 1);
    let job = &docs[0];
    assert_eq!((job["apiVersion"].as_str(), job["kind"].as_str()), (Some("batch/v1"), Some("Job")));
    // Pods carry the Job's name in a label: a DNS label of at most 63 characters.
    let name = str_of(&job["metadata"]["name"], "name");
    assert!(name.ends_with(RUN_ID) && name.len() <= 63, "{name}");
    assert!(name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'), "{name}");

    let spec = &job["spec"];
    assert_eq!(spec["completionMode"].as_str(), Some("Indexed"));
    let n = GENERATORS as i64;
    assert_eq!(
        (spec["completions"].as_i64(), spec["parallelism"].as_i64()),
        (Some(n), Some(n)),
        "N generators, all at once"
    );
    assert_eq!(spec["backoffLimit"].as_i64(), Some(0), "a retried generator would load the server at another time");
    let deadline = spec["activeDeadlineSeconds"].as_i64().expect("a deadline");
    assert!(deadline > value("DURATION").parse::<i64>().unwrap(), "the deadline leaves the load its duration");
    assert_eq!(spec["template"]["spec"]["restartPolicy"].as_str(), Some("Never"));

    let pod = Pod::of(job);
    let data_dir = pod.env().remove("TLSBENCH_DATA_DIR").expect("TLSBENCH_DATA_DIR");
    let pki = pod.secret_mount(PKI_SECRET);
    assert!(
        pki.starts_with(&format!("{data_dir}/")) && pki.ends_with(KEY),
        "the Secret is the data dir's {KEY} certificates: {pki}"
    );
    // The partial is written in the working directory: a volume, writable.
    let workdir = str_of(&pod.container["workingDir"], "workingDir");
    assert!(pod.mounts().iter().any(|(path, _, volume)| *path == workdir && volume["emptyDir"].as_hash().is_some()));

    for index in 0..GENERATORS {
        let script = load_script(&pod, index);
        assert!(script.contains("tlsbench load "), "{script}");
        assert_eq!(option(&script, "--run-id"), Some(RUN_ID), "one run: {script}");
        assert_eq!(option(&script, "--connect"), Some(value("SERVER").as_str()), "one server");
        // Bounded in count and time.
        assert_eq!(option(&script, "--connections"), Some(value("CONNECTIONS").as_str()));
        assert_eq!(option(&script, "--duration"), Some(value("DURATION").as_str()));
        assert!(script.contains(&format!("partial-{index}.json")), "the partial is named by the index: {script}");
        assert!(!script.contains("$("), "Kubernetes left a reference it could not expand: {script}");
    }

    let server_text = render("server.yaml", &values);
    let docs = parse(&server_text);
    let [deployment, service] = &docs[..] else { panic!("a Deployment and a Service: {docs:?}") };
    assert_eq!((deployment["kind"].as_str(), service["kind"].as_str()), (Some("Deployment"), Some("Service")));
    let server = Pod::of(deployment);
    let argv = server.argv(&[]);
    assert_eq!(argv[..2], ["tlsbench", "serve"]);
    let argv = argv.join(" ");
    assert_eq!(option(&argv, "--scenario"), Some(SCENARIO), "the generators' handshake");
    assert_eq!(
        option(&argv, "--response"),
        option(&load_script(&pod, 0), "--response"),
        "the response the generators check"
    );
    // The Service reaches the port the server listens on.
    let port =
        option(&argv, "--listen").and_then(|a| a.strip_prefix("0.0.0.0:")).expect("--listen on the pod's addresses");
    let target = &service["spec"]["ports"][0]["targetPort"];
    let container_port =
        server.container["ports"].as_vec().unwrap().iter().find(|p| &p["name"] == target).expect("the target port");
    assert_eq!(container_port["containerPort"].as_i64().map(|p| p.to_string()).as_deref(), Some(port));
    let labels = deployment["spec"]["template"]["metadata"]["labels"].as_hash().unwrap();
    for (key, value) in service["spec"]["selector"].as_hash().expect("a selector") {
        assert_eq!(labels.get(key), Some(value), "the Service selects the server's pod");
    }
    // The server reads the same CA at the same place.
    assert_eq!(server.env().get("TLSBENCH_DATA_DIR"), Some(&data_dir));
    assert_eq!(server.secret_mount(PKI_SECRET), pki);

    let pod_templates = [(job, job_text.as_str()), (deployment, server_text.split("\n---\n").next().unwrap())];
    for (ours, text) in pod_templates {
        match kubectl_decoded(text) {
            Some(decoded) => assert_kept(ours, &decoded, str_of(&ours["kind"], "kind")),
            None => break,
        }
    }
}

/// Starts `tlsbench serve`; its address, from its first line.
fn serve(mut cmd: Command) -> (Child, String) {
    let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let addr = net_common::served_address(&mut child);
    (child, addr)
}

/// SIGTERM, as Kubernetes stops a pod: the server finishes, prints what it measured and exits.
fn stop(mut child: Child) -> String {
    // SAFETY: a signal to our own child, not yet reaped.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let status = child.wait_timeout(Duration::from_secs(30)).unwrap().expect("the server stops on SIGTERM");
    let (mut out, mut err) = (String::new(), String::new());
    child.stdout.take().unwrap().read_to_string(&mut out).unwrap();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    assert!(status.success(), "{status}: {out}{err}");
    out
}

/// (ok, failed) of the server's `connections` line: what `kubectl logs` shows of it.
fn server_counts(summary: &str) -> (u64, u64) {
    let line = summary.lines().find_map(|l| l.strip_prefix("connections")).unwrap_or_else(|| panic!("{summary}"));
    let number = |word: &str| word.replace(',', "").parse::<u64>().unwrap_or_else(|_| panic!("{line}"));
    let words: Vec<&str> = line.split_whitespace().collect();
    assert_eq!((words[1], words[3]), ("ok,", "failed,"), "{line}");
    (number(words[0]), number(words[2]))
}

#[test]
fn the_job_s_pods_run_here_as_kubernetes_would_run_them_and_their_partials_merge_into_one_run() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let tlsbench = || {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_tlsbench"));
        cmd.env("TLSBENCH_DATA_DIR", root.join("user")).current_dir(root);
        cmd
    };

    // As the README says: a first `tlsbench serve` of the scenario makes the certificates, and
    // `kubectl create secret generic --from-file` makes the key type's directory a Secret.
    let settings = values("");
    let value = |name: &str| value(&settings, name);
    let mut first = tlsbench();
    first.args(["serve", "--stack", &value("SERVER_STACK"), "--scenario", SCENARIO]);
    stop(serve(first).0);
    let secrets = HashMap::from([(PKI_SECRET, root.join("user/pki-v2").join(KEY))]);

    // The server's pod, but on loopback: tests here never listen beyond it.
    let server_docs = parse(&render("server.yaml", &settings));
    let server_pod = Pod::of(&server_docs[0]);
    let mut argv = server_pod.argv(&[]);
    let listen = argv.iter().position(|a| a == "--listen").unwrap() + 1;
    argv[listen] = "127.0.0.1:0".into();
    let (server, addr) = serve(server_pod.command(&argv, &root.join("server-pod"), &secrets, &[]));

    // N pods at once, each with its index; each stops by itself.
    let job_docs = parse(&render("load-job.yaml", &values(&addr)));
    let job = Pod::of(&job_docs[0]);
    let pods: Vec<(PathBuf, Child)> = (0..GENERATORS)
        .map(|index| {
            let index_env = [("JOB_COMPLETION_INDEX", index.to_string())];
            let pod_root = root.join(format!("load-pod-{index}"));
            let mut cmd = job.command(&job.argv(&index_env), &pod_root, &secrets, &index_env);
            (pod_root, cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap())
        })
        .collect();
    let mut partials = Vec::new();
    for (index, (pod_root, mut child)) in pods.into_iter().enumerate() {
        let status = child.wait_timeout(Duration::from_secs(120)).unwrap().unwrap_or_else(|| {
            let _ = child.kill();
            panic!("generator {index} did not stop by itself");
        });
        let (mut log, mut err) = (String::new(), String::new());
        child.stdout.take().unwrap().read_to_string(&mut log).unwrap();
        child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
        assert!(status.success(), "generator {index}: {status}\n{log}{err}");
        // Gathered as the README's `sed -n 's/^tlsbench-partial //p' | split -l 1`: a line each.
        let marked: Vec<&str> = log.lines().filter_map(|l| l.strip_prefix(PARTIAL_MARK)).collect();
        assert_eq!(marked.len(), 1, "one partial in generator {index}'s log:\n{log}");
        let path = root.join(format!("partial-{index}"));
        std::fs::write(&path, marked[0]).unwrap();
        let written = std::fs::read_to_string(pod_root.join("partial").join(format!("partial-{index}.json"))).unwrap();
        let report: NetReport = serde_json::from_str(marked[0]).unwrap();
        assert_eq!(report, serde_json::from_str::<NetReport>(&written).unwrap(), "the log carries the partial whole");
        partials.push((path, report));
    }
    let summary = stop(server);

    let out = tlsbench()
        .arg("merge")
        .args(partials.iter().map(|(p, _)| p))
        .arg("--output")
        .arg(root.join("run.json"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let merged: NetReport = serde_json::from_str(&std::fs::read_to_string(root.join("run.json")).unwrap()).unwrap();

    let connections: u64 = value("CONNECTIONS").parse().unwrap();
    for (_, partial) in &partials {
        assert_eq!(partial.run_id.as_deref(), Some(RUN_ID));
        assert_eq!((partial.connections, partial.failed), (connections, 0), "each generator stops at its count");
    }
    let sum = |f: fn(&NetReport) -> u64| partials.iter().map(|(_, p)| f(p)).sum::<u64>();
    assert_eq!((merged.connections, merged.failed), (sum(|p| p.connections), 0));
    assert_eq!(merged.run_id.as_deref(), Some(RUN_ID));
    assert_eq!(merged.handshake_latency.count(), merged.connections, "the histograms merged, not averaged");
    // The server served every generator's connections, and their warm-ups: the first
    // --concurrency connections of each, served but not measured.
    let warmups = sum(|p| u64::from(p.concurrency));
    assert_eq!(server_counts(&summary), (merged.connections + warmups, 0), "{summary}");
}
