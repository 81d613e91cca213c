//! A ring of provided receive buffers (`IORING_REGISTER_PBUF_RING`, 5.19): the kernel picks
//! a free buffer when data arrives, so one multishot receive per connection stays armed for
//! the connection's life and only the buffers in use hold memory.

use std::io;
use std::sync::atomic::{AtomicU16, Ordering};

use io_uring::types::BufRingEntry;
use io_uring::IoUring;

/// The buffer group of the ring.
pub(crate) const GROUP: u16 = 0;

/// Buffers shared by a ring's connections, registered as buffer group [`GROUP`].
pub(crate) struct BufRing {
    /// The ring of entries, `entries` long, page-aligned (mmap).
    entries_ptr: *mut BufRingEntry,
    entries: u16,
    /// The local tail: where the next returned buffer goes.
    tail: u16,
    /// The buffers, `size` bytes each.
    bufs: Box<[u8]>,
    size: usize,
}

impl BufRing {
    /// Registers `entries` (a power of two) buffers of `size` bytes with `ring`.
    pub fn new(ring: &IoUring, entries: u16, size: usize) -> io::Result<Self> {
        let bytes = usize::from(entries) * std::mem::size_of::<BufRingEntry>();
        // SAFETY: an anonymous private mapping; checked for failure below.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let mut this = BufRing {
            entries_ptr: ptr.cast(),
            entries,
            tail: 0,
            bufs: vec![0; usize::from(entries) * size].into_boxed_slice(),
            size,
        };
        // SAFETY: the mapping is page-aligned, `entries` long and lives as long as `this`,
        // which the ring's owner drops only after the ring.
        unsafe {
            ring.submitter()
                .register_buf_ring_with_flags(ptr as u64, entries, GROUP, 0)?
        };
        for bid in 0..entries {
            this.put(bid);
        }
        this.publish();
        Ok(this)
    }

    /// The first `len` bytes of buffer `bid`.
    pub fn data(&self, bid: u16, len: usize) -> &[u8] {
        let start = usize::from(bid) * self.size;
        &self.bufs[start..start + len.min(self.size)]
    }

    /// Hands buffer `bid` back to the kernel (visible after [`BufRing::publish`]).
    pub fn put(&mut self, bid: u16) {
        let mask = self.entries - 1;
        // SAFETY: the index is within the mapping; the kernel reads entries only up to the
        // published tail, which does not cover this one yet.
        let entry = unsafe { &mut *self.entries_ptr.add(usize::from(self.tail & mask)) };
        let addr = self.bufs.as_ptr() as u64 + (usize::from(bid) * self.size) as u64;
        entry.set_addr(addr);
        entry.set_len(self.size as u32);
        entry.set_bid(bid);
        self.tail = self.tail.wrapping_add(1);
    }

    /// Makes the buffers put back so far visible to the kernel.
    pub fn publish(&self) {
        // SAFETY: the tail field lies in the first entry of the mapping; the kernel reads it
        // with acquire semantics, so a release store orders the entries written before it.
        let tail = unsafe { &*(BufRingEntry::tail(self.entries_ptr).cast::<AtomicU16>()) };
        tail.store(self.tail, Ordering::Release);
    }
}

impl Drop for BufRing {
    fn drop(&mut self) {
        let bytes = usize::from(self.entries) * std::mem::size_of::<BufRingEntry>();
        // SAFETY: the mapping made in `new`, no longer registered (the ring is gone).
        unsafe { libc::munmap(self.entries_ptr.cast(), bytes) };
    }
}
