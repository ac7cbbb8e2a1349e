//! Certificates generated at runtime: per key type, a root CA, an intermediate and a server
//! leaf for [`SERVER_NAME`], cached in a data directory (never in the source tree, so an
//! installed binary works). Private keys are readable by their owner only.

use std::fs;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose, RsaKeySize,
};

use crate::KeyType;

/// The host name in every server certificate; clients verify it.
pub const SERVER_NAME: &str = "server.tlsbench.test";

/// Bump when the layout or the certificates' content changes, so old caches are not reused.
const LAYOUT: &str = "pki-v1";

/// One key type's credentials, as PEM.
#[derive(Clone, Debug)]
pub struct Credentials {
    /// The root the client trusts.
    pub ca_pem: String,
    /// Leaf then intermediate: what the server sends.
    pub chain_pem: String,
    /// The leaf's private key (PKCS#8).
    pub key_pem: String,
}

/// All key types' credentials.
#[derive(Clone, Debug)]
pub struct Pki {
    by_key: Vec<(KeyType, Credentials)>,
}

impl Pki {
    /// Loads the cached certificates from `data_dir`, generating what is missing.
    pub fn load_or_generate(data_dir: &Path) -> Result<Pki, String> {
        let root = data_dir.join(LAYOUT);
        let mut by_key = Vec::new();
        for &key in KeyType::ALL {
            let dir = root.join(key.name());
            if !dir.join("server.key").exists() {
                generate_into(key, &dir).map_err(|e| format!("generating {key} certificates in {}: {e}", dir.display()))?;
            }
            let read = |file: &str| {
                fs::read_to_string(dir.join(file)).map_err(|e| format!("reading {}: {e}", dir.join(file).display()))
            };
            let credentials = Credentials { ca_pem: read("ca.pem")?, chain_pem: read("chain.pem")?, key_pem: read("server.key")? };
            by_key.push((key, credentials));
        }
        Ok(Pki { by_key })
    }

    pub fn server(&self, key: KeyType) -> &Credentials {
        // `load_or_generate` fills every key type, so the lookup cannot miss.
        &self.by_key.iter().find(|(k, _)| *k == key).expect("every key type is loaded").1
    }
}

/// Where tlsbench keeps its data: `$TLSBENCH_DATA_DIR`, else `$XDG_DATA_HOME/tlsbench`, else
/// `~/.local/share/tlsbench`.
pub fn default_data_dir() -> PathBuf {
    let env = |name| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    env("TLSBENCH_DATA_DIR")
        .or_else(|| env("XDG_DATA_HOME").map(|d| d.join("tlsbench")))
        .or_else(|| env("HOME").map(|d| d.join(".local/share/tlsbench")))
        .unwrap_or_else(|| std::env::temp_dir().join("tlsbench"))
}

/// Generates into a sibling temporary directory and renames it into place, so that a crash or
/// a concurrent runner never sees half a set.
fn generate_into(key: KeyType, dir: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let parent = dir.parent().expect("dir is under the layout root");
    fs::DirBuilder::new().recursive(true).mode(0o700).create(parent)?;
    let staging = parent.join(format!(".{}-{}", key.name(), std::process::id()));
    let _ = fs::remove_dir_all(&staging);
    fs::DirBuilder::new().mode(0o700).create(&staging)?;

    let new_key = || match key {
        KeyType::Rsa2048 => KeyPair::generate_rsa_for(&rcgen::PKCS_RSA_SHA256, RsaKeySize::_2048),
        KeyType::EcdsaP256 => KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256),
    };
    let ca_params = |name: &str| -> Result<CertificateParams, rcgen::Error> {
        let mut params = CertificateParams::new(Vec::new())?;
        params.distinguished_name.push(DnType::CommonName, name);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        Ok(params)
    };

    let root = CertifiedIssuer::self_signed(ca_params(&format!("tlsbench {key} root CA"))?, new_key()?)?;
    let intermediate =
        CertifiedIssuer::signed_by(ca_params(&format!("tlsbench {key} intermediate CA"))?, new_key()?, &root)?;

    let mut leaf_params = CertificateParams::new(vec![SERVER_NAME.to_string()])?;
    leaf_params.distinguished_name.push(DnType::CommonName, SERVER_NAME);
    leaf_params.use_authority_key_identifier_extension = true;
    leaf_params.key_usages = vec![KeyUsagePurpose::DigitalSignature, KeyUsagePurpose::KeyEncipherment];
    leaf_params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    let leaf_key = new_key()?;
    let leaf = leaf_params.signed_by(&leaf_key, &intermediate)?;

    write_file(&staging.join("ca.pem"), &root.pem(), 0o644)?;
    write_file(&staging.join("chain.pem"), &(leaf.pem() + &intermediate.pem()), 0o644)?;
    write_file(&staging.join("server.key"), &leaf_key.serialize_pem(), 0o600)?;
    match fs::rename(&staging, dir) {
        Ok(()) => Ok(()),
        // Another process finished first: its set is as good as ours.
        Err(_) if dir.join("server.key").exists() => Ok(fs::remove_dir_all(&staging)?),
        Err(e) => Err(e.into()),
    }
}

fn write_file(path: &Path, contents: &str, mode: u32) -> std::io::Result<()> {
    let mut file = fs::OpenOptions::new().write(true).create_new(true).mode(mode).open(path)?;
    file.write_all(contents.as_bytes())
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn generates_once_then_reuses_with_private_keys_for_the_owner_only() {
        let dir = tempfile::tempdir().unwrap();
        let first = Pki::load_or_generate(dir.path()).unwrap();
        let second = Pki::load_or_generate(dir.path()).unwrap();
        for &key in KeyType::ALL {
            assert_eq!(first.server(key).key_pem, second.server(key).key_pem, "{key} was regenerated");
            assert!(first.server(key).key_pem.starts_with("-----BEGIN PRIVATE KEY-----"));
            assert_eq!(first.server(key).chain_pem.matches("BEGIN CERTIFICATE").count(), 2);
            let key_file = dir.path().join(LAYOUT).join(key.name()).join("server.key");
            let mode = fs::metadata(key_file).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "{key} private key mode");
        }
    }
}
