//! Which library each function belongs to. Shared libraries are told apart by their object
//! (libssl.so); what is linked statically into the runner (rustls, AWS-LC, ring, s2n-tls,
//! BoringSSL, Bertie) by the source file's path (its cargo package) and the symbol's prefix; an
//! OpenSSL built from source (openssl@X.Y), which has no debug info, by libssl's symbol prefixes,
//! the rest of it being libcrypto.

use serde::{Deserialize, Serialize};

use crate::callgrind_file::Function;

/// The classes a side's instructions are split into; every function is in exactly one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    /// The TLS protocol code (and the crate that binds it to Rust).
    Tls,
    /// The cryptography it calls.
    Crypto,
    /// malloc and friends, the runners' heap-measure interposer and Rust's allocation shims.
    Allocator,
    /// The C library, less its allocator.
    Libc,
    /// tlsbench's own code: transport, driver, stack adapters, runner.
    Harness,
    /// The rest: Rust's std, core and alloc, the dynamic loader, the vdso, unknown code.
    Other,
}

impl Class {
    pub const ALL: [Class; 6] =
        [Class::Tls, Class::Crypto, Class::Allocator, Class::Libc, Class::Harness, Class::Other];

    pub fn label(self) -> &'static str {
        match self {
            Class::Tls => "TLS library",
            Class::Crypto => "crypto provider",
            Class::Allocator => "allocator",
            Class::Libc => "libc",
            Class::Harness => "harness",
            Class::Other => "other",
        }
    }
}

