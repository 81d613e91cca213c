//! The TLS side of the demo target: a certificate (self-signed, made at start with rcgen, or
//! read from PEM files) and the server configuration offering `h2` and `http/1.1` by ALPN
//! (or fewer, to play a server that does not speak HTTP/2).

use std::path::Path;
use std::sync::Arc;

use anyhow::Context as _;
use tokio_rustls::rustls::crypto::ring;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::TlsAcceptor;

/// A certificate chain and its key.
pub struct Identity {
    /// The chain, leaf first.
    pub chain: Vec<CertificateDer<'static>>,
    /// The leaf's private key.
    pub key: PrivateKeyDer<'static>,
    /// The leaf as PEM (to hand to clients as their CA file when self-signed).
    pub pem: String,
}

/// A self-signed certificate for `names` (DNS names or IP addresses).
pub fn self_signed(names: &[String]) -> anyhow::Result<Identity> {
    let certified = rcgen::generate_simple_self_signed(names.to_vec())
        .context("failed to generate a self-signed certificate")?;
    Ok(Identity {
        chain: vec![certified.cert.der().clone()],
        key: PrivatePkcs8KeyDer::from(certified.key_pair.serialize_der()).into(),
        pem: certified.cert.pem(),
    })
}

/// A certificate chain and key from PEM files.
pub fn from_files(cert: &Path, key: &Path) -> anyhow::Result<Identity> {
    let pem = std::fs::read_to_string(cert).with_context(|| format!("failed to read {cert:?}"))?;
    let chain = CertificateDer::pem_slice_iter(pem.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .with_context(|| format!("failed to parse {cert:?}"))?;
    let key =
        PrivateKeyDer::from_pem_file(key).with_context(|| format!("failed to read {key:?}"))?;
    Ok(Identity { chain, key, pem })
}

/// An acceptor serving `identity` and offering the ALPN protocols `alpn` (e.g. `h2`,
/// `http/1.1`), in order of preference.
pub fn acceptor(identity: Identity, alpn: &[String]) -> anyhow::Result<TlsAcceptor> {
    let mut config = ServerConfig::builder_with_provider(Arc::new(ring::default_provider()))
        .with_safe_default_protocol_versions()
        .context("failed to set up TLS")?
        .with_no_client_auth()
        .with_single_cert(identity.chain, identity.key)
        .context("failed to use the certificate")?;
    config.alpn_protocols = alpn.iter().map(|p| p.as_bytes().to_vec()).collect();
    Ok(TlsAcceptor::from(Arc::new(config)))
}
