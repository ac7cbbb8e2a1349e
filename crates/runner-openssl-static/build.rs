//! With the `static` feature, refuses to build unless openssl-sys is told to link an OpenSSL
//! statically from a directory (scripts/build-openssl.sh sets both): otherwise the runner would
//! link the system's libssl and pass for a build from source.

fn main() {
    println!("cargo:rerun-if-env-changed=TLSBENCH_OPENSSL_RELEASE");
    let dir = openssl_sys_env("OPENSSL_DIR").filter(|d| !d.is_empty());
    let static_ = openssl_sys_env("OPENSSL_STATIC").is_some_and(|s| s != "0");
    if std::env::var_os("CARGO_FEATURE_STATIC").is_none() {
        return;
    }
    let release = std::env::var("TLSBENCH_OPENSSL_RELEASE").is_ok_and(|r| !r.is_empty());
    if dir.is_none() || !static_ || !release {
        panic!(
            "tlsbench-runner-openssl-static links an OpenSSL built from source statically: \
             build it with scripts/build-openssl.sh (it sets OPENSSL_DIR, OPENSSL_STATIC=1 and \
             TLSBENCH_OPENSSL_RELEASE, the release its stack is listed under: openssl@X.Y)"
        );
    }
}

/// An openssl-sys setting as openssl-sys reads it: under the target's prefix
/// (X86_64_UNKNOWN_LINUX_GNU_OPENSSL_DIR) first, then the plain name.
fn openssl_sys_env(name: &str) -> Option<String> {
    let target = std::env::var("TARGET").expect("cargo sets TARGET for build scripts");
    let prefixed = format!("{}_{name}", target.to_uppercase().replace('-', "_"));
    for var in [prefixed.as_str(), name] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    std::env::var(&prefixed).ok().or_else(|| std::env::var(name).ok())
}
