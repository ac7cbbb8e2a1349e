package main

// A TCP socket as crypto/tls's net.Conn (crates/harness/src/net/socket.rs): non-blocking, each
// Read and Write one syscall on the descriptor itself, counted. A read that finds nothing
// (EAGAIN) suspends a running handshake's coroutine, or else says "would block" as the
// in-memory transport does; the event loop resumes the connection when poll says the socket is
// readable. A write hands every byte to the kernel before it returns, waiting for room in the
// send buffer (poll for POLLOUT, counted) when it is full, as the Rust runners' transport does.

import (
	"fmt"
	"io"
	"net"
	"syscall"
	"time"
	"unsafe"
)

type sock struct {
	fd      int
	counts  socketCounts
	records recordCounter
	// eof: a read returned 0, the peer closed its side; reset: a read found the connection
	// reset (a peer that closes with SO_LINGER 0).
	eof, reset bool
	// closed: the connection is being torn down; every call fails.
	closed       bool
	writeTimeout time.Duration
	blocking     *handshaker
}

func newSock(fd int, writeTimeout time.Duration) *sock {
	return &sock{fd: fd, writeTimeout: writeTimeout}
}

func (s *sock) peerGone() bool { return s.eof || s.reset }

func (s *sock) yieldTo(h *handshaker) { s.blocking = h }

// recv and send are recvfrom(2) and sendto(2) as Rust's TcpStream makes them (send with
// MSG_NOSIGNAL). The socket never blocks, so they are raw syscalls: nothing for the Go
// scheduler to do around them.
func recv(fd int, b []byte) (int, syscall.Errno) {
	n, _, errno := syscall.RawSyscall6(syscall.SYS_RECVFROM,
		uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)), 0, 0, 0)
	return int(n), errno
}

func send(fd int, b []byte) (int, syscall.Errno) {
	n, _, errno := syscall.RawSyscall6(syscall.SYS_SENDTO,
		uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)), syscall.MSG_NOSIGNAL, 0, 0)
	return int(n), errno
}

func (s *sock) Read(b []byte) (int, error) {
	for {
		if s.closed {
			return 0, net.ErrClosed
		}
		n, errno := recv(s.fd, b)
		s.counts.Reads++
		switch errno {
		case 0:
			s.counts.BytesRead += uint64(n)
			if n == 0 && len(b) > 0 {
				s.eof = true
				return 0, io.EOF
			}
			return n, nil
		case syscall.EAGAIN:
			s.counts.EmptyReads++
			if s.blocking == nil {
				return 0, errWouldBlock
			}
			if !s.blocking.wait() {
				return 0, errStopped
			}
		case syscall.ECONNRESET:
			s.reset = true
			return 0, errno
		default:
			return 0, errno
		}
	}
}

// Write writes all of b: one send, and, only when the kernel takes part of it, one per
// remaining piece, waiting for room in between.
func (s *sock) Write(b []byte) (int, error) {
	var deadline time.Time
	written := 0
	for written < len(b) {
		if s.closed {
			return written, net.ErrClosed
		}
		n, errno := send(s.fd, b[written:])
		s.counts.Writes++
		switch errno {
		case 0:
			s.counts.BytesWritten += uint64(n)
			s.records.feed(b[written : written+n])
			s.counts.RecordsWritten = s.records.records
			written += n
			continue
		case syscall.EAGAIN:
		default:
			return written, errno
		}
		if deadline.IsZero() {
			deadline = time.Now().Add(s.writeTimeout)
		}
		if err := s.waitForRoom(deadline); err != nil {
			return written, err
		}
	}
	return written, nil
}

func (s *sock) waitForRoom(deadline time.Time) error {
	left := time.Until(deadline)
	if left <= 0 {
		return fmt.Errorf("the peer read nothing for %v while this side was writing", s.writeTimeout)
	}
	fds := [1]pollFd{{fd: int32(s.fd), events: pollOut}}
	_, err := poll(fds[:], max(left, time.Millisecond), &s.counts.WriteWaits)
	return err
}

// shutdown ends the connection: its socket is closed, counted as the harness counts the
// close when a connection is dropped.
func (s *sock) shutdown() {
	s.closed = true
	if s.fd >= 0 {
		s.counts.Other++
		syscall.Close(s.fd)
		s.fd = -1
	}
}

// Close does nothing: the event loop closes the socket (shutdown) when it drops the
// connection; crypto/tls's Close is never called.
func (s *sock) Close() error                       { return nil }
func (s *sock) LocalAddr() net.Addr                { return &net.TCPAddr{} }
func (s *sock) RemoteAddr() net.Addr               { return &net.TCPAddr{} }
func (s *sock) SetDeadline(t time.Time) error      { return nil }
func (s *sock) SetReadDeadline(t time.Time) error  { return nil }
func (s *sock) SetWriteDeadline(t time.Time) error { return nil }

// recordCounter counts TLS records in a stream of written bytes from their 5-byte headers,
// across writes.
type recordCounter struct {
	headerLen uint8   // header bytes seen of the next record (0 to 4)
	length    [2]byte // the header's two length bytes as far as seen
	bodyLeft  int     // body bytes of the current record still to come
	records   uint64
}

func (r *recordCounter) feed(b []byte) {
	for len(b) > 0 {
		if r.bodyLeft > 0 {
			n := min(r.bodyLeft, len(b))
			r.bodyLeft -= n
			b = b[n:]
			continue
		}
		if r.headerLen >= 3 {
			r.length[r.headerLen-3] = b[0]
		}
		r.headerLen++
		b = b[1:]
		if r.headerLen == 5 {
			r.headerLen = 0
			r.bodyLeft = int(r.length[0])<<8 | int(r.length[1])
			r.records++
		}
	}
}
