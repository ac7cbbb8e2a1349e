//! Certificates generated at runtime: per key type, a root CA, an intermediate, a server leaf
//! for [`SERVER_NAME`] and a client leaf, cached in a data directory (never in the source tree,
//! so an installed binary works). Private keys are readable by their owner only.

use std::fs;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
    KeyUsagePurpose, RsaKeySize,
};

use crate::KeyType;

/// The host name in every server certificate; clients verify it.
pub const SERVER_NAME: &str = "server.tlsbench.test";
/// The subject of every client certificate.
pub const CLIENT_NAME: &str = "client.tlsbench.test";

/// Bump when the layout or the certificates' content changes, so old caches are not reused.
const LAYOUT: &str = "pki-v2";

/// One key type's credentials, as PEM.
#[derive(Clone, Debug)]
pub struct Credentials {
    /// The root the client trusts.
    pub ca_pem: String,
    /// Leaf then intermediate: what the server sends.
    pub chain_pem: String,
    /// The leaf's private key (PKCS#8).
    pub key_pem: String,
    /// The client's leaf then the intermediate, issued by the same root.
    pub client_chain_pem: String,
    pub client_key_pem: String,
}

/// All key types' credentials.
#[derive(Clone, Debug)]
pub struct Pki {
    by_key: Vec<(KeyType, Credentials)>,
}

impl Pki {
    /// Loads the cached certificates of `keys` from `data_dir`, generating what is missing.
    pub fn load_or_generate(data_dir: &Path, keys: &[KeyType]) -> Result<Pki, String> {
        let root = data_dir.join(LAYOUT);
        let mut by_key = Vec::new();
        for &key in keys {
            let dir = root.join(key.name());
            if !dir.join(COMPLETE).exists() {
                generate_into(key, &dir)
                    .map_err(|e| format!("generating {key} certificates in {}: {e}", dir.display()))?;
            }
            let read = |file: &str| {
                fs::read_to_string(dir.join(file)).map_err(|e| format!("reading {}: {e}", dir.join(file).display()))
            };
            let credentials = Credentials {
                ca_pem: read("ca.pem")?,
                chain_pem: read("chain.pem")?,
                key_pem: read("server.key")?,
                client_chain_pem: read("client-chain.pem")?,
                client_key_pem: read("client.key")?,
            };
            by_key.push((key, credentials));
        }
        Ok(Pki { by_key })
    }

    /// The credentials of a key type that was loaded.
    pub fn credentials(&self, key: KeyType) -> Result<&Credentials, String> {
        match self.by_key.iter().find(|(k, _)| *k == key) {
            Some((_, credentials)) => Ok(credentials),
            None => Err(format!("the {key} certificates were not loaded")),
        }
    }
}

