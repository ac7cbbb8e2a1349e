//! The runner of the link family built on the system's libssl: OpenSSL itself, LibreTLS's libtls
//! on top of it, GnuTLS (its own symbols, gnutls_*, clash with none), and rustls with
//! either provider, and s2n-tls (their C code, AWS-LC, uses prefixed symbols and cannot capture
//! OpenSSL's); and Bertie, pure Rust (libcrux).

use tlsbench_stack_bertie::Bertie;
use tlsbench_stack_gnutls::GnuTls;
use tlsbench_stack_libtls::LibTls;
use tlsbench_stack_openssl::OpenSsl;
use tlsbench_stack_rustls::Rustls;
use tlsbench_stack_s2n::S2n;

tlsbench_harness::family!(SystemOpenSsl {
    "rustls-aws-lc-rs" => Rustls::aws_lc_rs(),
    "rustls-ring" => Rustls::ring(),
    "openssl" => OpenSsl,
    "gnutls" => GnuTls,
    "libtls" => LibTls,
    "s2n-tls" => S2n::new(),
    "s2n-tls-recvbuf" => S2n::recv_buffering(),
    "bertie" => Bertie,
});

// Every allocation, the C libraries' included, goes through tlsbench's accounting (measure heap).
tlsbench_harness::interpose_malloc!();

fn main() -> std::process::ExitCode {
    tlsbench_harness::runner::main::<SystemOpenSsl>()
}
