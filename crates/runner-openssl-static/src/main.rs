//! The runner of the openssl stack alone, on an OpenSSL that scripts/build-openssl.sh built
//! from source and linked into it statically (see Cargo.toml): one runner per OpenSSL release,
//! each in a directory of its own (target/versions/openssl@X.Y), its stack listed as openssl@X.Y.

use tlsbench_stack_openssl::OpenSsl;

// Listed and asked for as openssl@X.Y, the release scripts/build-openssl.sh built.
tlsbench_harness::family!(StaticOpenSsl at env!("TLSBENCH_OPENSSL_RELEASE"), {
    "openssl" => OpenSsl,
});

// Every allocation, OpenSSL's included, goes through tlsbench's accounting (measure heap).
tlsbench_harness::interpose_malloc!();

fn main() -> std::process::ExitCode {
    tlsbench_harness::runner::main::<StaticOpenSsl>()
}
