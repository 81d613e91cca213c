//! What one load thread counted of TLS and HTTP/2 in a recorded phase: data only, so that the
//! recorder can hold it without depending on the protocol worker ([`crate::proto`]), which
//! turns it into the result's protocol block.

/// What one thread counted of the protocol in a recorded phase.
#[derive(Debug, Default, Clone)]
pub(crate) struct ProtoTally {
    pub handshakes: u64,
    pub resumed: u64,
    pub handshake_total_us: u64,
    pub handshake_max_us: u64,
    /// Bit 0: TLS 1.2 seen, bit 1: TLS 1.3, bit 2: another.
    pub versions: u8,
    /// Bit 0: ALPN `http/1.1` negotiated, bit 1: `h2`.
    pub alpn: u8,
    pub rst_stream: u64,
    pub goaway: u64,
    pub stream_waits: u64,
    /// Smallest stream limit in force on a connection (0: none seen yet).
    pub max_streams: u64,
}

impl ProtoTally {
    /// Adds another thread's counts.
    pub fn add(&mut self, o: &ProtoTally) {
        self.handshakes += o.handshakes;
        self.resumed += o.resumed;
        self.handshake_total_us += o.handshake_total_us;
        self.handshake_max_us = self.handshake_max_us.max(o.handshake_max_us);
        self.versions |= o.versions;
        self.alpn |= o.alpn;
        self.rst_stream += o.rst_stream;
        self.goaway += o.goaway;
        self.stream_waits += o.stream_waits;
        self.max_streams = match (self.max_streams, o.max_streams) {
            (0, b) => b,
            (a, 0) => a,
            (a, b) => a.min(b),
        };
    }
}