/// Written last into a key type's directory: its presence means the set is whole.
const COMPLETE: &str = "client.key";

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
        KeyType::Rsa3072 => KeyPair::generate_rsa_for(&rcgen::PKCS_RSA_SHA256, RsaKeySize::_3072),
        KeyType::Rsa4096 => KeyPair::generate_rsa_for(&rcgen::PKCS_RSA_SHA256, RsaKeySize::_4096),
        KeyType::EcdsaP256 => KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256),
        KeyType::EcdsaP384 => KeyPair::generate_for(&rcgen::PKCS_ECDSA_P384_SHA384),
        KeyType::Ed25519 => ed25519_pkcs8_v1(),
    };
    let ca_params = |name: &str| -> Result<CertificateParams, rcgen::Error> {
        let mut params = CertificateParams::new(Vec::new())?;
        params.distinguished_name.push(DnType::CommonName, name);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        Ok(params)
    };
    let leaf_params = |name: &str, usage: ExtendedKeyUsagePurpose| -> Result<CertificateParams, rcgen::Error> {
        let mut params = CertificateParams::new(vec![name.to_string()])?;
        params.distinguished_name.push(DnType::CommonName, name);
        params.use_authority_key_identifier_extension = true;
        params.key_usages = match key.is_rsa() {
            true => vec![KeyUsagePurpose::DigitalSignature, KeyUsagePurpose::KeyEncipherment],
            false => vec![KeyUsagePurpose::DigitalSignature],
        };
        params.extended_key_usages = vec![usage];
        Ok(params)
    };

    let root = CertifiedIssuer::self_signed(ca_params(&format!("tlsbench {key} root CA"))?, new_key()?)?;
    let intermediate =
        CertifiedIssuer::signed_by(ca_params(&format!("tlsbench {key} intermediate CA"))?, new_key()?, &root)?;
    let (leaf_key, client_key) = (new_key()?, new_key()?);
    let leaf = leaf_params(SERVER_NAME, ExtendedKeyUsagePurpose::ServerAuth)?.signed_by(&leaf_key, &intermediate)?;
    let client =
        leaf_params(CLIENT_NAME, ExtendedKeyUsagePurpose::ClientAuth)?.signed_by(&client_key, &intermediate)?;

    write_file(&staging.join("ca.pem"), &root.pem(), 0o644)?;
    write_file(&staging.join("chain.pem"), &(leaf.pem() + &intermediate.pem()), 0o644)?;
    write_file(&staging.join("server.key"), &leaf_key.serialize_pem(), 0o600)?;
    write_file(&staging.join("client-chain.pem"), &(client.pem() + &intermediate.pem()), 0o644)?;
    write_file(&staging.join(COMPLETE), &client_key.serialize_pem(), 0o600)?;
    match fs::rename(&staging, dir) {
        Ok(()) => Ok(()),
        // Another process finished first: its set is as good as ours.
        Err(_) if dir.join(COMPLETE).exists() => Ok(fs::remove_dir_all(&staging)?),
        Err(e) => Err(e.into()),
    }
}

/// An Ed25519 key in PKCS#8 v1: OpenSSL 3.0 cannot read the v2 form (with the public key)
/// that rcgen writes.
fn ed25519_pkcs8_v1() -> Result<KeyPair, rcgen::Error> {
    let rng = aws_lc_rs::rand::SystemRandom::new();
    let document =
        aws_lc_rs::signature::Ed25519KeyPair::generate_pkcs8v1(&rng).map_err(|_| rcgen::Error::RingUnspecified)?;
    let der = rustls_pki_types::PrivatePkcs8KeyDer::from(document.as_ref());
    KeyPair::from_pkcs8_der_and_sign_algo(&der, &rcgen::PKCS_ED25519)
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
        let first = Pki::load_or_generate(dir.path(), KeyType::ALL).unwrap();
        let second = Pki::load_or_generate(dir.path(), KeyType::ALL).unwrap();
        for &key in KeyType::ALL {
            let (a, b) = (first.credentials(key).unwrap(), second.credentials(key).unwrap());
            assert_eq!(a.key_pem, b.key_pem, "{key} was regenerated");
            assert!(a.key_pem.starts_with("-----BEGIN PRIVATE KEY-----"));
            assert_ne!(a.key_pem, a.client_key_pem);
            assert_eq!(a.chain_pem.matches("BEGIN CERTIFICATE").count(), 2);
            assert_eq!(a.client_chain_pem.matches("BEGIN CERTIFICATE").count(), 2);
            for file in ["server.key", "client.key"] {
                let path = dir.path().join(LAYOUT).join(key.name()).join(file);
                let mode = fs::metadata(path).unwrap().permissions().mode() & 0o777;
                assert_eq!(mode, 0o600, "{key} {file} mode");
            }
        }
    }

    #[test]
    fn only_the_key_types_asked_for_are_generated() {
        let dir = tempfile::tempdir().unwrap();
        let pki = Pki::load_or_generate(dir.path(), &[KeyType::EcdsaP256]).unwrap();
        assert!(pki.credentials(KeyType::EcdsaP256).is_ok());
        assert_eq!(pki.credentials(KeyType::Rsa4096).unwrap_err(), "the rsa-4096 certificates were not loaded");
        assert!(!dir.path().join(LAYOUT).join("rsa-4096").exists());
    }
}
