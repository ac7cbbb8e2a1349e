//! With the `static` feature, refuses to build unless openssl-sys is told to link an OpenSSL
//! statically from a directory (scripts/build-openssl.sh sets both): otherwise the runner would
//! link the system's libssl and pass for a build from source.

fn main() {
    for var in ["OPENSSL_DIR", "OPENSSL_STATIC", "TLSBENCH_OPENSSL_RELEASE"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    if std::env::var_os("CARGO_FEATURE_STATIC").is_none() {
        return;
    }
    let dir = std::env::var_os("OPENSSL_DIR").filter(|d| !d.is_empty());
    let static_ = std::env::var("OPENSSL_STATIC").is_ok_and(|s| s != "0");
    let release = std::env::var("TLSBENCH_OPENSSL_RELEASE").is_ok_and(|r| !r.is_empty());
    if dir.is_none() || !static_ || !release {
        panic!(
            "tlsbench-runner-openssl-static links an OpenSSL built from source statically: \
             build it with scripts/build-openssl.sh (it sets OPENSSL_DIR, OPENSSL_STATIC=1 and \
             TLSBENCH_OPENSSL_RELEASE, the release its stack is listed under: openssl@X.Y)"
        );
    }
}
