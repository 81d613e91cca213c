//! The TLS client side: a rustls configuration built once per run (trust anchors: a CA file,
//! the Mozilla set, or none with an explicit insecure skip), and the classification of
//! handshake failures into the result's error classes. rustls is driven over the worker's
//! own non-blocking sockets (`read_tls` / `write_tls`), so the event loop stays the one that
//! runs cleartext HTTP.

use std::path::PathBuf;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{ring, verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};

use crate::error::{Error, Result};
use crate::recorder::Failure;

pub use crate::protocol::TlsOptions;

/// The client configuration of a run: ALPN `alpn`, session resumption on (rustls'
/// in-memory cache, shared by the run's connections).
pub fn client_config(opts: &TlsOptions, alpn: &[u8]) -> Result<Arc<ClientConfig>> {
    let provider = Arc::new(ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::InvalidConfig(format!("failed to set up TLS: {e}")))?;
    let mut config = if opts.insecure_skip_verify {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(SkipVerify(provider)))
            .with_no_client_auth()
    } else {
        builder
            .with_root_certificates(roots(opts.ca_file.as_ref())?)
            .with_no_client_auth()
    };
    config.alpn_protocols = vec![alpn.to_vec()];
    Ok(Arc::new(config))
}

fn roots(ca_file: Option<&PathBuf>) -> Result<RootCertStore> {
    let mut roots = RootCertStore::empty();
    let Some(path) = ca_file else {
        roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        return Ok(roots);
    };
    let bad = |reason: String| Error::InvalidConfig(format!("CA file {path:?}: {reason}"));
    for cert in CertificateDer::pem_file_iter(path).map_err(|e| bad(e.to_string()))? {
        roots
            .add(cert.map_err(|e| bad(e.to_string()))?)
            .map_err(|e| bad(e.to_string()))?;
    }
    if roots.is_empty() {
        return Err(bad("no certificate in it".into()));
    }
    Ok(roots)
}

/// The server name to send: as given, else the URL's host (without brackets or port).
pub fn server_name(opts: &TlsOptions, url_host: &str) -> Result<ServerName<'static>> {
    let host = opts.server_name.clone().unwrap_or_else(|| {
        let h = match url_host.rsplit_once(':') {
            Some((h, p)) if !p.contains(']') && p.bytes().all(|b| b.is_ascii_digit()) => h,
            _ => url_host,
        };
        h.trim_start_matches('[').trim_end_matches(']').to_string()
    });
    ServerName::try_from(host.clone())
        .map_err(|e| Error::InvalidConfig(format!("invalid TLS server name {host:?}: {e}")))
}

/// The error class of a failed handshake.
pub(crate) fn classify(e: &rustls::Error) -> Failure {
    use rustls::AlertDescription as A;
    match e {
        rustls::Error::InvalidCertificate(_) => Failure::TlsCertificate,
        rustls::Error::NoApplicationProtocol
        | rustls::Error::AlertReceived(A::NoApplicationProtocol) => Failure::AlpnMismatch,
        _ => Failure::TlsHandshake,
    }
}

/// The name of a negotiated version, as the result reports it.
pub(crate) fn version_name(v: rustls::ProtocolVersion) -> &'static str {
    match v {
        rustls::ProtocolVersion::TLSv1_3 => "TLSv1_3",
        rustls::ProtocolVersion::TLSv1_2 => "TLSv1_2",
        _ => "other",
    }
}

/// `--insecure-skip-verify`: any certificate is accepted, but the handshake's signatures are
/// still checked (the connection is encrypted, only the peer is not authenticated).
#[derive(Debug)]
struct SkipVerify(Arc<CryptoProvider>);

impl ServerCertVerifier for SkipVerify {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_server_name_defaults_to_the_urls_host_without_port() {
        let o = TlsOptions::default();
        assert_eq!(
            server_name(&o, "example.com:8443").unwrap(),
            ServerName::try_from("example.com").unwrap()
        );
        assert_eq!(
            server_name(&o, "127.0.0.1").unwrap(),
            ServerName::try_from("127.0.0.1").unwrap()
        );
        assert_eq!(
            server_name(&o, "[::1]:443").unwrap(),
            ServerName::try_from("::1").unwrap()
        );
        let named = TlsOptions {
            server_name: Some("demo.local".into()),
            ..o
        };
        assert_eq!(
            server_name(&named, "127.0.0.1:1").unwrap(),
            ServerName::try_from("demo.local").unwrap()
        );
    }

    #[test]
    fn handshake_errors_fall_into_certificate_alpn_and_other() {
        let cert = rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer);
        assert_eq!(classify(&cert), Failure::TlsCertificate);
        let alpn = rustls::Error::AlertReceived(rustls::AlertDescription::NoApplicationProtocol);
        assert_eq!(classify(&alpn), Failure::AlpnMismatch);
        let other = rustls::Error::AlertReceived(rustls::AlertDescription::HandshakeFailure);
        assert_eq!(classify(&other), Failure::TlsHandshake);
    }
}
