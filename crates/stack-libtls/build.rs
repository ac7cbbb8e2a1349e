//! libtls has no runtime version call, so the version of LibreTLS this build links is read from
//! pkg-config and compiled in; the library itself is linked by name.

use std::process::Command;

fn main() {
    let output = Command::new("pkg-config").args(["--modversion", "libtls"]).output();
    let version = match output {
        Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout).trim().to_string(),
        // scripts/setup.sh installs libtls-dev; without it the link fails below with its own message.
        _ => "unknown".to_string(),
    };
    println!("cargo:rustc-env=LIBTLS_VERSION={version}");
    println!("cargo:rustc-link-lib=tls");
    println!("cargo:rerun-if-changed=build.rs");
}