/// How a rule recognises a function.
#[derive(Clone, Copy)]
enum Is {
    /// Its object's path contains this (a shared library).
    Object(&'static str),
    /// Its source file's path contains this (a cargo package's directory, a C source tree).
    Path(&'static str),
    /// Its name starts with this.
    Name(&'static str),
    /// Its object's path contains this, and it has no source file: C code built without debug
    /// info, as OpenSSL's own build makes it (the runner's Rust code always has one).
    Unsourced(&'static str),
}

/// One stack's TLS library and crypto provider: what they are, for the tables, and the rules
/// that recognise their functions (the first that matches wins).
pub struct StackLibraries {
    pub stacks: &'static [&'static str],
    pub tls: &'static str,
    pub crypto: &'static str,
    /// Groups of rules, so that stacks can share them (rustls's with either provider).
    rules: &'static [&'static [(Class, Is)]],
}

use Class::{Crypto, Tls};
use Is::{Name, Object, Path, Unsourced};

const RUSTLS: [(Class, Is); 7] = [
    (Tls, Path("/rustls-0.")),
    (Tls, Path("/rustls-webpki-")),
    (Tls, Path("/rustls-pki-types-")),
    (Tls, Path("/untrusted-")),
    (Tls, Name("rustls::")),
    (Tls, Name("webpki::")),
    (Tls, Name("rustls_pki_types::")),
];

const AWS_LC: [(Class, Is); 4] = [
    (Crypto, Path("/aws-lc-rs-")),
    (Crypto, Path("/aws-lc-sys-")),
    (Crypto, Path("/aws-lc/")),
    (Crypto, Name("aws_lc_")),
];

/// libssl linked statically (scripts/build-openssl.sh: 1.1.1, 3.x, 4.x), by its symbols' prefixes:
/// its public API, its internal functions (`ssl3_`, `tls13_`, `ossl_statem_`, ...) and the state
/// machine's and record layer's static functions that keep their names in the runner. These cover
/// all but a few dozen of 1.1.1's and 3.5's libssl functions (static helpers with generic names,
/// each called once a handshake, and QUIC's), which count as libcrypto's; libcrypto's own TLS PRF
/// (`tls1_prf_*`) counts as libssl's. WPACKET, with which libssl writes its messages, is libssl's
/// in 1.1.1 and libcrypto's from 3.0 (whose providers also write DER with it): libssl's here.
const STATIC_LIBSSL: [(Class, Is); 22] = [
    (Tls, Name("SSL_")),
    (Tls, Name("ssl_")),
    (Tls, Name("ssl3_")),
    (Tls, Name("SSL3_")),
    (Tls, Name("tls1")),
    (Tls, Name("tls_")),
    (Tls, Name("tlsv1_")),
    (Tls, Name("TLS_")),
    (Tls, Name("TLSv1")),
    (Tls, Name("dtls")),
    (Tls, Name("DTLS")),
    (Tls, Name("ossl_statem_")),
    (Tls, Name("ossl_ssl")),
    (Tls, Name("ossl_tls")),
    (Tls, Name("RECORD_LAYER_")),
    (Tls, Name("custom_ext")),
    (Tls, Name("statem_")),
    (Tls, Name("WPACKET_")),
    (Tls, Name("state_machine")),
    (Tls, Name("read_state_machine")),
    (Tls, Name("write_state_machine")),
    (Tls, Name("do_ssl3_write")),
];

/// The one table of which code is whose, per stack.
pub const STACK_LIBRARIES: &[StackLibraries] = &[
    StackLibraries {
        stacks: &["rustls-aws-lc-rs"],
        tls: "rustls, rustls-webpki, rustls-pki-types",
        crypto: "aws-lc-rs (AWS-LC)",
        rules: &[&RUSTLS, &AWS_LC],
    },
    StackLibraries {
        stacks: &["rustls-aws-lc-rs-fips"],
        tls: "rustls, rustls-webpki, rustls-pki-types",
        crypto: "aws-lc-rs (AWS-LC's FIPS module)",
        rules: &[&RUSTLS, &AWS_LC, &[(Crypto, Path("/aws-lc-fips-sys-"))]],
    },
    StackLibraries {
        stacks: &["rustls-ring"],
        tls: "rustls, rustls-webpki, rustls-pki-types",
        crypto: "ring",
        rules: &[&RUSTLS, &[(Crypto, Path("/ring-0.")), (Crypto, Name("ring_core_")), (Crypto, Name("ring::"))]],
    },
    StackLibraries {
        // At another release (openssl@3.5) OpenSSL is linked statically into the runner, built
        // without debug information: its functions have no object or file of their own, and
        // libssl's are told from libcrypto's by their names.
        stacks: &["openssl"],
        tls: "libssl, rust-openssl",
        crypto: "libcrypto",
        rules: &[
            &[
                (Tls, Object("/libssl.so")),
                (Tls, Path("/openssl-0.")),
                (Tls, Path("/openssl-sys-")),
                (Tls, Name("openssl::")),
                (Crypto, Object("/libcrypto.so")),
            ],
            // openssl@X.Y: OpenSSL linked into its runner, without debug info.
            &STATIC_LIBSSL,
            &[(Crypto, Unsourced("/tlsbench-runner-openssl-static"))],
        ],
    },
    StackLibraries {
        stacks: &["boringssl"],
        tls: "BoringSSL's libssl, boring",
        crypto: "BoringSSL's libcrypto",
        rules: &[&[
            (Tls, Path("/boringssl/src/ssl/")),
            (Tls, Path("/boringssl/ssl/")),
            (Tls, Path("/boring-4.")),
            (Tls, Path("/boring-5.")),
            (Tls, Name("boring::")),
            (Crypto, Path("/boring-sys-")),
            (Crypto, Path("/boringssl/")),
        ]],
    },
    // AWS-LC's libssl exports unprefixed names (SSL_do_handshake), its internals are C++ in
    // `bssl::`, and its libcrypto carries aws-lc-sys's prefix (aws_lc_0_41_0_EVP_AEAD_CTX_seal);
    // on the FIPS module, aws-lc-fips-sys's tree and prefix (aws_lc_fips_0_14_4_), the same rules.
    StackLibraries {
        stacks: &["aws-lc", "aws-lc-fips"],
        tls: "AWS-LC's libssl, rust-openssl",
        crypto: "AWS-LC's libcrypto",
        rules: &[
            &[
                (Tls, Path("/aws-lc/ssl/")),
                (Tls, Name("bssl::")),
                (Tls, Name("SSL_")),
                (Tls, Path("/openssl-0.")),
                (Tls, Path("/openssl-sys-")),
                (Tls, Name("openssl::")),
            ],
            &AWS_LC,
        ],
    },
    StackLibraries {
        stacks: &["gnutls"],
        tls: "libgnutls",
        crypto: "nettle, hogweed, gmp",
        rules: &[&[
            (Tls, Object("/libgnutls.so")),
            (Crypto, Object("/libnettle.so")),
            (Crypto, Object("/libhogweed.so")),
            (Crypto, Object("/libgmp.so")),
        ]],
    },
    StackLibraries {
        stacks: &["libtls"],
        tls: "libtls (LibreTLS), libssl",
        crypto: "libcrypto",
        rules: &[&[(Tls, Object("/libtls.so")), (Tls, Object("/libssl.so")), (Crypto, Object("/libcrypto.so"))]],
    },
    StackLibraries {
        stacks: &["s2n-tls", "s2n-tls-recvbuf"],
        tls: "s2n-tls",
        crypto: "AWS-LC (aws-lc-sys)",
        rules: &[&[(Tls, Path("/s2n-tls-sys-")), (Tls, Path("/s2n-tls-0.")), (Tls, Name("s2n_"))], &AWS_LC],
    },
    StackLibraries {
        stacks: &["bertie"],
        tls: "Bertie",
        crypto: "libcrux (HACL*)",
        rules: &[&[
            (Tls, Path("/bertie")),
            (Tls, Name("bertie::")),
            (Crypto, Path("/libcrux")),
            (Crypto, Name("libcrux")),
            (Crypto, Name("Hacl_")),
        ]],
    },
    // Static in its runner: wolfssl-sys builds wolfSSL's tree in its OUT_DIR, TLS in src/ and
    // wolfCrypt (assembly included) in wolfcrypt/src/.
    StackLibraries {
        stacks: &["wolfssl"],
        tls: "wolfSSL, wolfssl-sys",
        crypto: "wolfCrypt",
        rules: &[&[
            (Crypto, Path("/wolfssl-src/wolfcrypt/")),
            (Tls, Path("/wolfssl-src/src/")),
            (Tls, Path("/wolfssl-sys-")),
            (Crypto, Name("wc_")),
            (Tls, Name("wolfSSL_")),
        ]],
    },
];

/// tlsbench's own source, wherever it was built: crates/harness (the heap interposer in it is
/// the allocator, matched first), the stack adapters and the runners.
const HARNESS_PATHS: &[&str] = &["/crates/harness/", "/crates/stack-", "/crates/runner-"];

impl StackLibraries {
    /// The entry of `stack`; every known stack has one (a test checks). A stack at another
    /// release (`openssl@1.1.1`) has its stack's.
    pub fn of(stack: &str) -> Option<&'static StackLibraries> {
        let (stack, _) = crate::stacks::split_release(stack);
        STACK_LIBRARIES.iter().find(|s| s.stacks.contains(&stack))
    }

    /// What a class is made of for this stack, for the tables.
    pub fn what(&self, class: Class) -> &'static str {
        match class {
            Class::Tls => self.tls,
            Class::Crypto => self.crypto,
            Class::Allocator => {
                "malloc/free (glibc's, jemalloc or mimalloc), heap measure's interposer, Rust's __rust_alloc"
            }
            Class::Libc => "libc.so, libm.so",
            Class::Harness => "tlsbench: transport, driver, stack adapter",
            Class::Other => "Rust std/core/alloc, ld.so, vdso, unknown",
        }
    }

