//! The runner of the openssl stack alone, on an OpenSSL that scripts/build-openssl.sh built
//! from source and linked into it statically (see Cargo.toml): one runner per OpenSSL release,
//! each in a directory of its own (target/versions/openssl-X.Y.Z).

use tlsbench_stack_openssl::OpenSsl;

tlsbench_harness::family!(StaticOpenSsl {
    "openssl" => OpenSsl,
});

// Every allocation, OpenSSL's included, goes through tlsbench's accounting (measure heap).
tlsbench_harness::interpose_malloc!();

fn main() -> std::process::ExitCode {
    tlsbench_harness::runner::main::<StaticOpenSsl>()
}
