//! Which AWS-LC this build links, for the library string: the crate that builds it (aws-lc-sys,
//! or aws-lc-fips-sys for the FIPS module) and its release. Its `links` name carries the
//! release (`aws_lc_0_41_0`), and openssl-sys passes on the include directory of the one it is
//! built on: that is the one named, so that the string cannot name another AWS-LC of the build.

fn main() {
    // Without the feature `aws-lc` or `fips` the crate is empty (see Cargo.toml): nothing to say.
    if std::env::var_os("CARGO_FEATURE_AWS_LC").is_none() && std::env::var_os("CARGO_FEATURE_FIPS").is_none() {
        return;
    }
    let openssl_include = std::env::var("DEP_OPENSSL_INCLUDE").expect("openssl-sys names its include directory");
    assert_eq!(
        std::env::var("DEP_OPENSSL_AWSLC").as_deref(),
        Ok("true"),
        "openssl-sys is not built on AWS-LC (its feature `aws-lc` or `aws-lc-fips`)"
    );
    let linked = std::env::vars()
        .filter(|(_, value)| *value == openssl_include)
        .find_map(|(name, _)| aws_lc_crate(&name))
        .expect("openssl-sys's include directory is that of an AWS-LC this crate depends on");
    println!("cargo:rustc-env=AWS_LC_SYS_CRATE={linked}");
}

/// `aws-lc-sys 0.41.0` for `DEP_AWS_LC_0_41_0_INCLUDE`, `aws-lc-fips-sys 0.13.3` for
/// `DEP_AWS_LC_FIPS_0_13_3_INCLUDE`.
fn aws_lc_crate(variable: &str) -> Option<String> {
    let links = variable.strip_prefix("DEP_AWS_LC_")?.strip_suffix("_INCLUDE")?;
    let (krate, release) = match links.strip_prefix("FIPS_") {
        Some(release) => ("aws-lc-fips-sys", release),
        None => ("aws-lc-sys", links),
    };
    let parts: Vec<&str> = release.split('_').collect();
    (parts.len() == 3 && parts.iter().all(|p| p.parse::<u32>().is_ok())).then(|| format!("{krate} {}", parts.join(".")))
}