    pub fn classify(&self, function: &Function) -> Class {
        let name = function.name.as_str();
        if function.is_allocator() {
            return Class::Allocator;
        }
        let matches = |is: &Is| match *is {
            Object(part) => function.object.contains(part),
            Path(part) => function.file.contains(part),
            Name(prefix) => name.starts_with(prefix),
            Unsourced(part) => function.object.contains(part) && function.file == "???",
        };
        if let Some((class, _)) = self.rules.iter().copied().flatten().find(|(_, is)| matches(is)) {
            return *class;
        }
        if HARNESS_PATHS.iter().any(|p| function.file.contains(p)) || name.starts_with("tlsbench_") {
            return Class::Harness;
        }
        let object = function.object.rsplit('/').next().unwrap_or_default();
        if object.starts_with("libc.so") || object.starts_with("libm.so") {
            return Class::Libc;
        }
        Class::Other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn function(name: &str, object: &str, file: &str) -> Function {
        Function::named(name, object, file)
    }

    #[test]
    fn every_known_stack_has_its_libraries() {
        // Stacks in runners that callgrind cannot count (their `list` says so) are not profiled.
        const NOT_UNDER_CALLGRIND: &[&str] = &["go", "jsse", "netty-tcnative"];
        for stack in crate::stacks::all_ids().into_iter().filter(|id| !NOT_UNDER_CALLGRIND.contains(id)) {
            assert!(StackLibraries::of(stack).is_some(), "{stack} has no entry in STACK_LIBRARIES");
        }
    }

    #[test]
    fn functions_are_classed_by_object_path_and_name() {
        let runner = "/x/target/release/tlsbench-runner-openssl";
        let static_runner = "/x/target/versions/openssl@3.5/tlsbench-runner-openssl-static";
        let registry = "/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f";
        let aws_lc = "/x/target/release/tlsbench-runner-aws-lc";
        let fips = "/x/target/release/tlsbench-runner-fips";
        let cases = [
            ("openssl", function("SSL_do_handshake", "/usr/lib/x86_64-linux-gnu/libssl.so.3", "???"), Class::Tls),
            ("openssl", function("EVP_DigestUpdate", "/usr/lib/x86_64-linux-gnu/libcrypto.so.3", "???"), Class::Crypto),
            (
                "openssl",
                function("malloc", "/usr/lib/x86_64-linux-gnu/libc.so.6", "./malloc/malloc.c"),
                Class::Allocator,
            ),
            (
                "openssl",
                function("_int_free", "/usr/lib/x86_64-linux-gnu/libc.so.6", "./malloc/malloc.c"),
                Class::Allocator,
            ),
            ("openssl", function("memcpy", "/usr/lib/x86_64-linux-gnu/libc.so.6", "???"), Class::Libc),
            ("openssl", function("malloc", runner, "/work/main/crates/harness/src/heap.rs"), Class::Allocator),
            (
                "openssl",
                function("tlsbench_harness::driver::x", runner, "/work/main/crates/harness/src/driver.rs"),
                Class::Harness,
            ),
            (
                "openssl",
                function(
                    "openssl::ssl::SslStream::read",
                    runner,
                    &format!("{registry}/openssl-0.10.82/src/ssl/mod.rs"),
                ),
                Class::Tls,
            ),
            (
                "rustls-aws-lc-rs",
                function("rustls::conn::x", runner, &format!("{registry}/rustls-0.23.46/src/conn.rs")),
                Class::Tls,
            ),
            ("rustls-aws-lc-rs", function("aws_lc_0_35_sha256_block_data_order_avx", runner, "???"), Class::Crypto),
            (
                "rustls-aws-lc-rs",
                function("core::ptr::drop_in_place", runner, "/rustc/abc/library/core/src/ptr/mod.rs"),
                Class::Other,
            ),
            ("rustls-ring", function("ring_core_0_17_14_x25519_scalar_mult", runner, "???"), Class::Crypto),
            // The aws-lc runner's libssl and libcrypto, built from aws-lc-sys's source tree.
            (
                "aws-lc",
                function("SSL_do_handshake", aws_lc, &format!("{registry}/aws-lc-sys-0.41.0/aws-lc/ssl/ssl_lib.cc")),
                Class::Tls,
            ),
            (
                "aws-lc",
                function("bssl::tls13_add_finished(bssl::SSL_HANDSHAKE*)", aws_lc, "/aws-lc/ssl/tls13_both.cc"),
                Class::Tls,
            ),
            ("aws-lc", function("SSL_write", aws_lc, "???"), Class::Tls),
            (
                "aws-lc",
                function("aws_lc_0_41_0_EVP_AEAD_CTX_seal", aws_lc, "/aws-lc/crypto/fipsmodule/cipher/aead.c"),
                Class::Crypto,
            ),
            ("aws-lc", function("aws_lc_0_41_0_sha256_block_data_order_avx", aws_lc, "???"), Class::Crypto),
            (
                "aws-lc",
                function(
                    "openssl::ssl::SslStream::read",
                    aws_lc,
                    &format!("{registry}/openssl-0.10.82/src/ssl/mod.rs"),
                ),
                Class::Tls,
            ),
            ("aws-lc", function("malloc", aws_lc, "/work/main/crates/harness/src/heap.rs"), Class::Allocator),
            // The FIPS module's (runner-fips): aws-lc-fips-sys's tree, its prefix, and bcm.c's
            // static functions under their own names.
            (
                "aws-lc-fips",
                function("SSL_do_handshake", fips, &format!("{registry}/aws-lc-fips-sys-0.14.4/aws-lc/ssl/ssl_lib.cc")),
                Class::Tls,
            ),
            ("aws-lc-fips", function("aws_lc_fips_0_14_4_sha256_block_data_order_avx", fips, "???"), Class::Crypto),
            (
                "aws-lc-fips",
                function("aead_aes_gcm_seal_scatter", fips, "/aws-lc/crypto/fipsmodule/cipher/e_aes.c"),
                Class::Crypto,
            ),
            (
                "gnutls",
                function("nettle_sha256_update", "/usr/lib/x86_64-linux-gnu/libnettle.so.8.6", "???"),
                Class::Crypto,
            ),
            (
                "wolfssl",
                function(
                    "DoTls13HandShakeMsgType",
                    runner,
                    "/x/target/release/build/wolfssl-sys-1/out/wolfssl-src/src/tls13.c",
                ),
                Class::Tls,
            ),
            (
                "wolfssl",
                function(
                    "sp_256_mont_mul_4",
                    runner,
                    "/x/release/build/wolfssl-sys-1/out/wolfssl-src/wolfcrypt/src/sp_x86_64_asm.S",
                ),
                Class::Crypto,
            ),
            ("wolfssl", function("wc_AesGcmEncrypt", runner, "???"), Class::Crypto),
            (
                "gnutls",
                function("_dl_runtime_resolve_xsave", "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", "???"),
                Class::Other,
            ),
            // A release's OpenSSL, linked statically and built without debug information.
            ("openssl@3.5", function("tls_process_client_hello", static_runner, "???"), Class::Tls),
            ("openssl@3.5", function("SSL_do_handshake", static_runner, "???"), Class::Tls),
            ("openssl@3.5", function("ossl_statem_accept", static_runner, "???"), Class::Tls),
            ("openssl@3.5", function("EVP_DigestSignFinal", static_runner, "???"), Class::Crypto),
            ("openssl@3.5", function("sha256_block_data_order_avx2", static_runner, "???"), Class::Crypto),
            ("openssl@3.5", function("CRYPTO_THREAD_read_lock", static_runner, "???"), Class::Crypto),
            (
                "openssl@3.5",
                function("pthread_rwlock_rdlock", "/usr/lib/x86_64-linux-gnu/libc.so.6", "???"),
                Class::Libc,
            ),
            (
                "openssl@3.5",
                function("tlsbench_harness::step::x", static_runner, "/work/main/crates/harness/src/step.rs"),
                Class::Harness,
            ),
        ];
        for (stack, function, class) in cases {
            assert_eq!(StackLibraries::of(stack).unwrap().classify(&function), class, "{stack}: {}", function.name);
        }
    }

    #[test]
    fn a_static_openssl_without_debug_info_is_split_by_libssls_symbols() {
        let runner = "/x/target/versions/openssl@1.1.1/tlsbench-runner-openssl-static";
        let registry = "/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f";
        let libraries = StackLibraries::of("openssl@1.1.1").unwrap();
        let cases = [
            (function("SSL_do_handshake", runner, "???"), Class::Tls),
            (function("state_machine", runner, "???"), Class::Tls),
            (function("tls13_enc", runner, "???"), Class::Tls),
            (function("ossl_statem_client_read_transition", runner, "???"), Class::Tls),
            (function("do_ssl3_write", runner, "???"), Class::Tls),
            (function("WPACKET_reserve_bytes", runner, "???"), Class::Tls),
            (function("custom_exts_free", runner, "???"), Class::Tls),
            (function("aesni_gcm_encrypt", runner, "???"), Class::Crypto),
            (function("x25519_fe64_mul", runner, "???"), Class::Crypto),
            (function("EVP_DigestSignFinal", runner, "???"), Class::Crypto),
            (function("malloc", runner, "/work/wt/crates/harness/src/heap.rs"), Class::Allocator),
            (function("CRYPTO_malloc", runner, "???"), Class::Crypto),
            (
                function(
                    "openssl::ssl::SslStream::read",
                    runner,
                    &format!("{registry}/openssl-0.10.82/src/ssl/mod.rs"),
                ),
                Class::Tls,
            ),
            (function("tlsbench_harness::driver::x", runner, "/work/wt/crates/harness/src/driver.rs"), Class::Harness),
            (function("core::ptr::drop_in_place", runner, "/rustc/abc/library/core/src/ptr/mod.rs"), Class::Other),
            (function("memcpy", "/usr/lib/x86_64-linux-gnu/libc.so.6", "???"), Class::Libc),
        ];
        for (function, class) in cases {
            assert_eq!(libraries.classify(&function), class, "{}", function.name);
        }
        // Unsourced code elsewhere than the static runner is not taken for OpenSSL's.
        let unsourced = function("x25519_fe64_mul", "/x/target/release/tlsbench-runner-openssl", "???");
        assert_eq!(libraries.classify(&unsourced), Class::Other);
    }
}
